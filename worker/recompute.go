package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/commitea/commitea/store"
)

// RecomputeArgs asks for a project's forecast to be recomputed.
type RecomputeArgs struct {
	ProjectID int64 `json:"project_id"`
}

// Kind names the job in River.
func (RecomputeArgs) Kind() string { return "recompute" }

// InsertOpts make a burst of deliveries coalesce into one job per project.
// River insists that running jobs count for uniqueness, so a delivery that
// arrives mid-run is merged into a job that already read its inputs; the
// worker catches that through the project's change counter and runs again.
// A running job whose process died would hold the uniqueness until River's
// rescuer: the liveness keeper (worker/liveness) frees it within seconds.
func (RecomputeArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue:      QueueRecompute,
		Priority:   1,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: unfinishedStates()},
	}
}

// Queues CommiTea's jobs run on.
const (
	QueueRecompute = "recompute"
	QueueSync      = "sync"
)

// Recomputer turns a project's mirror into a fresh snapshot.
type Recomputer interface {
	Recompute(ctx context.Context, projectID int64) error
}

// RecomputeWorker runs the Recomputer and repeats when the mirror changed
// while it ran.
type RecomputeWorker struct {
	river.WorkerDefaults[RecomputeArgs]
	Pool       *store.Pool
	Recomputer Recomputer
	Log        *slog.Logger
}

// RecomputeTimeout bounds one recompute: well above the seconds a large
// project takes, and short enough that a recompute stuck in a live process
// (a lock wait, a hung query) gives way to a fresh one within minutes.
const RecomputeTimeout = 5 * time.Minute

// Timeout is RecomputeTimeout.
func (w *RecomputeWorker) Timeout(*river.Job[RecomputeArgs]) time.Duration { return RecomputeTimeout }

// Work recomputes one project.
func (w *RecomputeWorker) Work(ctx context.Context, job *river.Job[RecomputeArgs]) error {
	id := job.Args.ProjectID
	before, err := store.ChangeCounter(ctx, w.Pool, id)
	if err != nil {
		return err
	}
	if err := w.Recomputer.Recompute(ctx, id); err != nil {
		return fmt.Errorf("recompute project %d: %w", id, err)
	}
	after, err := store.ChangeCounter(ctx, w.Pool, id)
	if err != nil {
		return err
	}
	if after != before {
		// Changes landed while we ran and their job was merged into
		// this one: run again at once rather than lose them.
		w.Log.DebugContext(ctx, "mirror changed during recompute, running again", slog.Int64("project", id))
		return river.JobSnooze(time.Millisecond)
	}
	return nil
}

// RecomputePeriodicJobs recompute every project each interval even when
// nothing changed in Gitea: time passing moves the forecast (work not done
// today pushes dates) and sets the stale flag.
func RecomputePeriodicJobs(projects []store.Project, every time.Duration) []*river.PeriodicJob {
	jobs := make([]*river.PeriodicJob, 0, len(projects))
	for _, p := range projects {
		id := p.ID
		jobs = append(jobs, river.NewPeriodicJob(river.PeriodicInterval(every), func() (river.JobArgs, *river.InsertOpts) {
			return RecomputeArgs{ProjectID: id}, nil
		}, nil))
	}
	return jobs
}
