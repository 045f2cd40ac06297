package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/metrics"
	"github.com/commitea/commitea/worker/standup"
)

// StandupDeliveryArgs asks for one day's standup of a project to be
// delivered to one sink. One job per sink, so a failing sink is retried on
// its own schedule and never holds the others back.
type StandupDeliveryArgs struct {
	ProjectID int64  `json:"project_id"`
	Day       string `json:"day"`
	Sink      string `json:"sink"`
}

// Kind names the job in River.
func (StandupDeliveryArgs) Kind() string { return "standup_delivery" }

// standupDeliveryAttempts bounds the retries: with the default backoff
// (30 s doubling to at most 1 h) they span about six hours, after which
// that day's standup is stale.
const standupDeliveryAttempts = 12

// InsertOpts keep one unfinished delivery job per project, day and sink.
func (StandupDeliveryArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: standupDeliveryAttempts,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: unfinishedStates()}}
}

// StandupDeliveryWorker delivers a stored standup to one sink and records
// the outcome. A delivery already recorded is not repeated.
type StandupDeliveryWorker struct {
	river.WorkerDefaults[StandupDeliveryArgs]
	Pool  *store.Pool
	Sinks StandupSinks
	Log   *slog.Logger
	// RetryBase is the first retry's delay, doubled each attempt up to
	// RetryMax. Defaults 30 s and 1 h.
	RetryBase time.Duration
	RetryMax  time.Duration
}

// Timeout bounds one attempt.
func (w *StandupDeliveryWorker) Timeout(*river.Job[StandupDeliveryArgs]) time.Duration {
	return 2 * time.Minute
}

// NextRetry backs off exponentially: 30 s, 1 min, 2 min … capped at 1 h.
func (w *StandupDeliveryWorker) NextRetry(job *river.Job[StandupDeliveryArgs]) time.Time {
	base, limit := w.RetryBase, w.RetryMax
	if base <= 0 {
		base = 30 * time.Second
	}
	if limit <= 0 {
		limit = time.Hour
	}
	d := base
	for i := 1; i < job.Attempt && d < limit; i++ {
		d *= 2
	}
	return time.Now().Add(min(d, limit))
}

// Work delivers the standup unless the bookkeeping says it was delivered.
func (w *StandupDeliveryWorker) Work(ctx context.Context, job *river.Job[StandupDeliveryArgs]) error {
	a := job.Args
	day, err := ParseDay(a.Day)
	if err != nil {
		return river.JobCancel(err)
	}
	d, err := store.GetStandupDelivery(ctx, w.Pool, a.ProjectID, day, a.Sink)
	if err != nil {
		return err
	}
	if d.Status == store.DeliveryDelivered {
		return nil
	}
	project, err := store.ProjectByID(ctx, w.Pool, a.ProjectID)
	if err != nil {
		return err
	}
	var sink standup.Sink
	if w.Sinks != nil {
		for _, s := range w.Sinks(project) {
			if s.Name() == a.Sink {
				sink = s
			}
		}
	}
	if sink == nil {
		err := fmt.Errorf("standup sink %q is no longer configured for %s", a.Sink, project.FullName())
		_ = store.RecordStandupFailure(ctx, w.Pool, a.ProjectID, day, a.Sink, err.Error())
		return river.JobCancel(err)
	}
	st, err := store.StandupOn(ctx, w.Pool, a.ProjectID, day)
	if err != nil {
		return err
	}
	report, err := standup.PublicReport(st.Content)
	if err != nil {
		return river.JobCancel(err)
	}
	// The key the delivery was first recorded under: the same on every
	// attempt, and after an upgrade that makes keys differently.
	key := d.MessageKey
	if key == "" {
		installation, err := store.InstallationID(ctx, w.Pool)
		if err != nil {
			return err
		}
		key = standup.MessageKey(installation, a.ProjectID, a.Day, a.Sink)
	}
	msg := standup.Message{Project: project.FullName(), Day: a.Day, Text: st.Text, Report: report, Key: key}
	if err := sink.Deliver(ctx, msg); err != nil {
		metrics.StandupDelivery(a.Sink, "error")
		if rerr := store.RecordStandupFailure(context.WithoutCancel(ctx), w.Pool, a.ProjectID, day, a.Sink, err.Error()); rerr != nil {
			err = errors.Join(err, rerr)
		}
		level := slog.LevelWarn
		if job.Attempt >= job.MaxAttempts {
			level = slog.LevelError
		}
		w.Log.Log(ctx, level, "standup delivery failed", slog.String("project", project.FullName()), slog.String("day", a.Day),
			slog.String("sink", a.Sink), slog.Int("attempt", job.Attempt), slog.Any("error", err))
		return fmt.Errorf("deliver standup of %s to %s: %w", project.FullName(), a.Sink, err)
	}
	metrics.StandupDelivery(a.Sink, "ok")
	// The send succeeded: record it even if the job's context ends now.
	if _, err := store.MarkStandupDelivered(context.WithoutCancel(ctx), w.Pool, a.ProjectID, day, a.Sink); err != nil {
		return err
	}
	w.Log.InfoContext(ctx, "standup delivered", slog.String("project", project.FullName()), slog.String("day", a.Day), slog.String("sink", a.Sink))
	return nil
}
