package standup

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/commitea/commitea/scheduler"
)

// bigInput is a synthetic day-two standup of 5,000 open issues (and 2,000
// done), 20 people, 3 milestones: the report alone, without the database.
func bigInput() Input {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []scheduler.Size{"xs", "s", "m", "l", "xl"}
	in := Input{Project: "bench/standup", Day: at(1), Location: time.UTC, Now: at(1),
		Snapshot: Snapshot{Version: 2, ComputedAt: at(1), Calibration: scheduler.Calibration{GlobalMultiplier: 1.3, Sigma: 0.6}},
		Previous: &Baseline{At: at(0), Multiplier: 1.25, Sigma: 0.6}}
	for m := int64(1); m <= 3; m++ {
		in.Snapshot.Forecast.Milestones = append(in.Snapshot.Forecast.Milestones,
			scheduler.MilestoneForecast{ID: m, Title: fmt.Sprintf("v%d.0", m), P50: at(int(20 * m)), P80: at(int(30 * m))})
		in.Previous.Milestones = append(in.Previous.Milestones, BaselineMilestone{ID: m, P50: at(int(18 * m)), P80: at(int(27 * m))})
	}
	for n := int64(1); n <= 7000; n++ {
		st := scheduler.IssueStatus{Number: n, State: scheduler.Triage, Estimate: sizes[rng.IntN(5)]}
		is := Issue{Number: n, Title: fmt.Sprintf("Work item %d", n), Milestone: 1 + rng.Int64N(3), LastActivity: at(-rng.IntN(30))}
		if rng.IntN(3) == 0 {
			is.Assignee = fmt.Sprintf("dev%02d", rng.IntN(20))
		}
		switch {
		case n <= 2000:
			st.State = scheduler.Done
		case rng.IntN(5) == 0:
			st.State, st.Stale = scheduler.Steeping, rng.IntN(3) == 0
		case rng.IntN(4) == 0 && n > 2100:
			st.Blocked, st.BlockedBy = true, []int64{2001 + rng.Int64N(n-2001)}
		}
		in.Snapshot.Statuses = append(in.Snapshot.Statuses, st)
		in.Issues = append(in.Issues, is)
		if st.State != scheduler.Done {
			in.Snapshot.Forecast.Issues = append(in.Snapshot.Forecast.Issues,
				scheduler.IssueForecast{Number: n, P50: at(rng.IntN(90)), Assignee: fmt.Sprintf("dev%02d", rng.IntN(20))})
			if rng.IntN(50) != 0 {
				m := &in.Previous.Milestones[is.Milestone-1]
				m.Open = append(m.Open, BaselineIssue{N: n, S: st.Estimate})
			}
		}
		if n > 1900 && n <= 2000 {
			in.Transitions = append(in.Transitions, Transition{Issue: n, From: "steeping", To: "done", At: at(0).Add(time.Hour)})
		}
	}
	return in
}

// BenchmarkBuild measures the report and its template for 5,000 open
// issues, without loading anything.
func BenchmarkBuild(b *testing.B) {
	in := bigInput()
	for b.Loop() {
		Template(Build(in))
	}
}
