package tools_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/tools"
)

// TestCacheFollowsTheDatabase checks the read cache: within Fresh it
// answers without looking, Invalidate makes it look, and a moved change
// counter or snapshot version reloads what moved.
func TestCacheFollowsTheDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	pool, p, f := seededProject(t, "ceo", "demo", storetest.ProjectShape{Open: 10, Done: 5, People: 2, Milestones: 1, Seed: 1}, now, 100)
	log := f.Log
	svc := tools.NewService(pool, []store.Project{p}, log)
	svc.Fresh, svc.Stale = time.Hour, 2*time.Hour
	reg := svc.Registry()
	caller := tools.Caller{Name: "t", Scopes: []string{tools.ScopeRead}}
	board := func() (string, int64) {
		t.Helper()
		env, terr := reg.Call(ctx, caller, "query_project", json.RawMessage(`{"view":"board","filters":{"limit":100}}`))
		if terr != nil {
			t.Fatal(terr)
		}
		b, _ := json.Marshal(env.Data)
		return string(b), env.Data.(tools.BoardView).Snapshot.Version
	}
	first, v1 := board()
	if !strings.Contains(first, "Open work 6") {
		t.Fatalf("board lacks issue 6: %s", first)
	}
	// Rename issue 6 in the mirror, as an ingest would.
	i6, err := store.GetIssue(ctx, pool, p.ID, 6)
	if err != nil {
		t.Fatal(err)
	}
	i6.Title, i6.UpdatedAt = "Renamed work", i6.UpdatedAt.Add(time.Minute)
	if err := store.UpsertIssues(ctx, pool, p.ID, []store.IssueWrite{{Issue: i6}}); err != nil {
		t.Fatal(err)
	}
	if err := store.BumpChangeCounters(ctx, pool, []int64{p.ID}); err != nil {
		t.Fatal(err)
	}
	if got, _ := board(); strings.Contains(got, "Renamed work") {
		t.Fatal("the cache looked at the database within Fresh")
	}
	svc.Invalidate(p.ID)
	if got, v := board(); !strings.Contains(got, "Renamed work") || v != v1 {
		t.Fatalf("after Invalidate: renamed %v, version %d (want %d)", strings.Contains(got, "Renamed work"), v, v1)
	}
	if err := f.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	svc.Invalidate(p.ID)
	if _, v := board(); v != v1+1 {
		t.Fatalf("snapshot version = %d after a recompute, want %d", v, v1+1)
	}

	// Past Fresh and within Stale: the answer comes from the cache at once
	// and a background check catches up.
	svc.Fresh = time.Nanosecond
	i6.Title, i6.UpdatedAt = "Renamed again", i6.UpdatedAt.Add(time.Minute)
	if err := store.UpsertIssues(ctx, pool, p.ID, []store.IssueWrite{{Issue: i6}}); err != nil {
		t.Fatal(err)
	}
	if err := store.BumpChangeCounters(ctx, pool, []int64{p.ID}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, _ := board()
		if strings.Contains(got, "Renamed again") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background check never caught up")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAnswerSaysHowFreshItsSnapshotIs: every query answer carried the
// snapshot version only, so an agent served a forecast frozen behind the
// mirror (issue #12) could not tell. It now carries the snapshot's age and
// whether it covers the mirror's latest change.
func TestAnswerSaysHowFreshItsSnapshotIs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	pool, p, f := seededProject(t, "ceo", "fresh", storetest.ProjectShape{Open: 4, Done: 3, People: 1, Seed: 2}, now, 50)
	log := f.Log
	svc := tools.NewService(pool, []store.Project{p}, log)
	reg := svc.Registry()
	caller := tools.Caller{Name: "t", Scopes: []string{tools.ScopeRead}}
	ref := func() map[string]any {
		t.Helper()
		svc.Invalidate(p.ID)
		env, terr := reg.Call(ctx, caller, "query_project", json.RawMessage(`{"view":"board"}`))
		if terr != nil {
			t.Fatal(terr)
		}
		var body struct {
			Snapshot map[string]any `json:"snapshot"`
		}
		b, _ := json.Marshal(env.Data)
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatal(err)
		}
		return body.Snapshot
	}
	got := ref()
	if got["coversLatest"] != true || got["changesBehind"] != nil {
		t.Fatalf("fresh snapshot: %v", got)
	}
	if age, ok := got["ageMinutes"].(float64); !ok || age != 0 {
		t.Fatalf("fresh snapshot age: %v", got)
	}
	if err := store.BumpChangeCounters(ctx, pool, []int64{p.ID}); err != nil {
		t.Fatal(err)
	}
	if got := ref(); got["coversLatest"] != false || got["changesBehind"] != float64(1) {
		t.Fatalf("after a change the snapshot lacks: %v", got)
	}
}

// TestNotReadyUntilFirstBackfill is finding 7 of issue #12: a recompute a
// delivery triggered during the first backfill left a snapshot of the
// half-imported mirror, and tools served it as ready. A project answers
// NOT_READY, saying the import is running, until its first backfill
// completed (the sync state's marker); the recompute publishes nothing
// before it either (worker.TestNoSnapshotBeforeTheFirstBackfill).
func TestNotReadyUntilFirstBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "ceo", "importing")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	// Half imported: a few issues in, no marker yet.
	if err := store.UpsertIssues(ctx, pool, p.ID, []store.IssueWrite{{Issue: store.Issue{Number: 1, Title: "First of many", State: "open",
		CreatedAt: now.AddDate(0, 0, -3), UpdatedAt: now, LastActivityAt: now}}}); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	f := &worker.Forecaster{Pool: pool, Log: log, Trials: 20, Now: func() time.Time { return now }}
	if err := f.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	svc := tools.NewService(pool, []store.Project{p}, log)
	reg := svc.Registry()
	caller := tools.Caller{Name: "t", Scopes: []string{tools.ScopeRead}}
	_, terr := reg.Call(ctx, caller, "query_project", json.RawMessage(`{"view":"board"}`))
	if terr == nil || terr.Code != tools.CodeNotReady {
		t.Fatalf("a snapshot of a half-imported mirror was served: %v", terr)
	}
	if !strings.Contains(terr.Message, "import") {
		t.Errorf("NOT_READY does not say why: %s", terr.Message)
	}
	if err := storetest.MarkBackfilled(ctx, pool, p.ID, now); err != nil {
		t.Fatal(err)
	}
	if err := f.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	svc.Invalidate(p.ID)
	if _, terr := reg.Call(ctx, caller, "query_project", json.RawMessage(`{"view":"board"}`)); terr != nil {
		t.Fatalf("after the first backfill: %v", terr)
	}
}
