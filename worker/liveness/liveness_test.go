package liveness_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/liveness"
)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// orphan makes job id look like what a killed process leaves: running,
// last attempted by client.
func orphan(t *testing.T, pool *store.Pool, id int64, client string) {
	t.Helper()
	_, err := pool.Exec(context.Background(), `UPDATE river_job SET state = 'running', attempt = 1,
		attempted_at = now(), attempted_by = ARRAY[$2::text] WHERE id = $1`, id, client)
	if err != nil {
		t.Fatal(err)
	}
}

func jobState(t *testing.T, pool *store.Pool, id int64) string {
	t.Helper()
	var s string
	if err := pool.QueryRow(context.Background(), `SELECT state::text FROM river_job WHERE id = $1`, id).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDeadProcessRecomputeFreedAtOnce is finding 1 of issue #12: a kill -9
// mid-recompute left the job running; its uniqueness merged every later
// recompute into it, and River rescues only after its window (an hour by
// default), so the snapshot stayed behind the mirror. With the keeper the
// dead job runs again within seconds, and a recompute held by a live
// process is left alone until that process is gone.
func TestDeadProcessRecomputeFreedAtOnce(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, pool := storetest.NewDB(t)
	dead, err := store.EnsureProject(ctx, pool, "acme", "dead")
	if err != nil {
		t.Fatal(err)
	}
	live, err := store.EnsureProject(ctx, pool, "acme", "live")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []store.Project{dead, live} { // imported: a recompute publishes
		if err := storetest.MarkBackfilled(ctx, pool, p.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	workers := river.NewWorkers()
	engine := &worker.Forecaster{Pool: pool, Log: quiet(), Trials: 50}
	river.AddWorker(workers, &worker.RecomputeWorker{Pool: pool, Recomputer: engine, Log: quiet()})
	jobs, err := worker.NewJobClient(pool, worker.JobClientConfig{Work: true, Workers: workers, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}

	// The dead process's job, and one of a process still alive (it holds
	// its lock).
	insert := func(p store.Project) *rivertype.JobInsertResult {
		t.Helper()
		res, err := jobs.Insert(ctx, worker.RecomputeArgs{ProjectID: p.ID}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	deadJob, liveJob := insert(dead).Job.ID, insert(live).Job.ID
	orphan(t, pool, deadJob, "killed-process")
	aliveLock, err := store.HoldLiveness(ctx, pool, "live-process")
	if err != nil {
		t.Fatal(err)
	}
	orphan(t, pool, liveJob, "live-process")
	if !insert(dead).UniqueSkippedAsDuplicate {
		t.Fatal("a new recompute was not merged into the dead one: the test no longer shows the blockage")
	}

	keeper := &liveness.Keeper{Pool: pool, ClientID: jobs.ID(), Log: quiet(), Interval: 100 * time.Millisecond}
	if err := keeper.Hold(ctx); err != nil {
		t.Fatal(err)
	}
	kctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); keeper.Run(kctx) }()
	defer func() { stop(); <-done }()
	if err := jobs.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = jobs.Stop(context.Background()) }()

	start := time.Now()
	for jobState(t, pool, deadJob) != "completed" {
		if time.Since(start) > 20*time.Second {
			t.Fatalf("the dead process's recompute is still %s after %s", jobState(t, pool, deadJob), time.Since(start))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("dead process's recompute freed and completed in %s", time.Since(start).Round(time.Millisecond))
	if _, err := store.LatestSnapshot(ctx, pool, dead.ID); err != nil {
		t.Fatalf("no snapshot after the rescued recompute: %v", err)
	}
	if insert(dead).UniqueSkippedAsDuplicate {
		t.Fatal("a new recompute is still merged after the rescue")
	}
	// The live process's job was never touched.
	time.Sleep(500 * time.Millisecond)
	if s := jobState(t, pool, liveJob); s != "running" {
		t.Fatalf("a live process's running job became %s", s)
	}
	// Once that process is gone too, its job runs.
	aliveLock.Release()
	start = time.Now()
	for jobState(t, pool, liveJob) != "completed" {
		if time.Since(start) > 20*time.Second {
			t.Fatalf("the released process's recompute is still %s", jobState(t, pool, liveJob))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestKeeperTakesItsLockAgain: a terminated backend takes the keeper's lock
// with it; the next check takes it again, so other keepers see the process
// as alive.
func TestKeeperTakesItsLockAgain(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, pool := storetest.NewDB(t)
	k := &liveness.Keeper{Pool: pool, ClientID: "me", Log: quiet()}
	if err := k.Hold(ctx); err != nil {
		t.Fatal(err)
	}
	defer k.Release()
	held := func() bool {
		var n int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
			AND ((classid::bigint << 32) | objid::bigint) = hashtextextended('commitea liveness me', 0)`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	if !held() {
		t.Fatal("lock not held after Hold")
	}
	if _, err := pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'
		AND ((classid::bigint << 32) | objid::bigint) = hashtextextended('commitea liveness me', 0)`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if held() {
		t.Fatal("lock survived its backend")
	}
	if err := k.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if !held() {
		t.Fatal("Check did not take the lock again")
	}
}
