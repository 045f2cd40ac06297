package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker/metrics"
)

// TestReadyzReportsLag is the other half of finding 1 of issue #12: with
// the forecast frozen behind the mirror, /readyz said ready and nothing
// told a monitor. /readyz stays 200 for a load balancer and lists the lag;
// ?fresh=1 answers 503 beyond forecast.max_lag; /metrics has the same.
func TestReadyzReportsLag(t *testing.T) {
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "acme", "lag")
	if err != nil {
		t.Fatal(err)
	}
	report := func(ctx context.Context) ([]ProjectFreshness, error) {
		fs, err := store.ProjectFreshness(ctx, pool)
		out := make([]ProjectFreshness, len(fs))
		for i, f := range fs {
			out[i] = ProjectFreshness{Project: f.Project, Ready: f.Ready(), SnapshotVersion: f.SnapshotVersion,
				ChangesBehind: f.ChangesBehind, SecondsBehind: f.Behind.Seconds(), SnapshotAgeSeconds: f.SnapshotAge(time.Now()).Seconds()}
		}
		return out, err
	}
	h := NewRouter(Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Freshness: report, MaxLag: time.Minute})
	get := func(path string) (int, readyzBody) {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		var b readyzBody
		if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
			t.Fatalf("%s: %v: %s", path, err, rec.Body)
		}
		if len(b.Projects) != 1 {
			t.Fatalf("%s lists %d projects: %s", path, len(b.Projects), rec.Body)
		}
		return rec.Code, b
	}
	bump := func() {
		t.Helper()
		if err := store.BumpChangeCounters(ctx, pool, []int64{p.ID}); err != nil {
			t.Fatal(err)
		}
	}

	// Importing: no snapshot, not ready. A load balancer still routes.
	bump()
	if code, b := get("/readyz"); code != http.StatusOK || b.Projects[0].Ready {
		t.Fatalf("importing: /readyz %d %+v", code, b)
	}
	if code, b := get("/readyz?fresh=1"); code != http.StatusServiceUnavailable || b.Status != "stale" {
		t.Fatalf("importing: /readyz?fresh=1 %d %+v", code, b)
	}

	// Backfilled and recomputed: covers the latest change.
	now := time.Now()
	if err := store.PutSyncState(ctx, pool, store.SyncState{ProjectID: p.ID, LastSyncedAt: &now, BackfillDoneAt: &now}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.PutSnapshot(ctx, pool, store.Snapshot{ProjectID: p.ID, InputsHash: "h", ChangeCounter: 1, Data: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	code, b := get("/readyz?fresh=1")
	if code != http.StatusOK || !b.Projects[0].Ready || b.Projects[0].ChangesBehind != 0 || b.Projects[0].SecondsBehind != 0 {
		t.Fatalf("current: /readyz?fresh=1 %d %+v", code, b)
	}

	// Two changes the snapshot lacks, the first ten minutes old (a
	// stalled recompute): ready for a load balancer, stale for a monitor.
	bump()
	bump()
	if _, err := pool.Exec(ctx, `UPDATE projects SET behind_since = now() - interval '10 minutes' WHERE id = $1`, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE snapshots SET computed_at = now() - interval '11 minutes' WHERE project_id = $1`, p.ID); err != nil {
		t.Fatal(err)
	}
	if code, b := get("/readyz"); code != http.StatusOK || b.Projects[0].ChangesBehind != 2 {
		t.Fatalf("behind: /readyz %d %+v", code, b)
	}
	code, b = get("/readyz?fresh=1")
	if code != http.StatusServiceUnavailable || b.Projects[0].ChangesBehind != 2 || b.Projects[0].SecondsBehind < 590 || b.MaxLagSeconds != 60 {
		t.Fatalf("behind: /readyz?fresh=1 %d %+v", code, b)
	}
	t.Logf("stale answer: %s", b.Reason)

	metrics.SetSnapshotFreshness(func(ctx context.Context) ([]store.Freshness, error) {
		return store.ProjectFreshness(ctx, pool)
	})
	defer metrics.SetSnapshotFreshness(nil)
	m := scrape(t, h)
	if got := m[`commitea_snapshot_changes_behind{project="acme/lag"}`]; got != 2 {
		t.Errorf("changes behind gauge = %v, want 2", got)
	}
	if got := m[`commitea_snapshot_seconds_behind{project="acme/lag"}`]; got < 590 {
		t.Errorf("seconds behind gauge = %v, want about 600", got)
	}

	// The recompute that covers them ends the lag.
	if _, err := store.PutSnapshot(ctx, pool, store.Snapshot{ProjectID: p.ID, InputsHash: "h2", ChangeCounter: 3, Data: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if code, b := get("/readyz?fresh=1"); code != http.StatusOK || b.Projects[0].SecondsBehind != 0 {
		t.Fatalf("caught up: /readyz?fresh=1 %d %+v", code, b)
	}
}
