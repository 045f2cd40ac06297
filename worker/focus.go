package worker

import (
	"time"

	"github.com/commitea/commitea/scheduler"
)

// focusAndRunway ranks the work for the team and for each person who has
// open work (assigned, or given to them by the forecast), and summarises
// the runway, so the read tools serve them from the snapshot instead of
// recomputing them per request.
func focusAndRunway(in scheduler.Input, fc scheduler.Forecast, now time.Time) (map[string]scheduler.FocusResult, *scheduler.RunwayResult) {
	people := map[string]bool{}
	for _, is := range in.Issues {
		if is.State != scheduler.Done && is.Assignee != "" {
			people[is.Assignee] = true
		}
	}
	for _, l := range fc.Load {
		people[l.Login] = true
	}
	out := make(map[string]scheduler.FocusResult, len(people)+1)
	out[""] = scheduler.Focus(in, fc, "", now)
	for login := range people {
		out[login] = scheduler.Focus(in, fc, login, now)
	}
	r := scheduler.Runway(in, fc)
	return out, &r
}
