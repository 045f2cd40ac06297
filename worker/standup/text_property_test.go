package standup

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/worker/prose"
)

// randomInput is a standup of a generated project: milestones with due
// dates and forecasts (some at risk), issues in every state with
// assignees, estimates, blockers, staleness and critical-chain shares, the
// team's capacity, and a previous standup to drift from.
func randomInput(seed uint64) Input {
	rng := rand.New(rand.NewPCG(seed, 15))
	zones := []string{"UTC", "Europe/Berlin", "America/Los_Angeles", "Asia/Tokyo"}
	loc, _ := time.LoadLocation(zones[rng.IntN(len(zones))])
	day := time.Date(2026, time.Month(1+rng.IntN(12)), 1+rng.IntN(26), 10, 0, 0, 0, loc)
	for day.Weekday() == time.Saturday || day.Weekday() == time.Sunday {
		day = day.AddDate(0, 0, 1)
	}
	at := func(d int, h int) time.Time { return time.Date(day.Year(), day.Month(), day.Day()+d, h, 0, 0, 0, loc) }
	logins := []string{"ann", "bob", "cid", "dev03", "elif", "farid"}[:2+rng.IntN(4)]
	titles := []string{"Login form", "Session store", "Audit log", "SSO via Keycloak", "Docs", "Reports", "Schema", "Upgrade to Go 1.26",
		"Export as CSV", "Retry emails", "Billing page", "Rate limits", "Dark mode", "Search", "Mobile push", "Backups"}
	in := Input{Project: "acme/app", Day: at(0, 12), Location: loc, Now: at(0, 9)}
	in.Snapshot = Snapshot{Version: 9, ComputedAt: at(0, 8), Calibration: scheduler.Calibration{N: 30, GlobalMultiplier: 1.2 + float64(rng.IntN(3))/10, Sigma: 0.5}}
	prev := &Baseline{At: at(-1, 8), SnapshotVersion: 8, Multiplier: 1.2, Sigma: 0.5, CalibrationCount: 29}
	nm := 2 + rng.IntN(3)
	for m := 1; m <= nm; m++ {
		due := at(5+rng.IntN(40), 0)
		p50 := due.AddDate(0, 0, rng.IntN(16)-10)
		p80 := p50.AddDate(0, 0, 2+rng.IntN(10))
		pDue := []float64{0.05, 0.2, 0.45, 0.62, 0.79, 0.85, 0.97}[rng.IntN(7)]
		if !p80.After(due) {
			pDue = 0.8 + float64(rng.IntN(20))/100
		}
		f := scheduler.MilestoneForecast{ID: int64(m), Title: fmt.Sprintf("v%d.%d", m, rng.IntN(3)), Due: due, P50: p50, P80: p80, PDue: pDue,
			SlackDays: scheduler.WorkingDaysBetween(scheduler.Calendar{}, p80, due), Open: 1 + rng.IntN(20)}
		in.Snapshot.Forecast.Milestones = append(in.Snapshot.Forecast.Milestones, f)
		bm := BaselineMilestone{ID: f.ID, P50: p50.AddDate(0, 0, -rng.IntN(4)), P80: p80.AddDate(0, 0, -rng.IntN(4))}
		prev.Milestones = append(prev.Milestones, bm)
	}
	states := []scheduler.State{scheduler.Steeping, scheduler.InReview, scheduler.Triage, scheduler.Triage, scheduler.Done}
	sizes := []scheduler.Size{scheduler.SizeXS, scheduler.SizeS, scheduler.SizeM, scheduler.SizeL}
	var numbers []int64
	for i, title := range titles[:8+rng.IntN(8)] {
		n := int64(10 + i*7 + rng.IntN(5))
		numbers = append(numbers, n)
		st := scheduler.IssueStatus{Number: n, State: states[rng.IntN(len(states))], Estimate: sizes[rng.IntN(len(sizes))]}
		is := Issue{Number: n, Title: title, Milestone: int64(1 + rng.IntN(nm)), LastActivity: at(-rng.IntN(12), 9)}
		if st.State != scheduler.Triage || rng.IntN(2) == 0 {
			is.Assignee = logins[rng.IntN(len(logins))]
		}
		if st.State == scheduler.Steeping && rng.IntN(3) == 0 {
			st.Stale = true
		}
		in.Snapshot.Statuses = append(in.Snapshot.Statuses, st)
		in.Issues = append(in.Issues, is)
		if st.State != scheduler.Done {
			f := scheduler.IssueForecast{Number: n, P50: at(1+rng.IntN(25), []int{1, 9, 15, 23}[rng.IntN(4)]), CriticalFreq: []float64{0, 0.2, 0.55, 0.9}[rng.IntN(4)]}
			if is.Assignee == "" {
				f.Assignee = logins[rng.IntN(len(logins))]
			}
			in.Snapshot.Forecast.Issues = append(in.Snapshot.Forecast.Issues, f)
			for i := range prev.Milestones {
				if prev.Milestones[i].ID == is.Milestone && rng.IntN(4) > 0 {
					prev.Milestones[i].Open = append(prev.Milestones[i].Open, BaselineIssue{N: n, S: st.Estimate})
				}
			}
		} else {
			in.Transitions = append(in.Transitions, Transition{Issue: n, From: "in_review", To: "done", At: at(0, 7)})
		}
	}
	// Blockers: some open issues wait for stale ones.
	for i := range in.Snapshot.Statuses {
		s := &in.Snapshot.Statuses[i]
		if s.State == scheduler.Done || rng.IntN(3) > 0 {
			continue
		}
		for _, o := range in.Snapshot.Statuses {
			if o.Stale && o.Number != s.Number {
				s.Blocked, s.BlockedBy = true, []int64{o.Number}
				break
			}
		}
	}
	for _, l := range logins {
		in.Snapshot.Capacity = append(in.Snapshot.Capacity, scheduler.RunwayCapacity{Login: l, HoursPerWeek: float64(20 + rng.IntN(21)),
			LoadWeeks: float64(rng.IntN(40)) / 10, FreeFromP50: at(rng.IntN(20), 17)})
	}
	if rng.IntN(4) > 0 {
		in.Previous = prev
	}
	return in
}

// TestTemplatePassesItsCheck: for generated projects, the template is true
// in every claim and complete, so a model that copies it faithfully keeps
// its prose, in every time zone.
func TestTemplatePassesItsCheck(t *testing.T) {
	atRisk, drift := 0, 0
	for seed := uint64(1); seed <= 60; seed++ {
		in := randomInput(seed)
		r := Build(in)
		atRisk += len(r.AtRisk)
		drift += len(r.Drift)
		text := Template(r)
		f, err := Facts(r, KnownOf(in), in.Location)
		if err != nil {
			t.Fatal(err)
		}
		if err := prose.Check(text, f); err != nil {
			t.Errorf("seed %d: the template fails its check: %v\n%s", seed, err, text)
			continue
		}
		if miss := f.Missing(text, Refs(r)); len(miss) > 0 {
			t.Errorf("seed %d: the template leaves out %v\n%s", seed, miss, text)
		}
	}
	if atRisk == 0 || drift == 0 {
		t.Errorf("generated reports had %d at-risk milestones and %d drifts; want some of each", atRisk, drift)
	}
}

// TestIncompleteProseIsRefused: leaving any one subject of the report out
// of an otherwise true text falls back to the template.
func TestIncompleteProseIsRefused(t *testing.T) {
	in := randomInput(7)
	r := Build(in)
	refs := Refs(r)
	if len(refs) < 3 {
		t.Fatalf("report has %d subjects", len(refs))
	}
	f, err := Facts(r, KnownOf(in), in.Location)
	if err != nil {
		t.Fatal(err)
	}
	full := f.Missing("", refs)
	if !slices.Equal(full, refs) {
		t.Fatalf("an empty text misses %v, want every subject %v", full, refs)
	}
	for i := range refs {
		rest := slices.Delete(slices.Clone(refs), i, i+1)
		var text string
		for _, ref := range rest {
			text += ref.String() + ". "
		}
		if miss := f.Missing(text, refs); len(miss) != 1 || miss[0] != refs[i] {
			t.Errorf("without %v: missing %v", refs[i], miss)
		}
	}
}
