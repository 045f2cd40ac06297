package tools_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker"
)

// seededProject seeds a generated project of shape, named owner/name, into
// a fresh database as of now and recomputes its snapshot with trials (0:
// the forecaster's default), as the tool tests and benchmarks start. The
// forecaster it returns logs nowhere; its Log serves the tools too.
func seededProject(tb testing.TB, owner, name string, shape storetest.ProjectShape, now time.Time, trials int) (*store.Pool, store.Project, *worker.Forecaster) {
	tb.Helper()
	ctx := context.Background()
	_, pool := storetest.NewDB(tb)
	p, err := store.EnsureProject(ctx, pool, owner, name)
	if err != nil {
		tb.Fatal(err)
	}
	if err := storetest.SeedProject(ctx, pool, p.ID, shape, now); err != nil {
		tb.Fatal(err)
	}
	f := &worker.Forecaster{Pool: pool, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Trials: trials, Now: func() time.Time { return now }}
	if err := f.Recompute(ctx, p.ID); err != nil {
		tb.Fatal(err)
	}
	return pool, p, f
}
