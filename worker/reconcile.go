package worker

import (
	"context"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/commitea/commitea/store"
)

// ReconcileArgs asks for one project's mirror to be repaired from Gitea.
type ReconcileArgs struct {
	ProjectID int64 `json:"project_id"`
}

// Kind names the job in River.
func (ReconcileArgs) Kind() string { return "reconcile" }

// InsertOpts keep at most one unfinished reconcile per project. Finished
// ones do not count, or a completed run would block the next period's.
func (ReconcileArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueSync, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: unfinishedStates()}}
}

func unfinishedStates() []rivertype.JobState {
	return []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
		rivertype.JobStateScheduled, rivertype.JobStateRetryable,
	}
}

// ReconcileWorker runs a Syncer's reconcile.
type ReconcileWorker struct {
	river.WorkerDefaults[ReconcileArgs]
	Syncer *Syncer
}

// Timeout bounds one run; a big first backfill may take a while.
func (w *ReconcileWorker) Timeout(*river.Job[ReconcileArgs]) time.Duration { return 30 * time.Minute }

// Work reconciles one project.
func (w *ReconcileWorker) Work(ctx context.Context, job *river.Job[ReconcileArgs]) error {
	p, err := store.ProjectByID(ctx, w.Syncer.Pool, job.Args.ProjectID)
	if err != nil {
		return err
	}
	return w.Syncer.Reconcile(ctx, p)
}

// ReconcilePeriodicJobs schedules a reconcile of every project each
// interval. They do not run on start: a fresh process enqueues backfills
// where needed instead, and replicas restarting together would otherwise
// all reconcile at once.
func ReconcilePeriodicJobs(projects []store.Project, every time.Duration) []*river.PeriodicJob {
	jobs := make([]*river.PeriodicJob, 0, len(projects))
	for _, p := range projects {
		id := p.ID
		jobs = append(jobs, river.NewPeriodicJob(river.PeriodicInterval(every), func() (river.JobArgs, *river.InsertOpts) {
			return ReconcileArgs{ProjectID: id}, nil
		}, nil))
	}
	return jobs
}
