package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/gitea"
)

// Incoming is a verified delivery waiting to be written.
type Incoming struct {
	DeliveryID string
	Payload    []byte
	Change     gitea.Change
}

// ErrIngestClosed is returned for deliveries submitted after shutdown began.
var ErrIngestClosed = errors.New("ingest is shutting down")

// JobInserter enqueues River jobs inside a transaction.
type JobInserter interface {
	InsertManyTx(ctx context.Context, tx store.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
}

// IngesterConfig tunes the group commit.
type IngesterConfig struct {
	// Writers is how many transactions run at once. Two keep the database
	// busy while one commits; more only queue on the same rows.
	Writers int
	// MaxBatch caps the deliveries written in one transaction.
	MaxBatch int
}

// Ingester writes webhook deliveries to Postgres by group commit: handlers
// submit and wait, a few writers take whatever is queued, write it in one
// transaction (delivery rows, mirror changes, change counters and one
// recompute job per project), commit with synchronous commit, and only then
// answer every waiting handler. One transaction per request would make
// every request queue on the lock of the project's single pending job row.
//
// Each writer has its own queue and takes the deliveries of its share of
// the issues (by issue number), so two writers' transactions never write
// the same issue row: an issue row locked by one would hold the other
// until the first commits, and with a few hundred busy issues nearly every
// pair of batches shares one, which made the writers take turns instead of
// overlapping. What they still share (labels, milestones, the change
// counter, the recompute job) is written last, just before the commit.
type Ingester struct {
	pool   *store.Pool
	jobs   JobInserter
	log    *slog.Logger
	cfg    IngesterConfig
	queues []chan *submission
	mu     sync.RWMutex
	byName map[string]int64 // lower-cased owner/repo -> project id
	stop   chan struct{}
	wg     sync.WaitGroup
	closed bool
	// afterWrite, when set, runs inside the transaction after the writes and
	// before the commit; tests use it to cut the transaction short.
	afterWrite func(ctx context.Context, tx store.Tx) error
}

type submission struct {
	in   Incoming
	done chan error
}

// NewIngester prepares an ingester for the given projects.
func NewIngester(pool *store.Pool, jobs JobInserter, projects []store.Project, log *slog.Logger, cfg IngesterConfig) *Ingester {
	if cfg.Writers <= 0 {
		cfg.Writers = 2
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 256
	}
	in := &Ingester{
		pool: pool, jobs: jobs, log: log, cfg: cfg,
		queues: make([]chan *submission, cfg.Writers),
		byName: map[string]int64{},
		stop:   make(chan struct{}),
	}
	for k := range in.queues {
		in.queues[k] = make(chan *submission, cfg.MaxBatch*2)
	}
	for _, p := range projects {
		in.byName[strings.ToLower(p.FullName())] = p.ID
	}
	return in
}

// Start runs the writers until Close.
func (in *Ingester) Start() {
	for _, q := range in.queues {
		in.wg.Add(1)
		go in.writeLoop(q)
	}
}

// Close stops taking deliveries, writes what is queued and waits for the
// writers.
func (in *Ingester) Close() {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return
	}
	in.closed = true
	close(in.stop)
	in.mu.Unlock()
	in.wg.Wait()
}

// ProjectID returns the id of a configured project by its "owner/repo" name.
func (in *Ingester) ProjectID(fullName string) (int64, bool) {
	in.mu.RLock()
	defer in.mu.RUnlock()
	id, ok := in.byName[strings.ToLower(fullName)]
	return id, ok
}

// Submit queues a delivery and waits until it is committed (nil) or failed.
// A nil answer means the delivery is durably stored: only then may the
// handler acknowledge it.
func (in *Ingester) Submit(ctx context.Context, d Incoming) error {
	s := &submission{in: d, done: make(chan error, 1)}
	in.mu.RLock()
	if in.closed {
		in.mu.RUnlock()
		return ErrIngestClosed
	}
	select {
	case in.queues[in.shard(d)] <- s:
	case <-ctx.Done():
		in.mu.RUnlock()
		return ctx.Err()
	}
	in.mu.RUnlock()
	select {
	case err := <-s.done:
		return err
	case <-ctx.Done():
		// The write may still commit; Gitea's redelivery is then a
		// harmless duplicate.
		return ctx.Err()
	}
}

// shard is the writer of a delivery: by its issue, so one issue's
// deliveries are written by one writer in arrival order; by its id when it
// names no issue.
func (in *Ingester) shard(d Incoming) int {
	n := issueOf(d.Change)
	if n <= 0 {
		h := fnv.New32a()
		_, _ = h.Write([]byte(d.DeliveryID))
		n = int64(h.Sum32())
	}
	return int(n % int64(len(in.queues)))
}

func (in *Ingester) writeLoop(queue chan *submission) {
	defer in.wg.Done()
	batch := make([]*submission, 0, in.cfg.MaxBatch)
	for {
		batch = batch[:0]
		select {
		case s := <-queue:
			batch = append(batch, s)
		case <-in.stop:
			// Drain what was queued before shutdown so no waiting
			// handler is left without an answer.
			for {
				select {
				case s := <-queue:
					batch = append(batch, s)
					if len(batch) == in.cfg.MaxBatch {
						in.writeAndAnswer(batch)
						batch = batch[:0]
					}
				default:
					if len(batch) > 0 {
						in.writeAndAnswer(batch)
					}
					return
				}
			}
		}
	fill:
		for len(batch) < in.cfg.MaxBatch {
			select {
			case s := <-queue:
				batch = append(batch, s)
			default:
				break fill
			}
		}
		in.writeAndAnswer(batch)
	}
}

func (in *Ingester) writeAndAnswer(batch []*submission) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := in.write(ctx, batch)
	if err != nil && len(batch) > 1 {
		// One bad delivery must not fail its neighbours: retry alone.
		in.log.WarnContext(ctx, "ingest batch failed, retrying one by one", slog.Int("size", len(batch)), slog.Any("error", err))
		for _, s := range batch {
			s.done <- in.write(ctx, []*submission{s})
		}
		return
	}
	for _, s := range batch {
		s.done <- err
	}
}

func (in *Ingester) write(ctx context.Context, batch []*submission) error {
	return store.InTx(ctx, in.pool, func(tx store.Tx) error {
		rows := make([]store.Delivery, len(batch))
		for i, s := range batch {
			c := s.in.Change
			rows[i] = store.Delivery{ID: s.in.DeliveryID, Event: c.Event, Action: c.Action, Repo: c.Repo, Payload: s.in.Payload}
			if c.Ignored {
				rows[i].Ignored = c.Reason
				if rows[i].Ignored == "" {
					rows[i].Ignored = "ignored"
				}
			}
			if id, ok := in.ProjectID(c.Repo); ok {
				rows[i].ProjectID = &id
			} else if !c.Ignored {
				rows[i].Ignored = "repository not configured"
			}
		}
		fresh, err := store.InsertDeliveries(ctx, tx, rows)
		if err != nil {
			return err
		}
		// Each project's changes are gathered first and written in one
		// stable order (see queueChanges), so two writers never take the
		// same rows in opposite orders.
		changes := map[int64][]pendingChange{}
		var order []int64
		for i, s := range batch {
			r := rows[i]
			if !fresh[r.ID] || r.ProjectID == nil || r.Ignored != "" {
				continue
			}
			// A delivery id repeated inside one batch is fresh once.
			delete(fresh, r.ID)
			if _, ok := changes[*r.ProjectID]; !ok {
				order = append(order, *r.ProjectID)
			}
			changes[*r.ProjectID] = append(changes[*r.ProjectID], pendingChange{delivery: r.ID, change: s.in.Change})
		}
		slices.Sort(order)
		for _, id := range order {
			mb := store.NewMirrorBatch(id)
			queueChanges(mb, changes[id])
			if err := mb.Run(ctx, tx); err != nil {
				return err
			}
		}
		if len(order) > 0 {
			if err := store.BumpChangeCounters(ctx, tx, order); err != nil {
				return err
			}
			params := make([]river.InsertManyParams, len(order))
			for i, id := range order {
				params[i] = river.InsertManyParams{Args: RecomputeArgs{ProjectID: id}}
			}
			if _, err := in.jobs.InsertManyTx(ctx, tx, params); err != nil {
				return fmt.Errorf("enqueue recompute: %w", err)
			}
		}
		if in.afterWrite != nil {
			return in.afterWrite(ctx, tx)
		}
		return nil
	})
}

type pendingChange struct {
	delivery string
	change   gitea.Change
}

// queueChanges queues one project's share of a batch: label and milestone
// definitions each once (the last delivery's copy wins), the issue writes
// by ascending issue number, deliveries to one issue in arrival order so a
// later delivery wins as it would have alone. The batch writes issue rows
// first and the shared label and milestone rows last, each in ascending
// order (see store.MirrorBatch). Payload order would let two writers lock
// the same rows in opposite orders and deadlock; Postgres then aborts one
// of them after deadlock_timeout.
func queueChanges(mb *store.MirrorBatch, cs []pendingChange) {
	labels := map[int64]store.Label{}
	milestones := map[int64]store.Milestone{}
	for _, p := range cs {
		for _, l := range p.change.Labels {
			labels[l.ID] = l
		}
		if m := p.change.Milestone; m != nil {
			milestones[m.ID] = *m
		}
	}
	for _, id := range slices.Sorted(maps.Keys(labels)) {
		mb.Label(labels[id])
	}
	for _, id := range slices.Sorted(maps.Keys(milestones)) {
		mb.Milestone(milestones[id])
	}
	byIssue := slices.Clone(cs)
	slices.SortStableFunc(byIssue, func(a, b pendingChange) int {
		return cmp.Compare(issueOf(a.change), issueOf(b.change))
	})
	for _, p := range byIssue {
		queueIssueChange(mb, p.delivery, p.change)
	}
}

// issueOf is the issue a change writes to, for ordering.
func issueOf(c gitea.Change) int64 {
	if c.Issue != nil {
		return c.Issue.Number
	}
	if c.Comment != nil {
		return c.Comment.Issue
	}
	return 0
}

// queueIssueChange queues one delivery's writes to its issue and comment.
func queueIssueChange(mb *store.MirrorBatch, delivery string, c gitea.Change) {
	if c.Issue != nil {
		if c.IssueDeleted {
			mb.DeleteIssue(c.Issue.Number)
			return
		}
		mb.Issue(store.IssueWrite{Issue: *c.Issue, Delivery: delivery})
	}
	if c.Comment != nil {
		if c.CommentDeleted {
			mb.DeleteComment(c.Comment.Issue, c.Comment.ID)
		} else {
			mb.Comment(*c.Comment)
		}
		// A comment, even a deleted one, is a sign of life on the issue.
		at := c.Comment.UpdatedAt
		if c.CommentDeleted || at.IsZero() {
			at = time.Now()
		}
		mb.Touch(c.Comment.Issue, at, delivery)
	}
}
