package worker

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/commitea/commitea/store"
)

// JobClient is the River client CommiTea runs on. Its transaction type is
// store.Tx, so a job is enqueued in the same transaction as the data it is
// about.
type JobClient = river.Client[store.Tx]

// JobClientConfig says which jobs this process runs.
type JobClientConfig struct {
	// Work is false for an API-only replica: it inserts jobs but runs none.
	Work       bool
	Workers    *river.Workers
	Periodic   []*river.PeriodicJob
	MaxWorkers int
	Log        *slog.Logger
}

// RescueStuckJobsAfter is River's own rescue window: the backstop behind
// the liveness keeper (worker/liveness), which frees a dead process's jobs
// within seconds. River's rescuer cannot tell a dead job from a slow one, so
// its window sits above the longest job timeout (a backfill's two hours);
// River's default hour would start a second copy of a live backfill.
const RescueStuckJobsAfter = BackfillTimeout + 30*time.Minute

// NewJobClient builds the River client.
func NewJobClient(pool *store.Pool, cfg JobClientConfig) (*JobClient, error) {
	log := cfg.Log
	if log != nil {
		log = slog.New(riverChatter{log.Handler()})
	}
	rc := &river.Config{
		Logger:               log,
		FetchCooldown:        20 * time.Millisecond,
		FetchPollInterval:    500 * time.Millisecond,
		RescueStuckJobsAfter: RescueStuckJobsAfter,
	}
	if cfg.Work {
		n := cfg.MaxWorkers
		if n <= 0 {
			n = 4
		}
		rc.Workers = cfg.Workers
		rc.PeriodicJobs = cfg.Periodic
		rc.Queues = map[string]river.QueueConfig{
			river.QueueDefault: {MaxWorkers: n},
			QueueRecompute:     {MaxWorkers: n},
			QueueSync:          {MaxWorkers: 2},
		}
	}
	c, err := river.NewClient(riverpgxv5.New(pool), rc)
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	return c, nil
}

// riverChatter hands River's log records on, its routine INFO lines one
// level down: the producers report their job counts every few seconds and
// the maintenance services every run, which at INFO buries what an
// operator needs. Job errors and everything at WARN and above pass as
// they are.
type riverChatter struct{ slog.Handler }

// riverRoutine are the message prefixes of River's routine INFO lines.
var riverRoutine = []string{"producer:", "maintenance.", "elector", "notifier", "leadership"}

func (h riverChatter) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo && slices.ContainsFunc(riverRoutine, func(p string) bool { return strings.HasPrefix(r.Message, p) }) {
		r.Level = slog.LevelDebug
	}
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h riverChatter) WithAttrs(as []slog.Attr) slog.Handler {
	return riverChatter{h.Handler.WithAttrs(as)}
}
func (h riverChatter) WithGroup(n string) slog.Handler { return riverChatter{h.Handler.WithGroup(n)} }
