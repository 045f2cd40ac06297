package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/commitea/commitea/store"
)

// RetentionArgs asks for old deliveries, idle conversations and
// long-ended sign-in sessions to be pruned.
type RetentionArgs struct{}

// Kind names the job in River.
func (RetentionArgs) Kind() string { return "retention" }

// InsertOpts keep at most one unfinished prune.
func (RetentionArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: unfinishedStates()}}
}

// pruneBatch is how many rows one DELETE removes; a backlog of months is
// worked off in many short statements rather than one long one.
const pruneBatch = 5000

// RetentionWorker deletes webhook deliveries received more than Deliveries
// ago, conversations idle for more than Conversations and sessions ended
// more than Sessions ago. A zero duration keeps that kind forever.
type RetentionWorker struct {
	river.WorkerDefaults[RetentionArgs]
	Pool          *store.Pool
	Deliveries    time.Duration
	Conversations time.Duration
	// Sessions is how long a sign-in session that ended (expired or
	// revoked) stays listed by `commitea sessions list --all`.
	Sessions time.Duration
	Log      *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Work prunes both kinds; an error leaves what is left for the retry.
func (w *RetentionWorker) Work(ctx context.Context, _ *river.Job[RetentionArgs]) error {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	for _, kind := range []struct {
		name  string
		keep  time.Duration
		prune func(context.Context, store.DBTX, time.Time, int) (int64, error)
	}{
		{"deliveries", w.Deliveries, store.PruneDeliveries},
		{"conversation turns", w.Conversations, store.PruneConversations},
		{"ended sessions", w.Sessions, store.PruneWebSessions},
	} {
		if kind.keep <= 0 {
			continue
		}
		cutoff := now().Add(-kind.keep)
		var total int64
		for {
			n, err := kind.prune(ctx, w.Pool, cutoff, pruneBatch)
			total += n
			if err != nil {
				return fmt.Errorf("retention: %w", err)
			}
			if n < pruneBatch {
				break
			}
		}
		if total > 0 {
			w.Log.Info("pruned", slog.String("kind", kind.name), slog.Int64("rows", total), slog.Time("before", cutoff))
		}
	}
	return nil
}

// RetentionPeriodicJob prunes once a day. It does not run on start: nothing
// is urgent, and every restart would prune again.
func RetentionPeriodicJob() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(24*time.Hour), func() (river.JobArgs, *river.InsertOpts) {
		return RetentionArgs{}, nil
	}, nil)
}
