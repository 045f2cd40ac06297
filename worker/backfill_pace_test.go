package worker

import (
	"context"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/gitea/giteafake"
)

// paceNow ends the generated histories of the pace tests.
var paceNow = time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)

// paceProject is a small generated project: enough issues for several
// checkpoints, few enough for a test.
var paceProject = giteafake.Project{Seed: 5, Now: paceNow, HistoryDays: 45, Backlog: 2}

// backfillInto backfills the fake's project into a fresh database with
// the given concurrency and returns what it wrote.
func backfillInto(t *testing.T, fake *giteafake.Server, concurrency int) string {
	t.Helper()
	ctx := context.Background()
	pool, p := backfillFake(t, fake, paceNow, func(s *Syncer) { s.Checkpoint, s.Concurrency = 7, concurrency })
	m, err := store.LoadMirror(ctx, pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	hist, err := store.IssueHistory(ctx, pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := store.Transitions(ctx, pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Issues) < 30 || len(m.Timeline) == 0 || len(ts) == 0 {
		t.Fatalf("backfill wrote %d issues, %d timeline events, %d transitions", len(m.Issues), len(m.Timeline), len(ts))
	}
	return asJSON(t, m) + asJSON(t, hist) + asJSON(t, ts)
}

// A concurrent backfill reads several issues at once and writes exactly
// what a sequential one writes.
func TestBackfillConcurrentMatchesSequential(t *testing.T) {
	t.Parallel()
	fake, err := giteafake.New(giteafake.Options{Generate: &paceProject, Latency: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	sequential := backfillInto(t, fake, 1)
	if peak := fake.PeakInFlight(); peak != 1 {
		t.Fatalf("sequential backfill had %d requests in flight", peak)
	}
	concurrent := backfillInto(t, fake, 6)
	if peak := fake.PeakInFlight(); peak < 2 || peak > 6 {
		t.Errorf("concurrent backfill (6) peaked at %d requests in flight", peak)
	}
	if concurrent != sequential {
		t.Error("the concurrent backfill wrote something else than the sequential one")
	}
}

// Against a forge that rate-limits, the backfill waits out each 429 and
// completes with what it writes unchanged.
func TestBackfillWaitsOutRateLimit(t *testing.T) {
	t.Parallel()
	plain, err := giteafake.New(giteafake.Options{Generate: &paceProject})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	want := backfillInto(t, plain, 8)

	// 60 requests a second: the backfill (151 requests) meets the limit in
	// some window on a quiet machine. On a loaded one (a CI train at load
	// 15) it ran below 60 a second and was never limited, proving nothing,
	// so the limit tightens until it answers 429; at 4 a second the first
	// 8 concurrent detail reads exceed it however slow the machine is.
	for _, perSecond := range []int{60, 20, 4} {
		limited, err := giteafake.New(giteafake.Options{Generate: &paceProject, RateLimit: &giteafake.RateLimit{Requests: perSecond, Window: time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		got := backfillInto(t, limited, 8)
		limited.Close()
		if limited.Limited() == 0 {
			t.Logf("at %d requests a second the backfill was never limited; tightening", perSecond)
			continue
		}
		if got != want {
			t.Errorf("the backfill limited to %d requests a second wrote something else", perSecond)
		}
		served := len(limited.Requests()) - limited.Limited()
		t.Logf("at %d requests a second: %d requests served, %d answered 429", perSecond, served, limited.Limited())
		return
	}
	t.Fatal("the rate limit never answered 429, even at 4 requests a second")
}
