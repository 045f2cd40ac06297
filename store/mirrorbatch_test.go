package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
)

// TestMirrorBatchKeepsQueueOrderPerIssue: a batch is written as a few
// multi-row statements, yet several deliveries to one issue apply in the
// order they were queued (the last upsert's fields, a comment's activity
// between two upserts, one history version per upsert), and text arrays
// with quotes, backslashes, commas and a label named NULL survive the
// array literals they travel in.
func TestMirrorBatchKeepsQueueOrderPerIssue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "ceo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)
	odd := []string{`say "hi"`, `back\slash`, "a,b", "NULL", "{brace}", ""}
	first := store.Issue{Number: 7, Title: "first", State: "open", CreatedAt: t0, UpdatedAt: t0, Labels: []string{"est/m"}}
	second := first
	second.Title, second.UpdatedAt, second.Labels, second.Assignees = "second", t0.Add(time.Minute), odd, []string{"ann", `b"ob`}
	second.ClosingRefs = []int64{3, 1}
	other := store.Issue{Number: 2, Title: "other", State: "open", CreatedAt: t0, UpdatedAt: t0}

	mb := store.NewMirrorBatch(p.ID)
	mb.Issue(store.IssueWrite{Issue: first, Delivery: "d1"})
	mb.Comment(store.Comment{ID: 70, Issue: 7, Author: "ann", Body: "seen", CreatedAt: t0.Add(30 * time.Second), UpdatedAt: t0.Add(30 * time.Second)})
	mb.Touch(7, t0.Add(30*time.Second), "d2")
	mb.Issue(store.IssueWrite{Issue: other, Delivery: "d3"})
	mb.Issue(store.IssueWrite{Issue: second, Delivery: "d4"})
	mb.Touch(7, t0.Add(45*time.Second), "d5")
	mb.Label(store.Label{ID: 2, Name: "two"})
	mb.Label(store.Label{ID: 1, Name: "one"})
	mb.Milestone(store.Milestone{ID: 9, Title: "m", State: "open"})
	if err := mb.Run(ctx, pool); err != nil {
		t.Fatal(err)
	}

	got, err := store.GetIssue(ctx, pool, p.ID, 7)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "second" || !slices.Equal(got.Labels, odd) || !slices.Equal(got.Assignees, second.Assignees) ||
		!slices.Equal(got.ClosingRefs, second.ClosingRefs) {
		t.Fatalf("issue 7 = %+v, want the second upsert's fields", got)
	}
	var lastDelivery string
	var activity time.Time
	if err := pool.QueryRow(ctx, `SELECT last_delivery, last_activity_at FROM issues WHERE project_id = $1 AND number = 7`, p.ID).
		Scan(&lastDelivery, &activity); err != nil {
		t.Fatal(err)
	}
	// d5's touch came last; the second upsert's updated_at is later than it.
	if lastDelivery != "d5" || !activity.Equal(t0.Add(time.Minute)) {
		t.Fatalf("last delivery %q at %s, want d5 and the second upsert's time", lastDelivery, activity)
	}
	var versions []string
	rows, err := pool.Query(ctx, `SELECT source FROM issue_history WHERE project_id = $1 AND number = 7 ORDER BY valid_from`, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		versions = append(versions, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"delivery:d1", "delivery:d4"}; !slices.Equal(versions, want) {
		t.Fatalf("issue 7 history = %v, want %v", versions, want)
	}
	var labels, milestones, comments int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM labels), (SELECT count(*) FROM milestones), (SELECT count(*) FROM comments)`).
		Scan(&labels, &milestones, &comments); err != nil {
		t.Fatal(err)
	}
	if labels != 2 || milestones != 1 || comments != 1 {
		t.Fatalf("labels %d, milestones %d, comments %d; want 2, 1, 1", labels, milestones, comments)
	}
	if _, err := store.GetIssue(ctx, pool, p.ID, 2); err != nil {
		t.Fatalf("issue 2: %v", err)
	}
}
