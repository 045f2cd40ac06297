package worker

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
)

// largeTeam is n people cycling through the demo team's speeds and
// calendars, each with a login of their own.
func largeTeam(n int) []giteafake.Person {
	base := giteafake.DemoTeam()
	out := make([]giteafake.Person, n)
	for i := range out {
		p := base[i%len(base)]
		p.Login = fmt.Sprintf("%s%d", p.Login, i)
		p.TimeOff = nil
		out[i] = p
	}
	return out
}

// BenchmarkBackfillAtForgeLatency is the backfill benchmark: a
// generated project of about 5,000 issues and pull requests (30 people,
// two and a half years, most of it closed with its timelines), served by a
// fake forge answering every API request after 20 ms, backfilled once one
// request at a time and once at the default concurrency, back to back in
// each iteration. Reports the medians and their ratio, and the requests
// one backfill makes. Run with -benchtime=1x: an iteration is minutes.
func BenchmarkBackfillAtForgeLatency(b *testing.B) {
	ctx := context.Background()
	now := time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	gen := giteafake.Project{Seed: 11, Now: now, Team: largeTeam(30), HistoryDays: 900, Backlog: 60}
	fake, err := giteafake.New(giteafake.Options{Generate: &gen, Latency: 20 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer fake.Close()
	client, err := gitea.New(fake.URL, fake.Token(), gitea.Options{})
	if err != nil {
		b.Fatal(err)
	}
	run := func(concurrency int) (time.Duration, int) {
		_, pool := storetest.NewDB(b)
		p, err := store.EnsureProject(ctx, pool, "acme", "teapot")
		if err != nil {
			b.Fatal(err)
		}
		s := &Syncer{Pool: pool, Gitea: client, Log: quietLog(), Replayer: LifecycleReplayer{},
			Now: func() time.Time { return now }, Concurrency: concurrency}
		var total int
		s.Progress = func(_, n int) { total = n }
		fake.ResetRequests()
		start := time.Now()
		if err := s.Backfill(ctx, p); err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		b.Logf("concurrency %d: %d issues, %d requests, %s", concurrency, total, len(fake.Requests()), took.Round(time.Millisecond))
		return took, len(fake.Requests())
	}
	var seq, conc []time.Duration
	var requests int
	b.ResetTimer()
	for b.Loop() {
		s, _ := run(1)
		c, n := run(DefaultSyncConcurrency)
		seq, conc, requests = append(seq, s), append(conc, c), n
	}
	median := func(ds []time.Duration) time.Duration {
		ds = slices.Clone(ds)
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	ms, mc := median(seq), median(conc)
	b.ReportMetric(ms.Seconds(), "sequential-s")
	b.ReportMetric(mc.Seconds(), "concurrent-s")
	b.ReportMetric(float64(ms)/float64(mc), "speedup")
	b.ReportMetric(float64(requests), "requests")
}
