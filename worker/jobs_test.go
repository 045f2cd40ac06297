package worker

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/commitea/commitea/store/storetest"
)

// lockedBuffer is a log sink River's goroutines may write to while the test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type tickArgs struct{}

func (tickArgs) Kind() string { return "test_tick" }

type tickWorker struct {
	river.WorkerDefaults[tickArgs]
	done chan struct{}
}

func (w *tickWorker) Work(context.Context, *river.Job[tickArgs]) error {
	close(w.done)
	return nil
}

// River's producer reports its job counts at INFO some seconds after a job
// ran, and its maintenance services every run; at the default level they
// are not written, at DEBUG they are.
func TestRiverRoutineLinesAreDebug(t *testing.T) {
	_, pool := storetest.NewDB(t)
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var out lockedBuffer
		w := &tickWorker{done: make(chan struct{})}
		workers := river.NewWorkers()
		river.AddWorker(workers, w)
		jobs, err := NewJobClient(pool, JobClientConfig{Work: true, Workers: workers,
			Log: slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: level}))})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := jobs.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := jobs.Insert(ctx, tickArgs{}, nil); err != nil {
			t.Fatal(err)
		}
		select {
		case <-w.done:
		case <-time.After(30 * time.Second):
			t.Fatal("the job did not run")
		}
		// The producer's count loop ticks every 5 s and logs once the
		// counts changed.
		deadline := time.Now().Add(6500 * time.Millisecond)
		for time.Now().Before(deadline) && !strings.Contains(out.String(), "Producer job counts") {
			time.Sleep(200 * time.Millisecond)
		}
		stop, cancel := context.WithTimeout(ctx, 10*time.Second)
		_ = jobs.Stop(stop)
		cancel()
		logged := out.String()
		switch level {
		case slog.LevelInfo:
			if strings.Contains(logged, "Producer job counts") || strings.Contains(logged, "level=DEBUG") {
				t.Errorf("at INFO, River's routine lines are written:\n%s", logged)
			}
			if !strings.Contains(logged, "River client started") {
				t.Errorf("at INFO, River's start is not written:\n%s", logged)
			}
		default:
			if !strings.Contains(logged, "level=DEBUG") || !strings.Contains(logged, "Producer job counts") {
				t.Errorf("at DEBUG, the producer's job counts are not written:\n%s", logged)
			}
		}
	}
}
