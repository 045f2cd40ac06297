package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
)

// The rescue phase of a recompute. The search takes about a second per
// milestone at risk, so it runs after the snapshot is published, never
// before: the snapshot's rescue column stays NULL ("being computed", which
// every reader says) until the whole list is stored at once. A newer
// snapshot supersedes the search in flight: it stops within one candidate
// forecast once the mirror moves past the snapshot or a newer snapshot is
// stored, so it never holds back the recompute that follows.

// rescueSearchTrials is the trial count each candidate of the rescue
// search is forecast at (the snapshot's own, when that is fewer).
const rescueSearchTrials = 2000

// rescueWatchEvery is how often a rescue in flight checks whether its
// snapshot was superseded.
const rescueWatchEvery = 50 * time.Millisecond

// errRescueSuperseded stops a rescue search whose snapshot is no longer
// the one readers will be served.
var errRescueSuperseded = errors.New("the snapshot was superseded")

// attachRescue computes the rescue options of snapshot version (the
// latest run of a recompute, stored from st at its change counter) and
// stores them with it. A search superseded before it finished stores
// nothing and is not an error: the newer snapshot gets its own. A failed
// search is logged and stores an empty list, as a snapshot without
// options; it never fails the forecast already published.
func (f *Forecaster) attachRescue(ctx context.Context, st projectState, run planned, now time.Time, version int64) error {
	search, cancel := context.WithCancelCause(ctx)
	go f.watchSuperseded(search, cancel, st.project.ID, version, st.counter)
	res, err := f.rescue(search, st, run, now)
	superseded := errors.Is(context.Cause(search), errRescueSuperseded)
	cancel(nil)
	switch {
	case err != nil && superseded:
		f.Log.DebugContext(ctx, "rescue search superseded", slog.String("project", st.project.FullName()), slog.Int64("snapshot", version))
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("rescue of snapshot %d of %s: %w", version, st.project.FullName(), ctx.Err())
	case err != nil:
		f.Log.WarnContext(ctx, "rescue search", slog.String("project", st.project.FullName()), slog.Any("error", err))
		res = nil
	}
	// A search that finished is stored even when superseded at its last
	// step: it is complete for its snapshot.
	if res == nil {
		res = []scheduler.MilestoneRescue{}
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("encode rescue of %s: %w", st.project.FullName(), err)
	}
	if _, err := store.PutRescue(ctx, f.Pool, st.project.ID, version, raw); err != nil {
		return err
	}
	return nil
}

// watchSuperseded cancels ctx with errRescueSuperseded once project's
// mirror moves past counter or a snapshot newer than version is stored.
// It returns when ctx is done.
func (f *Forecaster) watchSuperseded(ctx context.Context, cancel context.CancelCauseFunc, projectID, version, counter int64) {
	tick := time.NewTicker(rescueWatchEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		v, err := store.ProjectVersions(ctx, f.Pool, projectID)
		if err != nil {
			continue // a failed check decides nothing; the next one may
		}
		if v.ChangeCounter != counter || v.SnapshotVersion != version {
			cancel(errRescueSuperseded)
			return
		}
	}
}

// rescue runs the rescue search over a recompute's latest run and
// re-scores each option through the write tools' what-if path (the
// changes made to a copy of the mirror, forecast on the snapshot's plan
// at its trial count), so an option's quoted band is what the next
// snapshot reads once its changes land within the plan's hour. It stops
// with ctx's cause once ctx is done.
func (f *Forecaster) rescue(ctx context.Context, st projectState, run planned, now time.Time) ([]scheduler.MilestoneRescue, error) {
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
		Interrupt: func() error { return context.Cause(ctx) },
	}
	res, err := scheduler.Rescue(run.model.input, run.forecast, cfg)
	if err != nil {
		return nil, err
	}
	if len(res) > 0 {
		f.Log.DebugContext(ctx, "rescue search", slog.String("project", st.project.FullName()),
			slog.Int("atRisk", len(res)), slog.Duration("took", time.Since(start)))
	}
	return res, nil
}
