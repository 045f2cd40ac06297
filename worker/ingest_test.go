package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker/gitea"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newIngestFixture(t *testing.T) (*store.Pool, *Ingester, store.Project) {
	t.Helper()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "ceo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	// A project fed by webhooks alone, as if its (empty) first backfill
	// had run: a recompute publishes only after one.
	if err := storetest.MarkBackfilled(ctx, pool, p.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	jobs, err := NewJobClient(pool, JobClientConfig{Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	in := NewIngester(pool, jobs, []store.Project{p}, quietLog(), IngesterConfig{})
	return pool, in, p
}

func issueChange(n int64, title string, at time.Time) gitea.Change {
	return gitea.Change{Event: "issues", Action: "opened", Repo: "ceo/demo", Issue: &store.Issue{
		Number: n, Title: title, State: "open", CreatedAt: at, UpdatedAt: at,
	}}
}

func count(t *testing.T, pool *store.Pool, sql string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestIngestCoalescesJobsAndDedupes(t *testing.T) {
	t.Parallel()
	pool, in, _ := newIngestFixture(t)
	in.Start()
	defer in.Close()
	ctx := context.Background()
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Every delivery is sent twice, as Gitea's redelivery would.
			d := Incoming{DeliveryID: fmt.Sprintf("d-%d", i), Payload: []byte(`{}`), Change: issueChange(int64(i%10+1), fmt.Sprint("t", i), at.Add(time.Duration(i)*time.Second))}
			errs <- in.Submit(ctx, d)
			errs <- in.Submit(ctx, d)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, pool, `SELECT count(*) FROM deliveries`); n != 50 {
		t.Fatalf("deliveries = %d, want 50", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM issues`); n != 10 {
		t.Fatalf("issues = %d, want 10", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM river_job WHERE kind = 'recompute'`); n != 1 {
		t.Fatalf("recompute jobs = %d, want the burst coalesced into 1", n)
	}
	if n := count(t, pool, `SELECT change_counter FROM projects`); n < 1 {
		t.Fatalf("change counter did not move")
	}
}

func TestIngestFailureWritesNothing(t *testing.T) {
	t.Parallel()
	pool, in, _ := newIngestFixture(t)
	boom := errors.New("killed mid-transaction")
	in.afterWrite = func(context.Context, store.Tx) error { return boom }
	in.Start()
	defer in.Close()
	at := time.Now().UTC()
	err := in.Submit(context.Background(), Incoming{DeliveryID: "x", Payload: []byte(`{}`), Change: issueChange(1, "a", at)})
	if !errors.Is(err, boom) {
		t.Fatalf("submit err = %v, want the injected failure", err)
	}
	for _, table := range []string{"deliveries", "issues", "river_job"} {
		if n := count(t, pool, "SELECT count(*) FROM "+table); n != 0 {
			t.Fatalf("%s has %d rows after a failed ingest; want none", table, n)
		}
	}
}

func TestIngestCancelledMidTransactionWritesNothing(t *testing.T) {
	t.Parallel()
	pool, in, _ := newIngestFixture(t)
	// The connection dies while the transaction is open: terminate our own
	// backend from the inside, as a crash or a closed pool would.
	in.afterWrite = func(ctx context.Context, tx store.Tx) error {
		_, err := tx.Exec(ctx, `SELECT pg_terminate_backend(pg_backend_pid())`)
		return err
	}
	in.Start()
	defer in.Close()
	err := in.Submit(context.Background(), Incoming{DeliveryID: "y", Payload: []byte(`{}`), Change: issueChange(1, "a", time.Now().UTC())})
	if err == nil {
		t.Fatal("submit succeeded on a killed connection")
	}
	for _, table := range []string{"deliveries", "issues", "river_job"} {
		if n := count(t, pool, "SELECT count(*) FROM "+table); n != 0 {
			t.Fatalf("%s has %d rows after a killed ingest; want none", table, n)
		}
	}
}

func TestIngestUnconfiguredRepoIsStoredAndIgnored(t *testing.T) {
	t.Parallel()
	pool, in, _ := newIngestFixture(t)
	in.Start()
	defer in.Close()
	c := issueChange(1, "a", time.Now().UTC())
	c.Repo = "someone/else"
	if err := in.Submit(context.Background(), Incoming{DeliveryID: "z", Payload: []byte(`{}`), Change: c}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, `SELECT count(*) FROM deliveries WHERE ignored <> ''`); n != 1 {
		t.Fatalf("ignored deliveries = %d, want 1", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM issues`); n != 0 {
		t.Fatalf("an unconfigured repository wrote %d issues", n)
	}
}

func TestIngestCloseAnswersQueued(t *testing.T) {
	t.Parallel()
	_, in, _ := newIngestFixture(t)
	in.Start()
	in.Close()
	err := in.Submit(context.Background(), Incoming{DeliveryID: "late", Payload: []byte(`{}`), Change: issueChange(1, "a", time.Now().UTC())})
	if !errors.Is(err, ErrIngestClosed) {
		t.Fatalf("submit after close = %v, want ErrIngestClosed", err)
	}
}
