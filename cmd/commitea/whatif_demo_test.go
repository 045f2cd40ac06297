package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/tools"
)

// TestDemoReestimatesComeTrue is the what-if's promise on the seeded demo
// (scheduler/doc.go, "One planning rule"): six re-estimates, each recorded
// with record_directive and carried out with apply_changes and its
// directiveId as an agent would over HTTP, on assigned and unassigned issues
// of every milestone, chosen by their role (the biggest assigned and the
// biggest unassigned open issue of a milestone), not by number. After each,
// the first snapshot that covers it must read, for every milestone, as the
// quote said: p10, p50 and p80 to the day and pDue to two decimals, as the
// ledger keeps them (predicted and realized) and pm-state.md shows them.
func TestDemoReestimatesComeTrue(t *testing.T) {
	d := startDemo(t)
	ctx := context.Background()
	pool, p := d.project(t)
	var err error // the realized directives waited for below
	waitFor(t, "the demo's first snapshot", time.Minute, func() bool {
		_, err := store.LatestSnapshot(ctx, pool, p.ID)
		return err == nil
	})

	picks := demoReestimates(t, pool, p.ID)
	call := func(tool, body string, out any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, d.base+"/v1/tools/"+tool, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+d.token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %d %.500s", tool, body, resp.StatusCode, raw)
		}
		env := struct {
			Data json.RawMessage `json:"data"`
		}{}
		if err := json.Unmarshal(raw, &env); err != nil || json.Unmarshal(env.Data, out) != nil {
			t.Fatalf("%s answered %.500s", tool, raw)
		}
	}

	figures, matched := 0, 0
	for k, pick := range picks {
		var rec tools.RecordDirectiveOutput
		call("record_directive", fmt.Sprintf(`{"kind":"reestimate","quote":"#%d is really %s.","target":{"issue":%d},"params":{"estimate":%q}}`,
			pick.number, pick.estimate, pick.number, pick.estimate), &rec)
		var applied tools.ApplyChangesOutput
		call("apply_changes", fmt.Sprintf(`{"ops":[{"op":"set_estimate","issue":%d,"estimate":%q}],"directiveId":%d}`,
			pick.number, pick.estimate, rec.DirectiveID), &applied)
		if applied.Applied != 1 || applied.Effects == nil {
			t.Fatalf("re-estimate %d (%s): apply_changes answered %+v", k+1, pick.role, applied)
		}
		for _, e := range applied.Effects {
			for _, b := range []tools.Band{e.Before, e.After} {
				if b.PDue != scheduler.RoundPDue(b.PDue) {
					t.Errorf("re-estimate %d: pDue %v of %s is not rounded to two decimals", k+1, b.PDue, e.Title)
				}
			}
		}

		var dir store.Directive
		waitFor(t, fmt.Sprintf("re-estimate %d to be realized by a snapshot", k+1), 2*time.Minute, func() bool {
			dir, err = store.GetDirective(ctx, pool, p.ID, rec.DirectiveID)
			return err == nil && dir.Realized != nil
		})
		var predicted []tools.BeforeAfter
		var realized []scheduler.MilestoneBand
		if json.Unmarshal(dir.Predicted, &predicted) != nil || json.Unmarshal(dir.Realized, &realized) != nil || len(predicted) != 4 {
			t.Fatalf("re-estimate %d: ledger predicted %s, realized %s", k+1, dir.Predicted, dir.Realized)
		}
		mismatches := scheduler.RealizedMismatches(predicted, realized)
		// p50, p80 and pDue of each milestone, as the issue counts them.
		figures += 3 * len(predicted)
		matched += 3*len(predicted) - 3*len(mismatches)
		if len(mismatches) > 0 {
			t.Errorf("re-estimate %d (%s, #%d → %s): the next snapshot (version %d) differs from the quote:\n%s",
				k+1, pick.role, pick.number, pick.estimate, *dir.RealizedVersion, strings.Join(mismatches, "\n"))
		}
		moved := map[int64]bool{}
		for _, e := range applied.Effects {
			moved[e.Milestone] = true
		}
		for _, m := range predicted {
			if (m.Before != m.After) != moved[m.Milestone] {
				t.Errorf("re-estimate %d: effects and the ledger disagree on whether %s moves: %+v", k+1, m.Title, m)
			}
		}
		t.Logf("re-estimate %d: %s #%d → %s: %s", k+1, pick.role, pick.number, pick.estimate, applied.Consequence)
	}
	t.Logf("per-milestone figures (p50, p80, pDue) as quoted: %d of %d", matched, figures)

	// Three weeks off for the person on the first assigned pick: less
	// capacity never makes a milestone earlier or likelier, and it too
	// comes true.
	var person string
	if err := pool.QueryRow(ctx, `SELECT assignees[1] FROM issues WHERE project_id = $1 AND number = $2`, p.ID, picks[0].number).Scan(&person); err != nil {
		t.Fatal(err)
	}
	from := time.Now().UTC().AddDate(0, 0, 7)
	var off tools.RecordDirectiveOutput
	call("record_directive", fmt.Sprintf(`{"kind":"capacity","quote":"%s is off for three weeks.","target":{"member":%q},"params":{"timeOff":[{"from":%q,"to":%q}]}}`,
		person, person, from.Format(time.DateOnly), from.AddDate(0, 0, 20).Format(time.DateOnly)), &off)
	for _, e := range off.Consequence {
		// "" is never: later than any date.
		earlier := func(a, b string) bool { return a != "" && (b == "" || a < b) }
		if e.After.PDue > e.Before.PDue || earlier(e.After.P80, e.Before.P80) || earlier(e.After.P50, e.Before.P50) {
			t.Errorf("three weeks off for %s moves %s the wrong way: %+v", person, e.Title, e)
		}
	}
	var dir store.Directive
	waitFor(t, "the time off to be realized by a snapshot", 2*time.Minute, func() bool {
		dir, err = store.GetDirective(ctx, pool, p.ID, off.DirectiveID)
		return err == nil && dir.Realized != nil
	})
	var predicted []tools.BeforeAfter
	var realized []scheduler.MilestoneBand
	if json.Unmarshal(dir.Predicted, &predicted) != nil || json.Unmarshal(dir.Realized, &realized) != nil {
		t.Fatalf("time off: ledger predicted %s, realized %s", dir.Predicted, dir.Realized)
	}
	if m := scheduler.RealizedMismatches(predicted, realized); len(m) > 0 {
		t.Errorf("time off: the next snapshot differs from the quote:\n%s", strings.Join(m, "\n"))
	}
	t.Logf("three weeks off for %s: %s", person, off.Summary)

	req, _ := http.NewRequest(http.MethodGet, d.base+"/v1/pm-state.md", nil)
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := strings.Count(string(md), ": as predicted, every milestone (4)"); n < len(picks)+1 {
		t.Errorf("pm-state.md shows %d directives realized as predicted, want %d:\n%s", n, len(picks)+1, md)
	}
}

// reestimate is one issue of the demo to re-estimate and why it was chosen.
type reestimate struct {
	number   int64
	role     string
	estimate string
}

// demoReestimates chooses six open issues of the demo by role: per
// milestone (in id order) the biggest assigned or the biggest unassigned
// one, alternating where a milestone has both, then the other role where
// there is one, until six. Each becomes est/xl, or est/s when it already is
// one.
func demoReestimates(t *testing.T, pool *store.Pool, projectID int64) []reestimate {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT number, milestone_id, assignees, labels FROM issues
		WHERE project_id = $1 AND state = 'open' AND NOT is_pull AND milestone_id IS NOT NULL ORDER BY milestone_id, number`, projectID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type issue struct {
		number int64
		size   scheduler.Size
	}
	best := map[int64]map[bool]issue{} // milestone → assigned? → biggest
	var milestones []int64
	order := map[scheduler.Size]int{"": 0, scheduler.SizeXS: 1, scheduler.SizeS: 2, scheduler.SizeM: 3, scheduler.SizeL: 4, scheduler.SizeXL: 5}
	for rows.Next() {
		var (
			number, ms        int64
			assignees, labels []string
		)
		if err := rows.Scan(&number, &ms, &assignees, &labels); err != nil {
			t.Fatal(err)
		}
		size, _, _ := scheduler.ParseLabels(labels)
		if best[ms] == nil {
			best[ms] = map[bool]issue{}
			milestones = append(milestones, ms)
		}
		assigned := len(assignees) > 0
		if cur, ok := best[ms][assigned]; !ok || order[size] > order[cur.size] {
			best[ms][assigned] = issue{number, size}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(milestones) != 4 {
		t.Fatalf("the demo has open work in %d milestones, want 4", len(milestones))
	}
	var out []reestimate
	taken := map[[2]int64]bool{}
	add := func(ms int64, assigned bool) bool {
		is, ok := best[ms][assigned]
		key := [2]int64{ms, map[bool]int64{false: 0, true: 1}[assigned]}
		if !ok || taken[key] || len(out) == 6 {
			return false
		}
		taken[key] = true
		role := fmt.Sprintf("biggest unassigned issue of milestone %d", ms)
		if assigned {
			role = fmt.Sprintf("biggest assigned issue of milestone %d", ms)
		}
		est := "est/xl"
		if is.size == scheduler.SizeXL {
			est = "est/s"
		}
		out = append(out, reestimate{number: is.number, role: role, estimate: est})
		return true
	}
	// Every milestone once, the roles alternating where the milestone has
	// both; then the other role where there is one, until six.
	for k, ms := range milestones {
		if !add(ms, k%2 == 0) && !add(ms, k%2 != 0) {
			t.Fatalf("milestone %d has no open issue", ms)
		}
	}
	for _, ms := range milestones {
		add(ms, true)
		add(ms, false)
	}
	roles := map[bool]bool{}
	for _, r := range out {
		roles[strings.HasPrefix(r.role, "biggest assigned")] = true
	}
	if len(out) != 6 || !roles[true] || !roles[false] {
		t.Fatalf("picks %+v: want six, assigned and unassigned", out)
	}
	return out
}
