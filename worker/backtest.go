package worker

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/riverqueue/river"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/history"
)

// BacktestArgs asks for a project's own history to be backtested, so the
// calibration view can show how often its ranges came true.
type BacktestArgs struct {
	ProjectID int64 `json:"project_id"`
}

// Kind names the job in River.
func (BacktestArgs) Kind() string { return "backtest" }

// InsertOpts keep one unfinished backtest per project. It runs on the sync
// queue, away from recomputes, whose freshness matters more.
func (BacktestArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueSync, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: unfinishedStates()}}
}

// BacktestWorker replays a project's history with rolling cut-offs and
// stores the scores. The recompute enqueues it whenever the set of finished
// issues changed since the last one.
type BacktestWorker struct {
	river.WorkerDefaults[BacktestArgs]
	Pool            *store.Pool
	Log             *slog.Logger
	People          []scheduler.Person
	DefaultCalendar scheduler.Calendar
	// Trials per cut-off forecast; default 400, enough for coverage.
	Trials int
	Now    func() time.Time
	// Forecaster is the recompute's: the replay of the live model
	// forecasts each cut-off through it, on the project as it stood then.
	// Nil leaves the replay out.
	Forecaster *Forecaster
}

// BacktestRecord is what a backtest stores: the people-less replay built
// for exported histories (kept for comparison with them) and the replay
// of the live model.
type BacktestRecord struct {
	scheduler.BacktestResult
	Live *scheduler.LiveBacktest `json:"live,omitempty"`
}

// backfillWait is how long a backtest waits for the project's first
// import to finish before it looks again.
const backfillWait = 5 * time.Second

// Timeout allows for long histories.
func (w *BacktestWorker) Timeout(*river.Job[BacktestArgs]) time.Duration { return 30 * time.Minute }

// Work backtests one project.
func (w *BacktestWorker) Work(ctx context.Context, job *river.Job[BacktestArgs]) error {
	start := time.Now()
	id := job.Args.ProjectID
	// Not during the project's first import: the backfill writes each
	// issue's history a checkpoint at a time, and a replay before it is
	// done reads the issues without one as they stand today at every
	// cut-off (history.Complete); the recompute after the import would
	// not run another, its closed set being the same. Snoozing does not
	// count as an attempt.
	if busy, err := store.JobUnfinished(ctx, w.Pool, BackfillArgs{}.Kind(), id); err != nil {
		return fmt.Errorf("backtest: %w", err)
	} else if busy {
		return river.JobSnooze(backfillWait)
	}
	var versions []store.IssueVersion
	st, err := loadProjectState(ctx, w.Pool, id, func(tx store.Tx) error {
		var err error
		versions, err = store.IssueHistory(ctx, tx, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("backtest: %w", err)
	}
	project, mirror := st.project, st.mirror
	now := time.Now()
	if w.Now != nil {
		now = w.Now()
	}
	model := buildModel(st.source(w.People, w.DefaultCalendar, 0), now.UTC(), now.UTC())
	items := historyItems(mirror, model.statuses, append(st.transitions, model.transitions...))
	trials := w.Trials
	if trials <= 0 {
		trials = 400
	}
	res, err := scheduler.Backtest(items, scheduler.BacktestOptions{Trials: trials})
	if errors.Is(err, scheduler.ErrHistoryTooShort) {
		// Nothing to do yet: the next change of finished work asks again.
		w.Log.InfoContext(ctx, "no backtest yet: the history is too short for a cut-off", slog.String("project", project.FullName()),
			slog.Int("items", len(items)))
		return nil
	}
	if err != nil {
		return fmt.Errorf("backtest %s: %w", project.FullName(), err)
	}
	rec := BacktestRecord{BacktestResult: res}
	if w.Forecaster != nil {
		live, points, err := w.replay(st, versions, model, items, now.UTC(), trials)
		if err != nil {
			return fmt.Errorf("backtest %s: %w", project.FullName(), err)
		}
		rec.Live = &live
		// The cut-offs' forecasts are each milestone's history before
		// CommiTea watched it (the page shows live points after).
		if err := store.InTx(ctx, w.Pool, func(tx store.Tx) error { return store.ReplaceReplayedForecasts(ctx, tx, id, points) }); err != nil {
			return err
		}
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode backtest: %w", err)
	}
	took := time.Since(start)
	if err := store.PutBacktest(ctx, w.Pool, store.Backtest{ProjectID: id, DoneHash: doneHash(mirror, model.statuses), Duration: took, Result: raw}); err != nil {
		return err
	}
	attrs := []any{slog.String("project", project.FullName()), slog.Int("cutoffs", res.Cutoffs),
		slog.Float64("p80Coverage", res.P80Coverage), slog.Duration("took", took)}
	if l := rec.Live; l != nil {
		attrs = append(attrs, slog.Float64("liveP80Coverage", l.Items.P80Coverage), slog.Int("milestonesJudged", len(l.Record)))
	}
	w.Log.InfoContext(ctx, "backtested", attrs...)
	return nil
}

// Rules of the replay of the live model (scheduler.ScoreLive has the
// scoring): cut-offs as Backtest chooses them, but up to liveHorizon
// before the newest resolution, since work still open is censored rather
// than left out. At each one the project is read as it stood then
// (history.At: issues, their labels, milestones, assignees, state and
// dependencies; the lifecycle transitions recorded by then; capacity
// directives made by then) and forecast on a fresh plan of the cut-off's
// hour through Forecaster.forecast, the recompute's own path: lifecycle,
// samples and calibration of the work done by then, people on their
// calendars, priorities, dependencies.
const liveHorizon = 14 * 24 * time.Hour

// replay runs the live model at every cut-off and scores it; it returns
// the cut-offs' milestone forecasts as history points too.
func (w *BacktestWorker) replay(st projectState, versions []store.IssueVersion, now engineModel, items []scheduler.HistoryItem, end time.Time, trials int) (scheduler.LiveBacktest, []store.MilestonePoint, error) {
	f := *w.Forecaster
	f.Trials, f.Jobs = trials, nil
	versions = history.Complete(st.mirror, versions)
	cutoffs := scheduler.BacktestCutoffs(items, scheduler.BacktestOptions{Horizon: liveHorizon})
	discarded := map[int64]bool{}
	for _, s := range now.statuses {
		if s.Discarded {
			discarded[s.Number] = true
		}
	}
	done := map[int64]time.Time{}
	final := map[int64]store.Issue{}
	for _, i := range st.mirror.Issues {
		final[i.Number] = i
		if !i.IsPull && i.State == "closed" && i.ClosedAt != nil && !discarded[i.Number] {
			done[i.Number] = *i.ClosedAt
		}
	}
	closedMilestones := map[int64]store.Milestone{}
	for _, m := range st.mirror.Milestones {
		if m.State == "closed" {
			closedMilestones[m.ID] = m
		}
	}
	var cuts []scheduler.LiveCutoff
	var points []store.MilestonePoint
	for _, c := range cutoffs {
		at := atCutoff(st, versions, c)
		run, err := f.forecast(at, freshPlan(scheduler.AsOf(c)), c, false)
		if err != nil {
			return scheduler.LiveBacktest{}, nil, fmt.Errorf("cut-off %s: %w", c.Format(time.DateOnly), err)
		}
		points = append(points, milestonePoints(run.forecast, at.mirror, 0)...)
		lc := scheduler.LiveCutoff{At: run.forecast.Now, Forecast: run.forecast, Done: map[int64]time.Time{}, Discarded: discarded,
			Milestones: map[int64]scheduler.LiveMilestone{}}
		for _, is := range run.forecast.Issues {
			if d, ok := done[is.Number]; ok {
				lc.Done[is.Number] = d
			}
		}
		// A closed milestone's work at the cut-off: its open, kept issues
		// still in it at the end; unknown while one of them is not done.
		held := map[int64][]int64{}
		for _, i := range at.mirror.Issues {
			if i.IsPull || i.State != "open" || i.Milestone == nil || discarded[i.Number] {
				continue
			}
			if _, ok := closedMilestones[*i.Milestone]; !ok {
				continue
			}
			if fm := final[i.Number].Milestone; fm == nil || *fm != *i.Milestone {
				continue
			}
			held[*i.Milestone] = append(held[*i.Milestone], i.Number)
		}
		for id, ns := range held {
			var last time.Time
			complete := true
			for _, n := range ns {
				d, ok := done[n]
				if !ok {
					complete = false
					break
				}
				if d.After(last) {
					last = d
				}
			}
			if complete {
				lc.Milestones[id] = scheduler.LiveMilestone{Title: closedMilestones[id].Title, Open: len(ns), Completed: last}
			}
		}
		cuts = append(cuts, lc)
	}
	return scheduler.ScoreLive(cuts, items, scheduler.LiveOptions{End: end, Trials: trials}), points, nil
}

// atCutoff is the project state as it stood at c.
func atCutoff(st projectState, versions []store.IssueVersion, c time.Time) projectState {
	out := projectState{project: st.project, mirror: history.At(st.mirror, versions, c), drawKeys: st.drawKeys}
	for _, t := range st.transitions {
		if !t.At.After(c) {
			out.transitions = append(out.transitions, t)
		}
	}
	for _, cp := range st.caps {
		if !cp.UpdatedAt.After(c) {
			out.caps = append(out.caps, cp)
		}
	}
	return out
}

// historyItems turns the mirror into the backtest's history: every issue
// that is not discarded, with its creation, the start of its first steeping
// (from the transitions), its closing time and its estimate.
func historyItems(m store.Mirror, statuses []scheduler.IssueStatus, transitions []store.Transition) []scheduler.HistoryItem {
	discarded := map[int64]bool{}
	for _, s := range statuses {
		if s.Discarded {
			discarded[s.Number] = true
		}
	}
	started := map[int64]time.Time{}
	for _, t := range transitions {
		if t.To == string(scheduler.Steeping) {
			if _, ok := started[t.Issue]; !ok {
				started[t.Issue] = t.At
			}
		}
	}
	tracked := trackedHours(m.TrackedTimes)
	var out []scheduler.HistoryItem
	for _, i := range m.Issues {
		if i.IsPull || discarded[i.Number] {
			continue
		}
		size, _, _ := scheduler.ParseLabels(i.Labels)
		it := scheduler.HistoryItem{
			ID: fmt.Sprint(i.Number), Number: i.Number, Created: i.CreatedAt, Started: started[i.Number],
			Size: size, TrackedHours: tracked[i.Number], Labels: i.Labels,
		}
		if len(i.Assignees) > 0 {
			it.Assignee = i.Assignees[0]
		}
		if i.ClosedAt != nil && i.State == "closed" {
			it.Resolved = *i.ClosedAt
		}
		out = append(out, it)
	}
	return out
}

// doneHash identifies the finished, kept work of a project: the backtest
// only changes when it does.
func doneHash(m store.Mirror, statuses []scheduler.IssueStatus) string {
	closed := map[int64]time.Time{}
	for _, i := range m.Issues {
		if i.ClosedAt != nil {
			closed[i.Number] = *i.ClosedAt
		}
	}
	var numbers []int64
	for _, s := range statuses {
		if s.State == scheduler.Done && !s.Discarded {
			numbers = append(numbers, s.Number)
		}
	}
	slices.Sort(numbers)
	h := sha256.New()
	var buf [16]byte
	for _, n := range numbers {
		binary.BigEndian.PutUint64(buf[:8], uint64(n))
		binary.BigEndian.PutUint64(buf[8:], uint64(closed[n].Unix()))
		h.Write(buf[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}
