package worker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
)

// Forecaster is the Recomputer: it loads a project's mirror, runs the
// engine and stores a snapshot. An error leaves the previous snapshot in
// place, and River retries.
type Forecaster struct {
	Pool             *store.Pool
	Log              *slog.Logger
	Trials           int
	StaleWorkingDays int
	DefaultCalendar  scheduler.Calendar
	People           []scheduler.Person
	// Now is the clock; tests set it.
	Now func() time.Time
}

// SnapshotData is what a snapshot holds; read tools serve it.
type SnapshotData struct {
	ComputedAt time.Time `json:"computedAt"`
	Counts     Counts    `json:"counts"`
}

// Counts summarises the mirror a snapshot was computed from.
type Counts struct {
	Issues     int `json:"issues"`
	Open       int `json:"open"`
	Pulls      int `json:"pulls"`
	Milestones int `json:"milestones"`
}

func (f *Forecaster) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// Recompute builds and stores a fresh snapshot of one project.
func (f *Forecaster) Recompute(ctx context.Context, projectID int64) error {
	start := time.Now()
	var mirror store.Mirror
	var counter int64
	// One repeatable-read transaction so the mirror's parts and the change
	// counter agree with each other.
	err := store.InSnapshotTx(ctx, f.Pool, func(tx store.Tx) error {
		var err error
		if counter, err = store.ChangeCounter(ctx, tx, projectID); err != nil {
			return err
		}
		mirror, err = store.LoadMirror(ctx, tx, projectID)
		return err
	})
	if err != nil {
		return err
	}
	data := SnapshotData{ComputedAt: f.now().UTC()}
	for _, i := range mirror.Issues {
		if i.IsPull {
			data.Counts.Pulls++
			continue
		}
		data.Counts.Issues++
		if i.State == "open" {
			data.Counts.Open++
		}
	}
	data.Counts.Milestones = len(mirror.Milestones)
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode snapshot: %w", err)
	}
	in, _ := json.Marshal(mirror)
	sum := sha256.Sum256(in)
	_, err = store.PutSnapshot(ctx, f.Pool, store.Snapshot{
		ProjectID: projectID, InputsHash: hex.EncodeToString(sum[:]), ChangeCounter: counter,
		Duration: time.Since(start), Data: raw,
	})
	return err
}
