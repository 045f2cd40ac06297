package store_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
)

func TestMigrateIsIdempotentAndCurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	// The template is already migrated; a second run must be a no-op.
	if err := store.Migrate(ctx, pool, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatalf("migrate again: %v", err)
	}
	ok, err := store.MigrationsCurrent(ctx, pool)
	if err != nil || !ok {
		t.Fatalf("migrations current = %v, %v; want true", ok, err)
	}
}

func TestUpsertIssueKeepsNewest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "ceo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)
	newer := store.Issue{Number: 1, Title: "new", State: "open", CreatedAt: t0, UpdatedAt: t0.Add(time.Hour), Labels: []string{"est/m"}}
	older := newer
	older.Title, older.UpdatedAt = "old", t0
	if err := store.UpsertIssues(ctx, pool, p.ID, []store.IssueWrite{{Issue: newer, Delivery: "d2"}}); err != nil {
		t.Fatal(err)
	}
	if err := store.UpsertIssues(ctx, pool, p.ID, []store.IssueWrite{{Issue: older, Delivery: "d1"}}); err != nil {
		t.Fatal(err)
	}
	got, err := store.GetIssue(ctx, pool, p.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "new" || len(got.Labels) != 1 {
		t.Fatalf("late, older write overwrote newer row: %+v", got)
	}
	if _, err := store.GetIssue(ctx, pool, p.ID, 99); err == nil {
		t.Fatal("missing issue: want ErrNotFound")
	}
}

func TestInsertDeliveriesDedupes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	ds := []store.Delivery{{ID: "a", Event: "issues", Payload: []byte("{}")}, {ID: "a", Event: "issues", Payload: []byte("{}")}, {ID: "b", Event: "push", Payload: []byte("{}")}}
	fresh, err := store.InsertDeliveries(ctx, pool, ds)
	if err != nil {
		t.Fatal(err)
	}
	if len(fresh) != 2 {
		t.Fatalf("fresh = %v, want a and b", fresh)
	}
	fresh, err = store.InsertDeliveries(ctx, pool, ds[:1])
	if err != nil || len(fresh) != 0 {
		t.Fatalf("replayed delivery was fresh again: %v %v", fresh, err)
	}
}

// TestDeliveredMilestoneCopyKeepsNewest: a delivery's copy of a milestone
// was rendered when its issue event happened, so one that arrives after an
// edit written through (set_deadline_hard) must not put the milestone back;
// a later copy, or a copy of a milestone not yet mirrored, is written.
func TestDeliveredMilestoneCopyKeepsNewest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "ceo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	t1 := t0.Add(2 * time.Second)
	edited := store.Milestone{ID: 7, Title: "v1", Description: "scope\ndeadline: hard", State: "open", UpdatedAt: &t1}
	stale := edited
	stale.Description, stale.UpdatedAt = "scope", &t0
	description := func() string {
		t.Helper()
		ms, err := store.Milestones(ctx, pool, p.ID)
		if err != nil || len(ms) != 1 {
			t.Fatalf("milestones: %v %v", ms, err)
		}
		return ms[0].Description
	}
	deliver := func(m store.Milestone) {
		t.Helper()
		mb := store.NewMirrorBatch(p.ID)
		mb.Milestone(m)
		if err := mb.Run(ctx, pool); err != nil {
			t.Fatal(err)
		}
	}
	deliver(stale) // not mirrored yet: the copy is all there is
	if got := description(); got != "scope" {
		t.Fatalf("first copy: description %q", got)
	}
	if err := store.UpsertMilestones(ctx, pool, p.ID, []store.Milestone{edited}); err != nil {
		t.Fatal(err)
	}
	deliver(stale)
	if got := description(); got != edited.Description {
		t.Fatalf("a copy older than the edit wrote the milestone back: description %q, want %q", got, edited.Description)
	}
	t2 := t1.Add(time.Second)
	later := edited
	later.Description, later.UpdatedAt = "scope, edited in Gitea", &t2
	deliver(later)
	if got := description(); got != later.Description {
		t.Fatalf("a later copy was not written: description %q", got)
	}
}

// TestUpsertIssueAPIReadWinsTheSecond: every webhook of one change carries
// the change's updated_at (whole seconds), each rendered at a step of it;
// a write-through of the final state read from the API must not be undone
// by such a delivery arriving after it, while deliveries of one second
// still apply in order and a later second always wins.
func TestUpsertIssueAPIReadWinsTheSecond(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "ceo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 2, 2, 0, 0, 0, time.UTC)
	row := func(assignees ...string) store.Issue {
		return store.Issue{Number: 1, Title: "t", State: "open", CreatedAt: t0, UpdatedAt: t0, Assignees: assignees}
	}
	write := func(is store.Issue, delivery string) {
		t.Helper()
		if err := store.UpsertIssues(ctx, pool, p.ID, []store.IssueWrite{{Issue: is, Delivery: delivery}}); err != nil {
			t.Fatal(err)
		}
	}
	assignees := func() []string {
		t.Helper()
		got, err := store.GetIssue(ctx, pool, p.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		return got.Assignees
	}
	write(row("ada"), "d0")
	write(row(), "d1") // unassigned bea: a step
	if got := assignees(); len(got) != 0 {
		t.Fatalf("deliveries of one second apply in order: %v", got)
	}
	write(row("ada", "cyd"), "") // the write-through of the final state
	write(row("ada"), "d2")      // a late step of the same change
	if got := assignees(); len(got) != 2 {
		t.Fatalf("a late delivery of the same second undid the API read: %v", got)
	}
	later := row("bea")
	later.UpdatedAt = t0.Add(time.Second)
	write(later, "d3")
	if got := assignees(); len(got) != 1 || got[0] != "bea" {
		t.Fatalf("a later delivery did not win: %v", got)
	}
}
