package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker/tools"
)

// TestRescueOptionsComeTrue: on generated projects behind the fake forge,
// a milestone brought to risk (its due date pulled in, in the forge) offers
// rescue options in query_project; carrying out the first one (its batch
// through apply_changes, approved; a capacity directive through
// record_directive; a new due date as a person sets it in the forge) makes
// the next snapshot read exactly the quoted p50, p80 and chance, better
// than before. Every option's batch passes apply_changes' validation.
func TestRescueOptionsComeTrue(t *testing.T) {
	t.Parallel()
	_, pool := storetest.NewDB(t)
	kinds := map[string]int{}
	for seed := uint64(1); seed <= 6; seed++ {
		q := newQuoteProject(t, pool, 500+seed, quoteTrials)
		q.pullInDueDates()
		for round := 0; round < 3; round++ {
			m, options := q.firstRescue()
			if len(options) == 0 {
				break
			}
			for _, o := range options {
				q.checkValid(o)
			}
			// Prefer a kind not checked yet, so every kind gets its turn.
			pick := options[0]
			for _, o := range options {
				if kinds[o.Kind] == 0 {
					pick = o
					break
				}
			}
			before := q.milestoneBand(m, q.latestVersion())
			v0 := q.latestVersion()
			q.carryOut(m, pick)
			got := q.milestoneBand(m, v0+1)
			want := scheduler.Band{P50: pick.After.P50, P80: pick.After.P80, PDue: pick.After.PDue}
			if got.P50 != want.P50 || got.P80 != want.P80 || got.PDue != want.PDue {
				t.Errorf("seed %d: %s %q quoted p50 %s p80 %s pDue %.2f; the next snapshot reads p50 %s p80 %s pDue %.2f",
					500+seed, pick.Kind, pick.Summary, want.P50, want.P80, want.PDue, got.P50, got.P80, got.PDue)
			}
			if !(got.PDue > before.PDue || got.PDue == before.PDue && got.P80 < before.P80) {
				t.Errorf("seed %d: %s %q is no better: %+v -> %+v", 500+seed, pick.Kind, pick.Summary, before, got)
			}
			kinds[pick.Kind]++
		}
	}
	t.Logf("options carried out and checked, by kind: %v", kinds)
	if kinds["capacity"] == 0 || kinds["cut_scope"]+kinds["resequence"]+kinds["reassign"] == 0 {
		t.Fatalf("too few kinds checked: %v", kinds)
	}
}

// pullInDueDates sets every open milestone's due date to one to three
// weeks from now in the forge, as a person would, and lets the reconcile
// bring it in.
func (q *quoteProject) pullInDueDates() {
	q.t.Helper()
	s := q.state()
	for k, id := range s.milestones {
		day := q.clock.Now().UTC().AddDate(0, 0, 7+7*k+q.rng.IntN(5)).Truncate(24 * time.Hour)
		q.editDue(id, day.Add(24*time.Hour-time.Second))
	}
	if err := q.syncer.Reconcile(q.ctx, q.p); err != nil {
		q.t.Fatal(err)
	}
	q.settle()
}

func (q *quoteProject) editDue(id int64, due time.Time) {
	q.t.Helper()
	body, _ := json.Marshal(map[string]any{"due_on": due.Format(time.RFC3339)})
	req, _ := http.NewRequest(http.MethodPatch, fmt.Sprintf("%s/api/v1/repos/acme/%s/milestones/%d", q.fake.URL, q.name, id), bytes.NewReader(body))
	req.Header.Set("Authorization", "token "+q.fake.Token())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		q.t.Fatalf("edit milestone %d: %v %v", id, resp, err)
	}
	resp.Body.Close()
}

// firstRescue is the first milestone the runway counts rescue options for,
// and its options as view milestone lists them.
func (q *quoteProject) firstRescue() (int64, []tools.RescueOption) {
	q.t.Helper()
	q.svc.Invalidate(q.p.ID) // the recompute ran outside the service
	env, terr := q.reg.Call(q.ctx, quoteApprover, "query_project", json.RawMessage(`{"view":"runway"}`))
	if terr != nil {
		q.t.Fatal(terr)
	}
	for _, m := range env.Data.(tools.RunwayView).Milestones {
		if m.RescueOptions == 0 {
			continue
		}
		env, terr := q.reg.Call(q.ctx, quoteApprover, "query_project", json.RawMessage(fmt.Sprintf(`{"view":"milestone","filters":{"milestoneId":%d}}`, m.ID)))
		if terr != nil {
			q.t.Fatal(terr)
		}
		mv := env.Data.(tools.MilestoneView)
		if len(mv.Rescue) != m.RescueOptions || mv.RescueNote == "" || len(mv.Rescue) > 5 {
			q.t.Fatalf("milestone %d: runway counts %d options, the view lists %d (%q)", m.ID, m.RescueOptions, len(mv.Rescue), mv.RescueNote)
		}
		return m.ID, mv.Rescue
	}
	return 0, nil
}

// checkValid checks an option's batch passes apply_changes' validation
// without applying it: sent unapproved with one destructive op more, it
// answers NEEDS_APPROVAL only when no op was rejected (validation comes
// first, and a rejected batch answers its rejections).
func (q *quoteProject) checkValid(o tools.RescueOption) {
	q.t.Helper()
	if o.Batch == nil {
		if o.Directive == nil {
			q.t.Fatalf("option %q carries neither a batch nor a directive", o.Summary)
		}
		return
	}
	if o.SnapshotVersion != q.latestVersion() || !strings.HasPrefix(o.Batch.IdempotencyKey, fmt.Sprintf("rescue-v%d-", o.SnapshotVersion)) {
		q.t.Fatalf("option %q: snapshot %d, key %q, latest %d", o.Summary, o.SnapshotVersion, o.Batch.IdempotencyKey, q.latestVersion())
	}
	in := tools.ApplyChangesInput{Ops: append(append([]tools.Op{}, o.Batch.Ops...), tools.Op{Op: "close_issue", Issue: q.openIssue(q.state()).Number})}
	raw, _ := json.Marshal(in)
	env, terr := q.reg.Call(q.ctx, quoteApprover, "apply_changes", raw)
	if terr == nil {
		q.t.Fatalf("option %q: batch rejected: %+v", o.Summary, env.Data)
	}
	if terr.Code != tools.CodeNeedsApproval {
		q.t.Fatalf("option %q: %v", o.Summary, terr)
	}
}

// carryOut does what the option says, as its user would, and lets the
// webhooks and the recompute run.
func (q *quoteProject) carryOut(m int64, o tools.RescueOption) {
	q.t.Helper()
	switch {
	case o.Batch != nil:
		raw, _ := json.Marshal(o.Batch)
		env, terr := q.reg.Call(q.ctx, quoteApprover, "apply_changes", raw)
		if terr != nil {
			q.t.Fatalf("apply %s: %v", raw, terr)
		}
		out := env.Data.(tools.ApplyChangesOutput)
		if out.Applied != len(o.Batch.Ops) || out.Stale != "" {
			q.t.Fatalf("apply %s: %+v", raw, out)
		}
	case o.Directive.Kind == "set-deadline":
		var p struct{ Due string }
		if err := json.Unmarshal(o.Directive.Params, &p); err != nil {
			q.t.Fatal(err)
		}
		day, err := time.Parse(time.DateOnly, p.Due)
		if err != nil {
			q.t.Fatal(err)
		}
		q.editDue(m, day.Add(24*time.Hour-time.Second))
		if err := q.syncer.Reconcile(q.ctx, q.p); err != nil {
			q.t.Fatal(err)
		}
	default:
		raw, _ := json.Marshal(o.Directive)
		if _, terr := q.reg.Call(q.ctx, quoteApprover, "record_directive", raw); terr != nil {
			q.t.Fatalf("record_directive %s: %v", raw, terr)
		}
	}
	q.fake.FlushHooks()
	q.settle()
}

func (q *quoteProject) milestoneBand(id, version int64) scheduler.Band {
	q.t.Helper()
	fc := q.forecastAt(version)
	for k := range fc.Milestones {
		if fc.Milestones[k].ID == id {
			return scheduler.BandOf(&fc.Milestones[k])
		}
	}
	return scheduler.Band{}
}
