package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
type Ingester struct {
	pool   *store.Pool
	jobs   JobInserter
	log    *slog.Logger
	cfg    IngesterConfig
	queue  chan *submission
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
		queue:  make(chan *submission, cfg.MaxBatch*cfg.Writers*2),
		byName: map[string]int64{},
		stop:   make(chan struct{}),
	}
	for _, p := range projects {
		in.byName[strings.ToLower(p.FullName())] = p.ID
	}
	return in
}

// Start runs the writers until Close.
func (in *Ingester) Start() {
	for range in.cfg.Writers {
		in.wg.Add(1)
		go in.writeLoop()
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
	case in.queue <- s:
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

func (in *Ingester) writeLoop() {
	defer in.wg.Done()
	batch := make([]*submission, 0, in.cfg.MaxBatch)
	for {
		batch = batch[:0]
		select {
		case s := <-in.queue:
			batch = append(batch, s)
		case <-in.stop:
			// Drain what was queued before shutdown so no waiting
			// handler is left without an answer.
			for {
				select {
				case s := <-in.queue:
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
			case s := <-in.queue:
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
		touched := map[int64]bool{}
		var order []int64
		batches := map[int64]*store.MirrorBatch{}
		for i, s := range batch {
			r := rows[i]
			if !fresh[r.ID] || r.ProjectID == nil || r.Ignored != "" {
				continue
			}
			// A delivery id repeated inside one batch is fresh once.
			delete(fresh, r.ID)
			mb := batches[*r.ProjectID]
			if mb == nil {
				mb = store.NewMirrorBatch(*r.ProjectID)
				batches[*r.ProjectID] = mb
				touched[*r.ProjectID] = true
				order = append(order, *r.ProjectID)
			}
			queueChange(mb, r.ID, s.in.Change)
		}
		for _, id := range order {
			if err := batches[id].Run(ctx, tx); err != nil {
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

// queueChange queues one decoded delivery's mirror writes. Statements run
// in delivery order, so a later delivery in the batch wins as it would have
// alone.
func queueChange(mb *store.MirrorBatch, delivery string, c gitea.Change) {
	for _, l := range c.Labels {
		mb.Label(l)
	}
	if c.Milestone != nil {
		mb.Milestone(*c.Milestone)
	}
	if c.Issue != nil {
		if c.IssueDeleted {
			mb.DeleteIssue(c.Issue.Number)
			return
		}
		mb.Issue(store.IssueWrite{Issue: *c.Issue, Delivery: delivery})
	}
	if c.Comment != nil {
		if c.CommentDeleted {
			mb.DeleteComment(c.Comment.ID)
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
