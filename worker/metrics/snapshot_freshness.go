package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/commitea/commitea/store"
)

// SnapshotFreshness reports every project's freshness (store.ProjectFreshness
// in serve). It runs at scrape time, so the figures are current on every
// replica, API-only ones included.
type SnapshotFreshness func(ctx context.Context) ([]store.Freshness, error)

var (
	snapshotAge = prometheus.NewDesc("commitea_snapshot_age_seconds",
		"Seconds since the project's latest snapshot was computed (absent while it has none).", []string{"project"}, nil)
	snapshotChangesBehind = prometheus.NewDesc("commitea_snapshot_changes_behind",
		"Mirror changes the project's latest snapshot does not include yet (0 when it covers the latest change).", []string{"project"}, nil)
	snapshotSecondsBehind = prometheus.NewDesc("commitea_snapshot_seconds_behind",
		"Seconds the project's mirror has held a change its latest snapshot lacks (0 when it covers the latest change); "+
			"the same figure /readyz?fresh=1 compares with forecast.max_lag.", []string{"project"}, nil)
)

// freshnessCollector asks its source at every scrape, one read for the
// three gauges; a failing or missing source exports nothing rather than
// stale figures.
type freshnessCollector struct {
	mu  sync.Mutex
	src SnapshotFreshness
	now func() time.Time
}

var snapshotFreshness = &freshnessCollector{now: time.Now}

// SetSnapshotFreshness installs the source of commitea_snapshot_age_seconds,
// commitea_snapshot_changes_behind and commitea_snapshot_seconds_behind;
// nil removes it.
func SetSnapshotFreshness(f SnapshotFreshness) {
	snapshotFreshness.mu.Lock()
	defer snapshotFreshness.mu.Unlock()
	snapshotFreshness.src = f
}

func (c *freshnessCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- snapshotAge
	ch <- snapshotChangesBehind
	ch <- snapshotSecondsBehind
}

func (c *freshnessCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	src := c.src
	c.mu.Unlock()
	if src == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	fs, err := src(ctx)
	if err != nil {
		return
	}
	now := c.now()
	for _, f := range fs {
		if f.SnapshotVersion > 0 {
			ch <- prometheus.MustNewConstMetric(snapshotAge, prometheus.GaugeValue, f.SnapshotAge(now).Seconds(), f.Project)
		}
		ch <- prometheus.MustNewConstMetric(snapshotChangesBehind, prometheus.GaugeValue, float64(f.ChangesBehind), f.Project)
		ch <- prometheus.MustNewConstMetric(snapshotSecondsBehind, prometheus.GaugeValue, f.Behind.Seconds(), f.Project)
	}
}
