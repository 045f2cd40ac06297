package worker

import (
	"fmt"
	"log/slog"
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

// NewJobClient builds the River client.
func NewJobClient(pool *store.Pool, cfg JobClientConfig) (*JobClient, error) {
	rc := &river.Config{
		Logger:            cfg.Log,
		FetchCooldown:     20 * time.Millisecond,
		FetchPollInterval: 500 * time.Millisecond,
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
