package scheduler

import (
	"math"
	"testing"
	"time"
)

// TestFinishWeeks: every trial lands in one week, the weeks end at the due
// date, and the weeks up to it hold exactly the trials PDue counts; the
// first and last weeks hold the first and the last trial (Quantiles[0]
// and Quantiles[20]).
func TestFinishWeeks(t *testing.T) {
	in := genProject(5, genSpec{issues: 80, people: 5, milestones: 3, depFrac: 0.3, unassignedFrac: 0.2})
	in.Milestones = append(in.Milestones, Milestone{ID: 9, Title: "no date"})
	for k := range 6 {
		in.Issues[20+k].Milestone = 9
	}
	const trials = 1000
	f := mustRun(t, in, Options{Trials: trials, Seed: 3})
	fin := map[int64]MilestoneFinish{}
	for _, h := range f.Finish {
		fin[h.ID] = h
	}
	for _, m := range f.Milestones {
		h, ok := fin[m.ID]
		if !ok {
			t.Fatalf("milestone %d has no finish weeks", m.ID)
		}
		total, onTime := 0, 0
		for k, n := range h.Weeks {
			total += n
			end := h.From.Add(time.Duration(k+1) * Week)
			if !m.Due.IsZero() && !end.After(m.Due) {
				onTime += n
			}
		}
		if total != trials || h.Trials != trials {
			t.Errorf("milestone %d: weeks hold %d trials of %d", m.ID, total, h.Trials)
		}
		if m.Due.IsZero() {
			if h.OnTime != 0 || (h.From.Sub(f.Now)%Week) != 0 {
				t.Errorf("milestone %d without a due date: on time %d, weeks from %v", m.ID, h.OnTime, h.From)
			}
			continue
		}
		if (m.Due.Sub(h.From) % Week) != 0 {
			t.Errorf("milestone %d: no week ends at the due date %v (weeks from %v)", m.ID, m.Due, h.From)
		}
		if onTime != h.OnTime || RoundPDue(float64(h.OnTime)/trials) != m.PDue {
			t.Errorf("milestone %d: weeks to the due date hold %d, on time %d, pDue %v", m.ID, onTime, h.OnTime, m.PDue)
		}
		first, last := h.From, h.From.Add(time.Duration(len(h.Weeks))*Week)
		if h.Weeks[0] == 0 || h.Weeks[len(h.Weeks)-1] == 0 || m.Quantiles[0].Before(first) || m.Quantiles[20].After(last.Add(time.Minute)) {
			t.Errorf("milestone %d: weeks %v from %v do not span the trials %v – %v", m.ID, h.Weeks, h.From, m.Quantiles[0], m.Quantiles[20])
		}
	}
}

// TestFinishWeeksBounded: the histogram was sized by the latest trial, so
// one extreme draw (an experiment with a heavier upper tail drew one past
// the calendar's horizon) made it allocate hundreds of GB and the process
// died out of memory. The weeks stop MaxFinishWeeks after the first
// trial's, later trials are counted in Later, and the due date's week and
// OnTime are as before.
func TestFinishWeeksBounded(t *testing.T) {
	origin := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	m := Milestone{ID: 1, Due: origin.Add(3 * Week)}
	const h = 7 * 24
	fin := []float64{1 * h, 2.5 * h, 4 * h, 1e12, math.Inf(1), 1e300}
	got := finishWeeks(fin, m, origin)
	if len(got.Weeks) > MaxFinishWeeks || got.Later != 3 || got.OnTime != 2 || got.Trials != 6 {
		t.Fatalf("weeks %d (max %d), later %d (want 3), on time %d (want 2), trials %d", len(got.Weeks), MaxFinishWeeks, got.Later, got.OnTime, got.Trials)
	}
	sum := got.Later
	for _, n := range got.Weeks {
		sum += n
	}
	if sum != len(fin) || !got.From.Equal(origin) || got.Weeks[0] != 1 || got.Weeks[2] != 1 || got.Weeks[3] != 1 {
		t.Fatalf("from %v weeks %v… later %d: want every trial counted once, from the origin", got.From, got.Weeks[:5], got.Later)
	}
	if (m.Due.Sub(got.From) % Week) != 0 {
		t.Fatalf("no week ends at the due date %v (weeks from %v)", m.Due, got.From)
	}
}
