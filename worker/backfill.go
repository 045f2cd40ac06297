package worker

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/commitea/commitea/store"
)

// BackfillArgs asks for a project's full history to be imported.
type BackfillArgs struct {
	ProjectID int64 `json:"project_id"`
}

// Kind names the job in River.
func (BackfillArgs) Kind() string { return "backfill" }

// InsertOpts keep one unfinished backfill per project.
func (BackfillArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueSync, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: unfinishedStates()}}
}

// BackfillWorker runs a Syncer's backfill; a crashed run resumes from the
// project's cursor when River retries it.
type BackfillWorker struct {
	river.WorkerDefaults[BackfillArgs]
	Syncer *Syncer
}

// BackfillTimeout allows for large histories; it is the longest timeout of
// any job kind.
const BackfillTimeout = 2 * time.Hour

// Timeout allows for large histories.
func (w *BackfillWorker) Timeout(*river.Job[BackfillArgs]) time.Duration { return BackfillTimeout }

// Work backfills one project.
func (w *BackfillWorker) Work(ctx context.Context, job *river.Job[BackfillArgs]) error {
	p, err := store.ProjectByID(ctx, w.Syncer.Pool, job.Args.ProjectID)
	if err != nil {
		return err
	}
	return w.Syncer.Backfill(ctx, p)
}
