package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/history"
	"github.com/commitea/commitea/worker/standup"
)

// StandupArgs asks for one project's standup of one local day: computed
// and stored once, then handed to one delivery job per sink.
type StandupArgs struct {
	ProjectID int64  `json:"project_id"`
	Day       string `json:"day"` // YYYY-MM-DD in the standup's time zone
}

// Kind names the job in River.
func (StandupArgs) Kind() string { return "standup" }

// InsertOpts keep one unfinished standup job per project and day. Finished
// jobs do not count, so a later run is possible; it finds the stored
// standup and delivered sinks and repeats nothing.
func (StandupArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: unfinishedStates()}}
}

// Standups computes and stores daily standups; the job and the standup
// command share it.
type Standups struct {
	Pool *store.Pool
	Log  *slog.Logger
	// Location is the standup's time zone.
	Location *time.Location
	// Calendar is the default working calendar: its weekdays and holidays
	// decide which days get a standup, its hours the working-day distances.
	Calendar scheduler.Calendar
	// Phraser phrases the report; nil means the template.
	Phraser standup.Phraser
	// Now is the clock; tests set it.
	Now func() time.Time
	// Reconstruct, when set, gives a first standup something to compare
	// against: the baseline of the project as it stood at an earlier
	// instant, read back from its history (Forecaster.BaselineAt).
	Reconstruct func(ctx context.Context, projectID int64, at time.Time) (standup.Baseline, error)
	// RescueWait is how long the standup job waits for the latest
	// snapshot's rescue options (see waitForRescue); 0 is
	// DefaultStandupRescueWait, negative does not wait.
	RescueWait time.Duration
}

// DefaultStandupRescueWait bounds the standup job's wait for rescue
// options still being computed. The search takes about a second per
// milestone at risk, and a newer change restarts it on the newer
// snapshot, so two minutes covers a busy morning; past that the standup
// goes out saying the options are still being computed.
const DefaultStandupRescueWait = 2 * time.Minute

// rescuePoll is how often waitForRescue looks again.
const rescuePoll = time.Second

// BaselineAt is the standup baseline of the project as it stood at at:
// the mirror read back from the issue history (history.At, as the
// backtest's replay reads it), forecast on a fresh plan of that hour
// through the recompute's own path. A first standup compares with it, so
// that a project CommiTea has just started to watch gets a drift too.
func (f *Forecaster) BaselineAt(ctx context.Context, projectID int64, at time.Time) (standup.Baseline, error) {
	var versions []store.IssueVersion
	st, err := loadProjectState(ctx, f.Pool, projectID, func(tx store.Tx) error {
		var err error
		versions, err = store.IssueHistory(ctx, tx, projectID)
		return err
	})
	if err != nil {
		return standup.Baseline{}, err
	}
	then := atCutoff(st, history.Complete(st.mirror, versions), at)
	run, err := f.forecast(then, freshPlan(scheduler.AsOf(at)), at, false)
	if err != nil {
		return standup.Baseline{}, fmt.Errorf("forecast of %s as of %s: %w", st.project.FullName(), at.Format(time.RFC3339), err)
	}
	in := standup.Input{Snapshot: standup.Snapshot{ComputedAt: at, Statuses: run.model.statuses,
		Calibration: run.model.input.Calibration, Forecast: run.forecast}}
	for _, i := range then.mirror.Issues {
		if i.IsPull {
			continue
		}
		si := standup.Issue{Number: i.Number, Title: i.Title}
		if i.Milestone != nil {
			si.Milestone = *i.Milestone
		}
		in.Issues = append(in.Issues, si)
	}
	return standup.BaselineOf(in), nil
}

func (s *Standups) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// ParseDay reads a YYYY-MM-DD day as the standup tables store it.
func ParseDay(day string) (time.Time, error) {
	t, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return time.Time{}, fmt.Errorf("standup day %q: %w", day, err)
	}
	return t, nil
}

// Today is the current local day of the standup.
func (s *Standups) Today() time.Time { return standup.DayOf(s.now(), s.Location) }

// IsStandupDay reports whether day (a local date) gets a standup.
func (s *Standups) IsStandupDay(day time.Time) bool {
	noon := time.Date(day.Year(), day.Month(), day.Day(), 12, 0, 0, 0, s.loc())
	return standup.IsWorkingDay(s.Calendar, noon, s.loc())
}

func (s *Standups) loc() *time.Location {
	if s.Location == nil {
		return time.UTC
	}
	return s.Location
}

// Generated is a computed standup, not yet stored.
type Generated struct {
	Report          standup.Report
	Text            string
	Source          string // standup.SourceModel or standup.SourceTemplate
	SnapshotVersion int64
}

// Generate computes a project's standup for day from its latest snapshot,
// comparing with the latest standup stored before day.
func (s *Standups) Generate(ctx context.Context, projectID int64, day time.Time) (Generated, error) {
	now := s.now()
	version, err := store.LatestSnapshotVersion(ctx, s.Pool, projectID)
	if err != nil {
		return Generated{}, fmt.Errorf("standup of project %d: %w", projectID, err)
	}
	// The parts are read side by side: for a large project the snapshot's
	// per-issue parts are most of the time, and a snapshot version never
	// changes, so the reads agree with each other.
	var (
		project   store.Project
		head      store.SnapshotHead
		prev      *standup.Baseline
		ts        []store.Transition
		issues    []store.StandupIssue
		statuses  []store.SnapshotStatus
		forecasts []store.SnapshotIssueForecast
		errs      [4]error
		wg        sync.WaitGroup
	)
	wg.Go(func() {
		project, prev, ts, issues, errs[0] = s.loadHistory(ctx, projectID, day, now)
	})
	wg.Go(func() { head, errs[1] = store.SnapshotHeadAt(ctx, s.Pool, projectID, version) })
	wg.Go(func() { statuses, errs[2] = store.SnapshotStatuses(ctx, s.Pool, projectID, version) })
	wg.Go(func() { forecasts, errs[3] = store.SnapshotIssueForecasts(ctx, s.Pool, projectID, version) })
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		return Generated{}, fmt.Errorf("load standup inputs of project %d: %w", projectID, err)
	}
	reconstructed := false
	if prev == nil && s.Reconstruct != nil {
		// The first standup: compare with the project as it stood at the
		// previous working day's hour, which is also where its
		// transitions start (loadHistory). Without it the drift says
		// nothing; a failure costs only that.
		since := standup.PreviousWorkingDay(s.Calendar, now, s.loc())
		b, err := s.Reconstruct(ctx, projectID, since)
		if err != nil {
			s.Log.WarnContext(ctx, "first standup: no baseline from the history, so no drift", slog.Int64("project", projectID), slog.Any("error", err))
		} else {
			prev, reconstructed = &b, true
		}
	}
	snap := standup.Snapshot{Version: head.Version, ComputedAt: head.ComputedAt}
	if err := json.Unmarshal(head.Calibration, &snap.Calibration); err != nil {
		return Generated{}, fmt.Errorf("decode calibration of snapshot %d of %s: %w", head.Version, project.FullName(), err)
	}
	if err := json.Unmarshal(head.Milestones, &snap.Forecast.Milestones); err != nil {
		return Generated{}, fmt.Errorf("decode milestones of snapshot %d of %s: %w", head.Version, project.FullName(), err)
	}
	if err := json.Unmarshal(head.Capacity, &snap.Capacity); err != nil {
		return Generated{}, fmt.Errorf("decode capacity of snapshot %d of %s: %w", head.Version, project.FullName(), err)
	}
	if head.Rescue == nil {
		snap.RescuePending = true // the search runs after the snapshot is published
	} else if err := json.Unmarshal(head.Rescue, &snap.Rescue); err != nil {
		return Generated{}, fmt.Errorf("decode rescue of snapshot %d of %s: %w", head.Version, project.FullName(), err)
	}
	var aging struct {
		SLE        *scheduler.SLE          `json:"sle"`
		WindowDays *int                    `json:"windowDays"`
		Age        []scheduler.WorkItemAge `json:"age"`
	}
	if err := json.Unmarshal(head.Aging, &aging); err != nil {
		return Generated{}, fmt.Errorf("decode flow of snapshot %d of %s: %w", head.Version, project.FullName(), err)
	}
	if aging.SLE != nil && aging.WindowDays != nil {
		snap.SLE, snap.FlowWindowDays, snap.Age = *aging.SLE, *aging.WindowDays, aging.Age
	}
	snap.Statuses = make([]scheduler.IssueStatus, len(statuses))
	for i, st := range statuses {
		snap.Statuses[i] = scheduler.IssueStatus{Number: st.Number, State: scheduler.State(st.State), Discarded: st.Discarded,
			Estimate: scheduler.Size(st.Estimate), Blocked: st.Blocked, BlockedBy: st.BlockedBy, Stale: st.Stale}
	}
	snap.Forecast.Issues = make([]scheduler.IssueForecast, len(forecasts))
	for i, f := range forecasts {
		snap.Forecast.Issues[i] = scheduler.IssueForecast{Number: f.Number, P50: f.P50, Assignee: f.Assignee, CriticalFreq: f.CriticalFreq}
	}
	in := standup.Input{
		Project: project.FullName(), Day: time.Date(day.Year(), day.Month(), day.Day(), 12, 0, 0, 0, s.loc()),
		Location: s.loc(), Calendar: s.Calendar, Now: now, Previous: prev, Reconstructed: reconstructed, Snapshot: snap,
		Issues:      make([]standup.Issue, 0, len(issues)),
		Transitions: make([]standup.Transition, 0, len(ts)),
	}
	for _, i := range issues {
		si := standup.Issue{Number: i.Number, Title: i.Title, LastActivity: i.LastActivityAt}
		if i.Milestone != nil {
			si.Milestone = *i.Milestone
		}
		if len(i.Assignees) > 0 {
			si.Assignee = i.Assignees[0]
		}
		in.Issues = append(in.Issues, si)
	}
	for _, t := range ts {
		in.Transitions = append(in.Transitions, standup.Transition{Issue: t.Issue, From: t.From, To: t.To, At: t.At})
	}
	r := standup.Build(in)
	text, source := standup.Text(ctx, r, standup.Phrasing{Phraser: s.Phraser, Location: s.loc(), Known: standup.KnownOf(in), Log: s.Log})
	return Generated{Report: r, Text: text, Source: source, SnapshotVersion: head.Version}, nil
}

// loadHistory reads, in one consistent transaction, the project, the
// baseline of the latest standup before day, the transitions since then
// (since the previous working day for a first standup), and the open
// issues plus those that moved.
func (s *Standups) loadHistory(ctx context.Context, projectID int64, day, now time.Time) (
	project store.Project, prev *standup.Baseline, ts []store.Transition, issues []store.StandupIssue, err error) {
	err = store.InSnapshotTx(ctx, s.Pool, func(tx store.Tx) error {
		var err error
		if project, err = store.ProjectByID(ctx, tx, projectID); err != nil {
			return err
		}
		before, err := store.StandupBefore(ctx, tx, projectID, day)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return err
		default:
			var r struct {
				Baseline standup.Baseline `json:"baseline"`
			}
			if err := json.Unmarshal(before.Content, &r); err != nil {
				return fmt.Errorf("decode standup of %s: %w", before.Day.Format(time.DateOnly), err)
			}
			if !r.Baseline.At.IsZero() {
				prev = &r.Baseline
			}
		}
		since := standup.PreviousWorkingDay(s.Calendar, now, s.loc())
		if prev != nil {
			since = prev.At
		}
		if ts, err = store.TransitionsSince(ctx, tx, projectID, since); err != nil {
			return err
		}
		// Closed issues matter only when they moved since the last standup.
		moved := make([]int64, 0, len(ts))
		for _, t := range ts {
			moved = append(moved, t.Issue)
		}
		issues, err = store.StandupIssues(ctx, tx, projectID, moved)
		return err
	})
	return project, prev, ts, issues, err
}

// waitForRescue waits, within RescueWait, until the latest snapshot's
// rescue options are stored. The recompute publishes a snapshot before it
// searches its rescue options, so a standup computed in between would say
// "still being computed" for every milestone at risk, and that standup
// stands for the day; a short wait gives it the best rescue instead. A
// newer snapshot arriving meanwhile is followed: it is the one the
// standup will read.
func (s *Standups) waitForRescue(ctx context.Context, project store.Project) error {
	wait := s.RescueWait
	if wait == 0 {
		wait = DefaultStandupRescueWait
	}
	deadline := time.Now().Add(wait)
	for {
		mark, err := store.LatestSnapshotMark(ctx, s.Pool, project.ID)
		if err != nil {
			return fmt.Errorf("standup of %s: %w", project.FullName(), err)
		}
		if mark.Rescued {
			return nil
		}
		if !time.Now().Before(deadline) {
			s.Log.InfoContext(ctx, "standup goes out while rescue options are still being computed",
				slog.String("project", project.FullName()), slog.Int64("snapshot", mark.Version), slog.Duration("waited", wait))
			return nil
		}
		t := time.NewTimer(min(rescuePoll, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// StandupSinks says where a project's standups go.
type StandupSinks func(p store.Project) []standup.Sink

// StandupWorker produces a project's standup of a day and enqueues its
// deliveries. On a day that is not a working day it does nothing.
type StandupWorker struct {
	river.WorkerDefaults[StandupArgs]
	Standups *Standups
	Sinks    StandupSinks
	Jobs     JobInserter
}

// Timeout bounds one run: loading a large project and phrasing.
func (w *StandupWorker) Timeout(*river.Job[StandupArgs]) time.Duration { return 5 * time.Minute }

// StandupWaitForImport is how long a standup due before the project's
// first import and snapshot waits before it looks again.
const StandupWaitForImport = time.Minute

// Work produces and stores the standup once, then records and enqueues one
// delivery per configured sink, all in one transaction: a crash leaves
// either nothing or a standup whose deliveries are all on their way. A
// second run reuses the stored standup and skips delivered sinks.
func (w *StandupWorker) Work(ctx context.Context, job *river.Job[StandupArgs]) error {
	s := w.Standups
	day, err := ParseDay(job.Args.Day)
	if err != nil {
		return river.JobCancel(err)
	}
	if !s.IsStandupDay(day) {
		s.Log.InfoContext(ctx, "no standup: not a working day", slog.Int64("project", job.Args.ProjectID), slog.String("day", job.Args.Day))
		return nil
	}
	project, err := store.ProjectByID(ctx, s.Pool, job.Args.ProjectID)
	if err != nil {
		return err
	}
	stored, err := store.StandupOn(ctx, s.Pool, project.ID, day)
	if errors.Is(err, store.ErrNotFound) {
		// A process that starts after standup time runs this before the
		// first import and its snapshot are in: a standup of a
		// half-imported project would stand for the day. That is nothing
		// to do yet, not a failure: the job waits (a snooze uses no
		// attempt and logs no error) and runs once they are.
		sync, err := store.GetSyncState(ctx, s.Pool, project.ID)
		if err != nil {
			return err
		}
		_, err = store.LatestSnapshotVersion(ctx, s.Pool, project.ID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if sync.BackfillDoneAt == nil || err != nil {
			s.Log.InfoContext(ctx, "standup waits for the project's first import and snapshot",
				slog.String("project", project.FullName()), slog.String("day", job.Args.Day), slog.Duration("retry_in", StandupWaitForImport))
			return river.JobSnooze(StandupWaitForImport)
		}
		if err := s.waitForRescue(ctx, project); err != nil {
			return err
		}
		g, err := s.Generate(ctx, project.ID, day)
		if err != nil {
			return err
		}
		content, err := json.Marshal(g.Report)
		if err != nil {
			return fmt.Errorf("encode standup of %s: %w", project.FullName(), err)
		}
		stored = store.DailyStandup{ProjectID: project.ID, Day: day, SnapshotVersion: g.SnapshotVersion, Content: content, Text: g.Text}
		s.Log.InfoContext(ctx, "standup computed", slog.String("project", project.FullName()), slog.String("day", job.Args.Day),
			slog.String("text", g.Source), slog.Int("drift", len(g.Report.Drift)))
	} else if err != nil {
		return err
	}
	var sinks []standup.Sink
	if w.Sinks != nil {
		sinks = w.Sinks(project)
	}
	return store.InTx(ctx, s.Pool, func(tx store.Tx) error {
		if stored.ID == 0 {
			if _, _, err := store.InsertStandupOnce(ctx, tx, stored); err != nil {
				return err
			}
		}
		installation, err := store.InstallationID(ctx, tx)
		if err != nil {
			return err
		}
		var params []river.InsertManyParams
		for _, sink := range sinks {
			key := standup.MessageKey(installation, project.ID, job.Args.Day, sink.Name())
			d, err := store.EnsureStandupDelivery(ctx, tx, project.ID, day, sink.Name(), key)
			if err != nil {
				return err
			}
			if d.Status == store.DeliveryDelivered {
				continue
			}
			params = append(params, river.InsertManyParams{Args: StandupDeliveryArgs{ProjectID: project.ID, Day: job.Args.Day, Sink: sink.Name()}})
		}
		if len(params) == 0 {
			return nil
		}
		if _, err := w.Jobs.InsertManyTx(ctx, tx, params); err != nil {
			return fmt.Errorf("enqueue standup deliveries of %s: %w", project.FullName(), err)
		}
		return nil
	})
}

// StandupPeriodicJobs schedule each project's standup. They do not run on
// start: RunOnStart would produce one on every boot, at any hour; a process
// that was down at standup time catches up through EnqueueMissedStandups.
func StandupPeriodicJobs(projects []store.Project, sched standup.Schedule) []*river.PeriodicJob {
	jobs := make([]*river.PeriodicJob, 0, len(projects))
	for _, p := range projects {
		id := p.ID
		jobs = append(jobs, river.NewPeriodicJob(sched, func() (river.JobArgs, *river.InsertOpts) {
			day := standup.DayOf(time.Now(), sched.Location).Format(time.DateOnly)
			return StandupArgs{ProjectID: id, Day: day}, nil
		}, &river.PeriodicJobOpts{RunOnStart: false}))
	}
	return jobs
}

// StandupInserter enqueues a job outside a transaction.
type StandupInserter interface {
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// EnqueueMissedStandups enqueues today's standup of each project whose
// standup time has passed on a working day without a standup stored, so a
// process that was down at standup time still produces it. The job's
// uniqueness and the stored standup keep this from doubling anything.
func EnqueueMissedStandups(ctx context.Context, jobs StandupInserter, s *Standups, projects []store.Project, sched standup.Schedule) error {
	now := s.now()
	day := s.Today()
	if !s.IsStandupDay(day) {
		return nil
	}
	l := now.In(s.loc())
	at := time.Date(l.Year(), l.Month(), l.Day(), sched.Hour, sched.Minute, 0, 0, s.loc())
	if now.Before(at) {
		return nil
	}
	for _, p := range projects {
		_, err := store.StandupOn(ctx, s.Pool, p.ID, day)
		if err == nil {
			continue
		}
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if _, err := jobs.Insert(ctx, StandupArgs{ProjectID: p.ID, Day: day.Format(time.DateOnly)}, nil); err != nil {
			return fmt.Errorf("enqueue missed standup of %s: %w", p.FullName(), err)
		}
	}
	return nil
}
