package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// snapshotAgeCollector asks SnapshotTimes at every scrape; a failing or
// missing source exports nothing rather than a stale age.
type snapshotAgeCollector struct {
	mu  sync.Mutex
	src SnapshotTimes
	now func() time.Time
}

var snapshotAges = &snapshotAgeCollector{now: time.Now}

func (c *snapshotAgeCollector) set(f SnapshotTimes) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.src = f
}

func (c *snapshotAgeCollector) Describe(ch chan<- *prometheus.Desc) { ch <- snapshotAge }

func (c *snapshotAgeCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	src := c.src
	c.mu.Unlock()
	if src == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	times, err := src(ctx)
	if err != nil {
		return
	}
	now := c.now()
	for project, at := range times {
		ch <- prometheus.MustNewConstMetric(snapshotAge, prometheus.GaugeValue, now.Sub(at).Seconds(), project)
	}
}
