package worker

import (
	"context"
	"log/slog"
	"time"

	"github.com/commitea/commitea/scheduler"
)

// rescueSearchTrials is the trial count each candidate of the rescue
// search is forecast at (the snapshot's own, when that is fewer).
const rescueSearchTrials = 2000

// rescue runs the rescue search over a recompute's latest run and
// re-scores each option through the write tools' what-if path (the
// changes made to a copy of the mirror, forecast on the snapshot's plan
// at its trial count), so an option's quoted band is what the next
// snapshot reads once its changes land within the plan's hour. A failed
// search is logged and leaves the snapshot without rescue options: it
// never holds back the forecast.
func (f *Forecaster) rescue(ctx context.Context, st projectState, run planned, now time.Time) []scheduler.MilestoneRescue {
	start := time.Now()
	cfg := scheduler.RescueConfig{
		Trials:         min(rescueSearchTrials, run.forecast.Trials),
		SnapshotTrials: run.forecast.Trials,
		Rescore: func(cs []scheduler.Change) (scheduler.Forecast, error) {
			next, _, err := applyToMirror(st, cs, now)
			if err != nil {
				return scheduler.Forecast{}, err
			}
			out, err := f.forecast(next, run.plan, now, false)
			return out.forecast, err
		},
	}
	res, err := scheduler.Rescue(run.model.input, run.forecast, cfg)
	if err != nil {
		f.Log.WarnContext(ctx, "rescue search", slog.String("project", st.project.FullName()), slog.Any("error", err))
		return nil
	}
	if len(res) > 0 {
		f.Log.DebugContext(ctx, "rescue search", slog.String("project", st.project.FullName()),
			slog.Int("atRisk", len(res)), slog.Duration("took", time.Since(start)))
	}
	return res
}
