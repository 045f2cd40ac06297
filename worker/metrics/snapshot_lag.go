package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// SnapshotLag is how far one project's snapshot is behind its mirror.
type SnapshotLag struct {
	Project       string // "owner/repo"
	ChangesBehind int64
	Behind        time.Duration
}

// SnapshotLags reports every project's lag; like SnapshotTimes it runs at
// scrape time.
type SnapshotLags func(ctx context.Context) ([]SnapshotLag, error)

var (
	snapshotChangesBehind = prometheus.NewDesc("commitea_snapshot_changes_behind",
		"Mirror changes the project's latest snapshot does not include yet (0 when it covers the latest change).", []string{"project"}, nil)
	snapshotSecondsBehind = prometheus.NewDesc("commitea_snapshot_seconds_behind",
		"Seconds the project's mirror has held a change its latest snapshot lacks (0 when it covers the latest change); "+
			"the same figure /readyz?fresh=1 compares with forecast.max_lag.", []string{"project"}, nil)
)

// snapshotLagCollector asks SnapshotLags at every scrape; a failing or
// missing source exports nothing rather than a stale lag.
type snapshotLagCollector struct {
	mu  sync.Mutex
	src SnapshotLags
}

var snapshotLags = &snapshotLagCollector{}

// SetSnapshotLags installs the source of commitea_snapshot_changes_behind
// and commitea_snapshot_seconds_behind.
func SetSnapshotLags(f SnapshotLags) {
	snapshotLags.mu.Lock()
	defer snapshotLags.mu.Unlock()
	snapshotLags.src = f
}

func (c *snapshotLagCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- snapshotChangesBehind
	ch <- snapshotSecondsBehind
}

func (c *snapshotLagCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	src := c.src
	c.mu.Unlock()
	if src == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	lags, err := src(ctx)
	if err != nil {
		return
	}
	for _, l := range lags {
		ch <- prometheus.MustNewConstMetric(snapshotChangesBehind, prometheus.GaugeValue, float64(l.ChangesBehind), l.Project)
		ch <- prometheus.MustNewConstMetric(snapshotSecondsBehind, prometheus.GaugeValue, l.Behind.Seconds(), l.Project)
	}
}
