package worker

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/history"
)

// GiteaReader is what backfill and reconcile read from Gitea.
type GiteaReader interface {
	ListIssues(ctx context.Context, owner, repo string, since time.Time) ([]gitea.Issue, error)
	ListPulls(ctx context.Context, owner, repo string) ([]gitea.PullRequest, error)
	ListLabels(ctx context.Context, owner, repo string) ([]gitea.Label, error)
	ListMilestones(ctx context.Context, owner, repo string) ([]gitea.Milestone, error)
	ListDependencies(ctx context.Context, owner, repo string, index int64) ([]gitea.Issue, error)
	ListTrackedTimes(ctx context.Context, owner, repo string, since time.Time) ([]gitea.TrackedTime, error)
	ListComments(ctx context.Context, owner, repo string, since time.Time) ([]gitea.Comment, error)
	IssueTimeline(ctx context.Context, owner, repo string, index int64) ([]gitea.TimelineComment, error)
}

// TimelineReplayer rebuilds an issue's lifecycle transitions from its
// timeline; the lifecycle rules live in the scheduler. A backfill calls it
// from several goroutines at once.
type TimelineReplayer interface {
	Replay(repo string, issue store.Issue, deps []store.Dependency, events []store.TimelineEvent, pulls []store.Issue, now time.Time) []store.Transition
}

// Syncer brings a project's mirror in line with Gitea: a full backfill the
// first time, then cheap reconciles of what changed since the last sync.
type Syncer struct {
	Pool  *store.Pool
	Gitea GiteaReader
	Jobs  JobInserter
	Log   *slog.Logger
	// Replayer, when set, rebuilds transitions during backfill.
	Replayer TimelineReplayer
	// Now is the clock; tests set it.
	Now func() time.Time
	// Progress, when set, hears how far a backfill is (done of total issues).
	Progress func(done, total int)
	// Checkpoint is how many issues a backfill imports between commits of
	// its cursor, so a crash loses at most that much work; default 50.
	Checkpoint int
	// Concurrency is how many issues' details (dependencies, timeline) are
	// read from Gitea at once; default DefaultSyncConcurrency. The client
	// bounds its requests in flight and waits out 429s on its own, so this
	// sets how much of that bound one sync may use.
	Concurrency int
}

// DefaultSyncConcurrency matches the Gitea client's default bound on
// requests in flight.
const DefaultSyncConcurrency = gitea.DefaultMaxConcurrent

// sinceOverlap re-reads a little before the last sync: Gitea's updated_at
// has one-second resolution and clocks drift, and re-reading is harmless.
const sinceOverlap = 2 * time.Minute

const defaultCheckpoint = 50

func (s *Syncer) concurrency() int {
	if s.Concurrency > 0 {
		return s.Concurrency
	}
	return DefaultSyncConcurrency
}

func (s *Syncer) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Backfill imports a project's full history: labels, milestones, issues,
// pull requests, dependencies, tracked time, comments and each issue's
// timeline. It is idempotent, and resumes from its cursor after a crash.
func (s *Syncer) Backfill(ctx context.Context, p store.Project) error {
	started := s.now()
	state, err := store.GetSyncState(ctx, s.Pool, p.ID)
	if err != nil {
		return err
	}
	if err := s.syncWhole(ctx, p, time.Time{}); err != nil {
		return err
	}
	issues, err := s.Gitea.ListIssues(ctx, p.Owner, p.Name, time.Time{})
	if err != nil {
		return err
	}
	pulls, err := s.Gitea.ListPulls(ctx, p.Owner, p.Name)
	if err != nil {
		return err
	}
	rows := issueRows(issues, pulls)
	if err := store.InTx(ctx, s.Pool, func(tx store.Tx) error {
		return store.UpsertIssues(ctx, tx, p.ID, writes(rows))
	}); err != nil {
		return fmt.Errorf("backfill %s: %w", p.FullName(), err)
	}
	var pullRows []store.Issue
	for _, r := range rows {
		if r.IsPull {
			pullRows = append(pullRows, r)
		}
	}
	links := linkPulls(pullRows, p.FullName())
	// Per-issue detail, resuming after the cursor: fetched up to
	// Concurrency issues at a time, committed in number order a checkpoint
	// at a time, so the cursor only ever passes issues that are written.
	total := len(rows)
	every := s.Checkpoint
	if every <= 0 {
		every = defaultCheckpoint
	}
	var todo []store.Issue
	for _, r := range rows {
		if r.Number > state.BackfillCursor {
			todo = append(todo, r)
		}
	}
	done := total - len(todo)
	if done > 0 {
		s.progress(done, total)
	}
	// Each issue's detail is derived where it is fetched: the replay and
	// the history are CPU work that would otherwise hold up the commits,
	// which run one at a time.
	var chunk []store.IssueDetail
	commit := func() error {
		cursor := chunk[len(chunk)-1].Number
		err := store.InTx(ctx, s.Pool, func(tx store.Tx) error {
			if err := store.ReplaceIssueDetails(ctx, tx, p.ID, chunk); err != nil {
				return err
			}
			state.BackfillCursor = cursor
			return store.PutSyncState(ctx, tx, state)
		})
		if err != nil {
			return fmt.Errorf("backfill %s up to #%d: %w", p.FullName(), cursor, err)
		}
		done += len(chunk)
		chunk = chunk[:0]
		s.progress(done, total)
		return nil
	}
	fetch := func(ctx context.Context, k int) (store.IssueDetail, error) {
		r := todo[k]
		deps, err := s.dependencies(ctx, p, r.Number)
		if err != nil {
			return store.IssueDetail{}, err
		}
		tl, err := s.Gitea.IssueTimeline(ctx, p.Owner, p.Name, r.Number)
		if err != nil {
			return store.IssueDetail{}, err
		}
		evs := make([]store.TimelineEvent, 0, len(tl))
		for _, c := range tl {
			evs = append(evs, c.Row(r.Number))
		}
		d := store.IssueDetail{Number: r.Number, Dependencies: deps, Timeline: evs, History: history.FromTimeline(r, deps, evs)}
		if s.Replayer != nil && !r.IsPull {
			d.Replayed = true
			d.Transitions = s.Replayer.Replay(p.FullName(), r, deps, evs, links.of(r), started)
		}
		return d, nil
	}
	err = fetchInOrder(ctx, len(todo), s.concurrency(), every, fetch, func(_ int, d store.IssueDetail) error {
		chunk = append(chunk, d)
		if len(chunk) < every {
			return nil
		}
		return commit()
	})
	if err == nil && len(chunk) > 0 {
		err = commit()
	}
	if err != nil {
		return err
	}
	times, err := s.Gitea.ListTrackedTimes(ctx, p.Owner, p.Name, time.Time{})
	if err != nil {
		return err
	}
	comments, err := s.Gitea.ListComments(ctx, p.Owner, p.Name, time.Time{})
	if err != nil {
		return err
	}
	return store.InTx(ctx, s.Pool, func(tx store.Tx) error {
		if err := store.UpsertTrackedTimes(ctx, tx, p.ID, gitea.Rows[gitea.TrackedTime, store.TrackedTime](times)); err != nil {
			return err
		}
		if err := s.writeComments(ctx, tx, p.ID, comments); err != nil {
			return err
		}
		state.LastSyncedAt = &started
		state.BackfillDoneAt = &started
		if err := store.PutSyncState(ctx, tx, state); err != nil {
			return err
		}
		return s.markChanged(ctx, tx, p.ID)
	})
}

// Reconcile repairs the mirror from what changed in Gitea since the last
// sync: issues and pull requests by their updated_at (adding a dependency
// or tracked time bumps it too), with their dependencies, plus labels and
// milestones listed whole, since Gitea sends no webhook for those. Without
// a previous sync it runs a backfill.
func (s *Syncer) Reconcile(ctx context.Context, p store.Project) error {
	state, err := store.GetSyncState(ctx, s.Pool, p.ID)
	if err != nil {
		return err
	}
	if state.LastSyncedAt == nil || state.BackfillDoneAt == nil {
		return s.Backfill(ctx, p)
	}
	started := s.now()
	since := state.LastSyncedAt.Add(-sinceOverlap)
	labels, err := s.Gitea.ListLabels(ctx, p.Owner, p.Name)
	if err != nil {
		return err
	}
	milestones, err := s.Gitea.ListMilestones(ctx, p.Owner, p.Name)
	if err != nil {
		return err
	}
	issues, err := s.Gitea.ListIssues(ctx, p.Owner, p.Name, since)
	if err != nil {
		return err
	}
	var pulls []gitea.PullRequest
	changedPull := map[int64]bool{}
	for _, i := range issues {
		if i.IsPull() {
			changedPull[i.Number] = true
		}
	}
	if len(changedPull) > 0 {
		all, err := s.Gitea.ListPulls(ctx, p.Owner, p.Name)
		if err != nil {
			return err
		}
		for _, pr := range all {
			if changedPull[pr.Number] {
				pulls = append(pulls, pr)
			}
		}
	}
	rows := issueRows(issues, pulls)
	deps := make(map[int64][]store.Dependency, len(rows))
	err = fetchInOrder(ctx, len(rows), s.concurrency(), len(rows),
		func(ctx context.Context, k int) ([]store.Dependency, error) {
			return s.dependencies(ctx, p, rows[k].Number)
		},
		func(k int, d []store.Dependency) error { deps[rows[k].Number] = d; return nil })
	if err != nil {
		return err
	}
	times, err := s.Gitea.ListTrackedTimes(ctx, p.Owner, p.Name, since)
	if err != nil {
		return err
	}
	comments, err := s.Gitea.ListComments(ctx, p.Owner, p.Name, since)
	if err != nil {
		return err
	}
	// Issue rows first, the shared label and milestone rows after them, as
	// the webhook ingester writes them, so the two never lock the same
	// rows in opposite orders.
	return store.InTx(ctx, s.Pool, func(tx store.Tx) error {
		if err := store.UpsertIssues(ctx, tx, p.ID, writes(rows)); err != nil {
			return err
		}
		for _, r := range rows {
			if err := store.ReplaceDependencies(ctx, tx, p.ID, r.Number, deps[r.Number]); err != nil {
				return err
			}
		}
		if err := store.UpsertTrackedTimes(ctx, tx, p.ID, gitea.Rows[gitea.TrackedTime, store.TrackedTime](times)); err != nil {
			return err
		}
		if err := s.writeComments(ctx, tx, p.ID, comments); err != nil {
			return err
		}
		if err := replaceWhole(ctx, tx, p.ID, labels, milestones); err != nil {
			return err
		}
		state.LastSyncedAt = &started
		if err := store.PutSyncState(ctx, tx, state); err != nil {
			return err
		}
		return s.markChanged(ctx, tx, p.ID)
	})
}

// syncWhole replaces the small, whole-listed parts: labels and milestones.
func (s *Syncer) syncWhole(ctx context.Context, p store.Project, _ time.Time) error {
	labels, err := s.Gitea.ListLabels(ctx, p.Owner, p.Name)
	if err != nil {
		return err
	}
	milestones, err := s.Gitea.ListMilestones(ctx, p.Owner, p.Name)
	if err != nil {
		return err
	}
	return store.InTx(ctx, s.Pool, func(tx store.Tx) error {
		return replaceWhole(ctx, tx, p.ID, labels, milestones)
	})
}

// replaceWhole writes the labels and milestones Gitea listed as the whole
// set: ones deleted in Gitea leave the mirror too.
func replaceWhole(ctx context.Context, tx store.Tx, projectID int64, labels []gitea.Label, milestones []gitea.Milestone) error {
	if err := store.ReplaceLabels(ctx, tx, projectID, gitea.Rows[gitea.Label, store.Label](labels)); err != nil {
		return err
	}
	return store.ReplaceMilestones(ctx, tx, projectID, gitea.Rows[gitea.Milestone, store.Milestone](milestones))
}

func (s *Syncer) dependencies(ctx context.Context, p store.Project, number int64) ([]store.Dependency, error) {
	blockers, err := s.Gitea.ListDependencies(ctx, p.Owner, p.Name, number)
	if err != nil {
		return nil, err
	}
	deps := make([]store.Dependency, 0, len(blockers))
	for _, b := range blockers {
		d := store.Dependency{Issue: number, DependsOn: b.Number}
		if b.Repository != nil && b.Repository.FullName != "" && !strings.EqualFold(b.Repository.FullName, p.FullName()) {
			d.DependsOnRepo = b.Repository.FullName
		}
		deps = append(deps, d)
	}
	return deps, nil
}

func (s *Syncer) writeComments(ctx context.Context, tx store.Tx, projectID int64, comments []gitea.Comment) error {
	rows := gitea.Rows[gitea.Comment, store.Comment](comments)
	if err := store.UpsertComments(ctx, tx, projectID, rows); err != nil {
		return err
	}
	for _, c := range rows {
		if c.Issue == 0 {
			continue
		}
		if err := store.TouchIssue(ctx, tx, projectID, c.Issue, c.UpdatedAt, ""); err != nil {
			return err
		}
	}
	return nil
}

// markChanged moves the change counter and enqueues a recompute, in the
// transaction of the writes it is about.
func (s *Syncer) markChanged(ctx context.Context, tx store.Tx, projectID int64) error {
	if err := store.BumpChangeCounters(ctx, tx, []int64{projectID}); err != nil {
		return err
	}
	if s.Jobs == nil {
		return nil
	}
	if _, err := s.Jobs.InsertManyTx(ctx, tx, []river.InsertManyParams{{Args: RecomputeArgs{ProjectID: projectID}}}); err != nil {
		return fmt.Errorf("enqueue recompute: %w", err)
	}
	return nil
}

func (s *Syncer) progress(done, total int) {
	if s.Progress != nil {
		s.Progress(done, total)
	}
}

// issueRows merges the issues listing with the pulls listing: a pull
// request's row comes from the pulls API, which knows its head branch, as
// its webhook does.
func issueRows(issues []gitea.Issue, pulls []gitea.PullRequest) []store.Issue {
	byNumber := make(map[int64]store.Issue, len(issues))
	for _, i := range issues {
		byNumber[i.Number] = i.Row()
	}
	for _, pr := range pulls {
		row := pr.Row()
		if prev, ok := byNumber[pr.Number]; ok && prev.UpdatedAt.After(row.UpdatedAt) {
			row.UpdatedAt = prev.UpdatedAt
		}
		byNumber[pr.Number] = row
	}
	out := make([]store.Issue, 0, len(byNumber))
	for _, r := range byNumber {
		out = append(out, r)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Number < out[b].Number })
	return out
}

func writes(rows []store.Issue) []store.IssueWrite {
	out := make([]store.IssueWrite, len(rows))
	for i, r := range rows {
		out[i] = store.IssueWrite{Issue: r}
	}
	return out
}

// fetchInOrder calls fetch for 0..n-1 on up to workers goroutines, at most
// ahead results beyond the one consume waits for, and hands every result
// to consume in index order on the calling goroutine. The first failure in
// index order is returned after consume has had every result before it, so
// a caller committing as it consumes keeps all the work that succeeded in
// order; nothing is fetched past a failure.
func fetchInOrder[T any](ctx context.Context, n, workers, ahead int, fetch func(context.Context, int) (T, error), consume func(int, T) error) error {
	if n == 0 {
		return nil
	}
	workers = max(1, min(workers, n))
	ahead = max(ahead, workers)
	type result struct {
		v    T
		err  error
		done chan struct{}
	}
	results := make([]result, n)
	for i := range results {
		results[i].done = make(chan struct{})
	}
	fetchCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	// stop is the lowest index that failed: nothing after it is handed out.
	var stop atomic.Int64
	stop.Store(int64(n))
	window := make(chan struct{}, ahead) // a token per result not yet consumed
	next := make(chan int)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(next)
		for i := 0; i < n && int64(i) <= stop.Load(); i++ {
			select {
			case window <- struct{}{}:
			case <-fetchCtx.Done():
				return
			}
			select {
			case next <- i:
			case <-fetchCtx.Done():
				return
			}
		}
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if int64(i) > stop.Load() {
					continue
				}
				v, err := fetch(fetchCtx, i)
				results[i].v, results[i].err = v, err
				if err != nil {
					for {
						cur := stop.Load()
						if int64(i) >= cur || stop.CompareAndSwap(cur, int64(i)) {
							break
						}
					}
				}
				close(results[i].done)
			}
		}()
	}
	for i := range n {
		select {
		case <-results[i].done:
		case <-ctx.Done():
			return ctx.Err()
		}
		r := results[i]
		results[i] = result{}
		if r.err != nil {
			return r.err
		}
		if err := consume(i, r.v); err != nil {
			return err
		}
		<-window
	}
	return nil
}

// pullLinks indexes pull requests by the issues they link to, through a
// closing reference or a shared head branch: those are the only pulls an
// issue's replay looks at, and handing every issue every pull made a
// backfill quadratic (5,000 issues and 2,500 pulls: each pull's text parsed
// for closing references 5,000 times).
type pullLinks struct {
	byIssue  map[int64][]int // indexes into pulls
	byBranch map[string][]int
	pulls    []store.Issue
}

func linkPulls(pulls []store.Issue, repo string) pullLinks {
	l := pullLinks{byIssue: map[int64][]int{}, byBranch: map[string][]int{}, pulls: pulls}
	for k, p := range pulls {
		refs := append(slices.Clone(p.ClosingRefs), scheduler.ParseClosingRefs(p.Title+"\n"+p.Body, repo)...)
		slices.Sort(refs)
		for _, n := range slices.Compact(refs) {
			l.byIssue[n] = append(l.byIssue[n], k)
		}
		if b := headBranch(p.Ref); b != "" {
			l.byBranch[b] = append(l.byBranch[b], k)
		}
	}
	return l
}

// of returns the pulls linked to issue, in the order given to linkPulls.
func (l pullLinks) of(issue store.Issue) []store.Issue {
	ks := slices.Clone(l.byIssue[issue.Number])
	if b := headBranch(issue.Ref); b != "" {
		ks = append(ks, l.byBranch[b]...)
	}
	slices.Sort(ks)
	ks = slices.Compact(ks)
	out := make([]store.Issue, len(ks))
	for i, k := range ks {
		out[i] = l.pulls[k]
	}
	return out
}

// headBranch is a ref as a branch name, the way the lifecycle rules
// compare an issue's ref with a pull's head.
func headBranch(ref string) string {
	return strings.TrimPrefix(strings.TrimSpace(ref), "refs/heads/")
}
