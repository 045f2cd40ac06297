package worker

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/commitea/commitea/store"
)

// FreshnessWatch closes the one gap River's unique jobs leave: after a
// recompute's last look at the change counter, River still holds the job
// as running until its completer marks it done, and a delivery committed in
// that window has its recompute merged into a job that will not run again.
// The watch finds every project whose change counter is ahead of its
// latest snapshot and enqueues a recompute, so the newest state always
// wins within one interval. It asks again for a project only when its
// counter moved or its previous job was merged into one still pending, so
// a project whose recompute keeps failing is retried by River's own
// backoff, not hammered.
type FreshnessWatch struct {
	Pool     *store.Pool
	Jobs     JobInserter
	Log      *slog.Logger
	Interval time.Duration // default 500ms
}

// Run watches until ctx is done.
func (w *FreshnessWatch) Run(ctx context.Context) {
	interval := w.Interval
	if interval <= 0 {
		interval = 500 * time.Millisecond
	}
	asked := map[int64]int64{} // project → counter a job was inserted for
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := w.check(ctx, asked); err != nil && ctx.Err() == nil {
			w.Log.WarnContext(ctx, "freshness check", slog.Any("error", err))
		}
	}
}

func (w *FreshnessWatch) check(ctx context.Context, asked map[int64]int64) error {
	behind, err := store.ProjectsBehind(ctx, w.Pool)
	if err != nil {
		return err
	}
	for id, counter := range behind {
		if c, ok := asked[id]; ok && c == counter {
			continue
		}
		var merged bool
		err := store.InTx(ctx, w.Pool, func(tx store.Tx) error {
			res, err := w.Jobs.InsertManyTx(ctx, tx, []river.InsertManyParams{{Args: RecomputeArgs{ProjectID: id}}})
			if err == nil && len(res) == 1 {
				merged = res[0].UniqueSkippedAsDuplicate
			}
			return err
		})
		if err != nil {
			return err
		}
		if !merged {
			asked[id] = counter
			w.Log.DebugContext(ctx, "recompute enqueued for a project behind its snapshot", slog.Int64("project", id), slog.Int64("counter", counter))
		}
	}
	return nil
}
