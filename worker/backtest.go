package worker

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/riverqueue/river"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
)

// BacktestArgs asks for a project's own history to be backtested, so the
// calibration view can show how often its ranges came true.
type BacktestArgs struct {
	ProjectID int64 `json:"project_id"`
}

// Kind names the job in River.
func (BacktestArgs) Kind() string { return "backtest" }

// InsertOpts keep one unfinished backtest per project. It runs on the sync
// queue, away from recomputes, whose freshness matters more.
func (BacktestArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueSync, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: unfinishedStates()}}
}

// BacktestWorker replays a project's history with rolling cut-offs and
// stores the scores. The recompute enqueues it whenever the set of finished
// issues changed since the last one.
type BacktestWorker struct {
	river.WorkerDefaults[BacktestArgs]
	Pool            *store.Pool
	Log             *slog.Logger
	People          []scheduler.Person
	DefaultCalendar scheduler.Calendar
	// Trials per cut-off forecast; default 400, enough for coverage.
	Trials int
	Now    func() time.Time
}

// Timeout allows for long histories.
func (w *BacktestWorker) Timeout(*river.Job[BacktestArgs]) time.Duration { return 30 * time.Minute }

// Work backtests one project.
func (w *BacktestWorker) Work(ctx context.Context, job *river.Job[BacktestArgs]) error {
	start := time.Now()
	id := job.Args.ProjectID
	st, err := loadProjectState(ctx, w.Pool, id, nil)
	if err != nil {
		return fmt.Errorf("backtest: %w", err)
	}
	project, mirror := st.project, st.mirror
	now := time.Now()
	if w.Now != nil {
		now = w.Now()
	}
	model := buildModel(st.source(w.People, w.DefaultCalendar, 0), now.UTC(), now.UTC())
	items := historyItems(mirror, model.statuses, append(st.transitions, model.transitions...))
	trials := w.Trials
	if trials <= 0 {
		trials = 400
	}
	res, err := scheduler.Backtest(items, scheduler.BacktestOptions{Trials: trials})
	if err != nil {
		return fmt.Errorf("backtest %s: %w", project.FullName(), err)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("encode backtest: %w", err)
	}
	took := time.Since(start)
	if err := store.PutBacktest(ctx, w.Pool, store.Backtest{ProjectID: id, DoneHash: doneHash(mirror, model.statuses), Duration: took, Result: raw}); err != nil {
		return err
	}
	w.Log.InfoContext(ctx, "backtested", slog.String("project", project.FullName()), slog.Int("cutoffs", res.Cutoffs),
		slog.Float64("p80Coverage", res.P80Coverage), slog.Duration("took", took))
	return nil
}

// historyItems turns the mirror into the backtest's history: every issue
// that is not discarded, with its creation, the start of its first steeping
// (from the transitions), its closing time and its estimate.
func historyItems(m store.Mirror, statuses []scheduler.IssueStatus, transitions []store.Transition) []scheduler.HistoryItem {
	discarded := map[int64]bool{}
	for _, s := range statuses {
		if s.Discarded {
			discarded[s.Number] = true
		}
	}
	started := map[int64]time.Time{}
	for _, t := range transitions {
		if t.To == string(scheduler.Steeping) {
			if _, ok := started[t.Issue]; !ok {
				started[t.Issue] = t.At
			}
		}
	}
	tracked := trackedHours(m.TrackedTimes)
	var out []scheduler.HistoryItem
	for _, i := range m.Issues {
		if i.IsPull || discarded[i.Number] {
			continue
		}
		size, _, _ := scheduler.ParseLabels(i.Labels)
		it := scheduler.HistoryItem{
			ID: fmt.Sprint(i.Number), Number: i.Number, Created: i.CreatedAt, Started: started[i.Number],
			Size: size, TrackedHours: tracked[i.Number], Labels: i.Labels,
		}
		if len(i.Assignees) > 0 {
			it.Assignee = i.Assignees[0]
		}
		if i.ClosedAt != nil && i.State == "closed" {
			it.Resolved = *i.ClosedAt
		}
		out = append(out, it)
	}
	return out
}

// doneHash identifies the finished, kept work of a project: the backtest
// only changes when it does.
func doneHash(m store.Mirror, statuses []scheduler.IssueStatus) string {
	closed := map[int64]time.Time{}
	for _, i := range m.Issues {
		if i.ClosedAt != nil {
			closed[i.Number] = *i.ClosedAt
		}
	}
	var numbers []int64
	for _, s := range statuses {
		if s.State == scheduler.Done && !s.Discarded {
			numbers = append(numbers, s.Number)
		}
	}
	slices.Sort(numbers)
	h := sha256.New()
	var buf [16]byte
	for _, n := range numbers {
		binary.BigEndian.PutUint64(buf[:8], uint64(n))
		binary.BigEndian.PutUint64(buf[8:], uint64(closed[n].Unix()))
		h.Write(buf[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}
