package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/tools"
)

// TestBoardAndIssueCarryAging: on a generated project with a year of
// history, query_project's board cards carry every started issue's age
// and the aging flag exactly where the snapshot's flow figures put it, and
// the issue view says the same with the SLE it is read against.
func TestBoardAndIssueCarryAging(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	pool, p, f := seededProject(t, "ceo", "demo", storetest.ProjectShape{Open: 80, Done: 300, People: 5, DepShare: 0.2, Milestones: 2, Seed: 7}, now, 100)
	log := f.Log
	snap, err := store.LatestSnapshot(ctx, pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var data worker.SnapshotData
	if err := json.Unmarshal(snap.Data, &data); err != nil || data.Flow == nil {
		t.Fatalf("snapshot flow figures: %v", err)
	}
	sle := data.Flow.SLE
	age, aging := map[int64]int{}, map[int64]bool{}
	for _, a := range data.Flow.Age {
		age[a.Number] = a.Days
		aging[a.Number] = a.Aging
	}

	reg := tools.NewService(pool, []store.Project{p}, log).Registry()
	call := func(input string) any {
		t.Helper()
		env, terr := reg.Call(ctx, tools.Caller{Name: "t", Scopes: []string{tools.ScopeRead}}, "query_project", json.RawMessage(input))
		if terr != nil {
			t.Fatalf("%s: %v", input, terr)
		}
		return env.Data
	}
	board := call(`{"view":"board","filters":{"limit":100}}`).(tools.BoardView)
	var flagged, aged int
	var oneAging, oneYoung int64
	for _, col := range board.Columns {
		for _, c := range col.Issues {
			isAging := slices.Contains(c.Flags, "aging")
			if started := col.State == "steeping" || col.State == "in_review"; !started {
				if isAging || c.AgeDays != 0 {
					t.Errorf("#%d in %s: age %d, flags %v", c.Issue, col.State, c.AgeDays, c.Flags)
				}
				continue
			}
			if c.AgeDays != age[c.Issue] || c.AgeDays == 0 || isAging != aging[c.Issue] {
				t.Errorf("#%d: card age %d aging %v, flow figures %d %v", c.Issue, c.AgeDays, isAging, age[c.Issue], aging[c.Issue])
			}
			if isAging != (c.AgeDays > sle.Days) {
				t.Errorf("#%d: %d days against an SLE of %d, aging %v", c.Issue, c.AgeDays, sle.Days, isAging)
			}
			aged++
			if isAging {
				flagged++
				oneAging = c.Issue
			} else {
				oneYoung = c.Issue
			}
		}
	}
	if flagged == 0 || flagged == aged {
		t.Fatalf("%d of %d started cards aging (SLE %+v): the generated project should have some of each", flagged, aged, sle)
	}
	t.Logf("SLE p%d = %d days; %d of %d started cards aging", sle.Percentile, sle.Days, flagged, aged)

	for _, n := range []int64{oneAging, oneYoung} {
		v := call(fmt.Sprintf(`{"view":"issue","filters":{"issueId":%d}}`, n)).(tools.IssueView)
		d := v.Derived
		if d.Age == nil || d.Age.Days != age[n] || d.Age.SLEDays != sle.Days || d.Age.SLEPercentile != sle.Percentile || d.Age.Since == "" {
			t.Fatalf("#%d: age %+v, want %d days against %+v", n, d.Age, age[n], sle)
		}
		if slices.Contains(d.Flags, "aging") != aging[n] || (aging[n] && len(d.Provenance.Aging) != 2) {
			t.Fatalf("#%d: flags %v, provenance %v, aging %v", n, d.Flags, d.Provenance.Aging, aging[n])
		}
	}
	done := call(`{"view":"issue","filters":{"issueId":1}}`).(tools.IssueView)
	if done.Derived.State != "done" || done.Derived.Age != nil || slices.Contains(done.Derived.Flags, "aging") {
		t.Fatalf("a done issue: %+v", done.Derived)
	}
}
