package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/tools"
)

// TestMilestonePageListsRescueOptions: the page of every milestone the
// snapshot holds a rescue for lists its options best first, each with its
// band and what it gives up, and under it the body to copy, which decodes
// as the input of the tool it names and carries the option's ops or
// directive; a milestone not at risk has no rescue section.
func TestMilestonePageListsRescueOptions(t *testing.T) {
	t.Parallel()
	d, _, p := newTestDashboard(t)
	s, err := d.snapshot(context.Background(), p.ID)
	if err != nil {
		t.Fatal(err)
	}
	rescued := map[int64]bool{}
	options := 0
	for _, r := range s.data.Rescue {
		rescued[r.Milestone] = true
		_, doc, _ := get(t, d.Handler(), fmt.Sprintf("/ceo/demo/milestones/%d", r.Milestone))
		sec := find(doc, byID("rescue"))
		if len(sec) != 1 || !strings.Contains(text(sec[0]), r.Note) {
			t.Fatalf("milestone %d: rescue section %v, want the note %q", r.Milestone, sec, r.Note)
		}
		rows := find(sec[0], func(n *html.Node) bool { return n.Data == "tr" && attr(n, "data-kind") != "" })
		if len(rows) != len(r.Options) {
			t.Fatalf("milestone %d: %d rows for %d options", r.Milestone, len(rows), len(r.Options))
		}
		want := tools.RescueOptions(r, s.version)
		bodies := find(sec[0], byClass("pre", "copy"))
		if len(bodies) != len(want) {
			t.Fatalf("milestone %d: %d bodies for %d options", r.Milestone, len(bodies), len(want))
		}
		for k, o := range want {
			row := text(rows[k])
			for _, part := range []string{o.Summary, o.After.P80, o.CostText} {
				if !strings.Contains(row, part) {
					t.Errorf("milestone %d option %d: row %q lacks %q", r.Milestone, k+1, row, part)
				}
			}
			body := text(bodies[k])
			if o.Batch != nil {
				var in tools.ApplyChangesInput
				if err := json.Unmarshal([]byte(body), &in); err != nil || len(in.Ops) != len(o.Batch.Ops) || in.IdempotencyKey != o.Batch.IdempotencyKey {
					t.Errorf("milestone %d option %d: batch %s: %v", r.Milestone, k+1, body, err)
				}
			} else {
				var in tools.RecordDirectiveInput
				if err := json.Unmarshal([]byte(body), &in); err != nil || in.Kind != o.Directive.Kind {
					t.Errorf("milestone %d option %d: directive %s: %v", r.Milestone, k+1, body, err)
				}
			}
			options++
		}
	}
	for _, m := range s.data.Forecast.Milestones {
		if rescued[m.ID] {
			continue
		}
		code, doc, _ := get(t, d.Handler(), fmt.Sprintf("/ceo/demo/milestones/%d", m.ID))
		if code != http.StatusOK || len(find(doc, byID("rescue"))) != 0 {
			t.Errorf("milestone %d (not at risk): %d, rescue section shown", m.ID, code)
		}
	}
	t.Logf("%d milestones at risk, %d options shown", len(rescued), options)
	if options == 0 {
		t.Fatal("the test project has no rescue option to show")
	}
}

// TestMilestonePageSaysRescueIsBeingComputed: while the latest snapshot's
// rescue options are still being computed (they are searched after it is
// published), the page of a milestone at risk says so instead of showing
// no rescue; once they are stored the same page lists them.
func TestMilestonePageSaysRescueIsBeingComputed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, pool, p := newTestDashboard(t)
	mark, err := store.LatestSnapshotMark(ctx, pool, p.ID)
	if err != nil || !mark.Rescued {
		t.Fatalf("the test project's snapshot: %+v (%v), want its rescue stored", mark, err)
	}
	raw, err := store.SnapshotRescue(ctx, pool, p.ID, mark.Version)
	if err != nil {
		t.Fatal(err)
	}
	var rs []scheduler.MilestoneRescue
	if err := json.Unmarshal(raw, &rs); err != nil || len(rs) == 0 {
		t.Fatalf("rescue %s (%v): the test project has no milestone at risk", raw, err)
	}
	if _, err := pool.Exec(ctx, `UPDATE snapshots SET rescue = NULL WHERE project_id = $1 AND version = $2`, p.ID, mark.Version); err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		_, doc, _ := get(t, d.Handler(), fmt.Sprintf("/ceo/demo/milestones/%d", r.Milestone))
		sec := find(doc, byID("rescue"))
		if len(sec) != 1 || attr(sec[0], "class") != "pending" || !strings.Contains(text(sec[0]), tools.RescuePendingNote(mark.Version)) {
			t.Fatalf("milestone %d while its rescue is computed: section %v, want it to say so", r.Milestone, sec)
		}
	}
	if ok, err := store.PutRescue(ctx, pool, p.ID, mark.Version, raw); err != nil || !ok {
		t.Fatalf("put the rescue back: %v %v", ok, err)
	}
	for _, r := range rs {
		_, doc, _ := get(t, d.Handler(), fmt.Sprintf("/ceo/demo/milestones/%d", r.Milestone))
		sec := find(doc, byID("rescue"))
		if len(sec) != 1 || attr(sec[0], "class") == "pending" || !strings.Contains(text(sec[0]), r.Note) {
			t.Fatalf("milestone %d once its rescue is stored: section %v, want its note %q", r.Milestone, sec, r.Note)
		}
	}
}
