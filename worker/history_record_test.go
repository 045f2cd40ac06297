package worker

import (
	"context"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/gitea/giteafake"
	"github.com/commitea/commitea/worker/history"
)

// Backfill keeps each issue's history from its timeline, later writes
// append to it, and the mirror read back at a past date is the project as
// it stood then.
func TestIssueHistoryFromBackfillAndWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)
	pool, p := backfillGenerated(t, giteafake.Project{Seed: 3, Now: now, HistoryDays: 120})
	m, err := store.LoadMirror(ctx, pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	versions, err := store.IssueHistory(ctx, pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	// A done issue of the history: open and unassigned when filed,
	// assigned once started, closed at its closing time.
	var done store.Issue
	for _, i := range m.Issues {
		if !i.IsPull && i.State == "closed" && len(i.Assignees) > 0 && i.ClosedAt.Sub(i.CreatedAt) > 48*time.Hour {
			done = i
			break
		}
	}
	if done.Number == 0 {
		t.Fatal("no done issue in the generated history")
	}
	var mine []store.IssueVersion
	for _, v := range versions {
		if v.Number == done.Number {
			mine = append(mine, v)
		}
	}
	if len(mine) < 3 || !mine[0].ValidFrom.Equal(done.CreatedAt) || mine[0].State != "open" || len(mine[0].Assignees) != 0 ||
		len(mine[0].Labels) == 0 || mine[len(mine)-1].State != "closed" || !mine[len(mine)-1].ValidFrom.Equal(*done.ClosedAt) {
		t.Fatalf("history of #%d (filed %v, closed %v): %+v", done.Number, done.CreatedAt, done.ClosedAt, mine)
	}
	at := func(when time.Time) store.Issue {
		for _, i := range history.At(m, versions, when).Issues {
			if i.Number == done.Number {
				return i
			}
		}
		t.Fatalf("#%d missing at %v", done.Number, when)
		return store.Issue{}
	}
	if i := at(done.CreatedAt.Add(time.Minute)); i.State != "open" || len(i.Assignees) != 0 || i.ClosedAt != nil {
		t.Errorf("just after filing #%d: %+v", done.Number, i)
	}
	if i := at(done.ClosedAt.Add(-time.Minute)); i.State != "open" || len(i.Assignees) != 1 {
		t.Errorf("just before closing #%d: state %s, assignees %v", done.Number, i.State, i.Assignees)
	}
	if i := at(*done.ClosedAt); i.State != "closed" {
		t.Errorf("at its closing #%d is %s", done.Number, i.State)
	}

	// A delivery after the backfill adds a version; one that changes
	// nothing the history keeps adds none.
	later := now.Add(time.Hour)
	changed := done
	changed.Labels = append([]string{"deadline/hard"}, done.Labels...)
	changed.UpdatedAt = later
	if err := store.UpsertIssues(ctx, pool, p.ID, []store.IssueWrite{{Issue: changed, Delivery: "d-1"}}); err != nil {
		t.Fatal(err)
	}
	changed.Title, changed.UpdatedAt = "Renamed", later.Add(time.Minute)
	if err := store.UpsertIssues(ctx, pool, p.ID, []store.IssueWrite{{Issue: changed, Delivery: "d-2"}}); err != nil {
		t.Fatal(err)
	}
	if err := store.AddDependency(ctx, pool, p.ID, store.Dependency{Issue: done.Number, DependsOn: done.Number + 1}); err != nil {
		t.Fatal(err)
	}
	again, err := store.IssueHistory(ctx, pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var tail []store.IssueVersion
	for _, v := range again {
		if v.Number == done.Number {
			tail = append(tail, v)
		}
	}
	tail = tail[len(mine):]
	if len(tail) != 2 || tail[0].Source != "delivery:d-1" || !tail[0].ValidFrom.Equal(later) || len(tail[0].Labels) != len(changed.Labels) ||
		tail[1].Source != store.VersionWrite || len(tail[1].DependsOn) != 1 || tail[1].DependsOn[0] != done.Number+1 {
		t.Errorf("versions after the backfill: %+v", tail)
	}

	// Deleting the issue forgets its history.
	if err := store.DeleteIssue(ctx, pool, p.ID, done.Number); err != nil {
		t.Fatal(err)
	}
	gone, err := store.IssueHistory(ctx, pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range gone {
		if v.Number == done.Number {
			t.Fatalf("#%d deleted, its history kept: %+v", done.Number, v)
		}
	}
}
