package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker"
)

// Service answers the tools for the configured projects. Read tools go
// through a per-project cache of the decoded latest snapshot, the mirror's
// issue heads and the orders built from them; a check compares, in one
// round trip, the snapshot version and the mirror's change counter and
// reloads only what moved, so a 5,000-issue snapshot is decoded once per
// recompute rather than once per request. Fresh and Stale bound the
// cache's age (zero: DefaultFresh, DefaultStale).
type Service struct {
	Pool         *store.Pool
	Projects     []store.Project
	Log          *slog.Logger
	Fresh, Stale time.Duration
	// Models answers the tools that need a language model (capture_work
	// on the big role); nil, or a role left out, makes them answer
	// MODEL_UNAVAILABLE.
	Models ModelRouter
	// Write is what the write tools need (Gitea, engine, jobs); see
	// WriteConfig.
	Write WriteConfig

	mu    sync.Mutex
	cache map[int64]*projectCache
}

// NewService builds the tool service for projects.
func NewService(pool *store.Pool, projects []store.Project, log *slog.Logger) *Service {
	return &Service{Pool: pool, Projects: projects, Log: log, cache: map[int64]*projectCache{}}
}

// Registry declares the four tools and the resource kinds over this
// service.
func (s *Service) Registry() *Registry {
	return NewRegistry(s.Log, s.queryProjectTool(), s.captureWorkTool(), s.applyChangesTool(), s.recordDirectiveTool()).
		WithResources(s.Resources()...)
}

// project resolves the optional "owner/repo" argument: empty means the only
// configured project.
func (s *Service) project(name string) (store.Project, error) {
	if name == "" {
		switch len(s.Projects) {
		case 1:
			return s.Projects[0], nil
		case 0:
			return store.Project{}, Errorf(CodeNotFound, "project", "no project is configured on this CommiTea")
		}
		names := make([]string, len(s.Projects))
		for i, p := range s.Projects {
			names[i] = p.FullName()
		}
		return store.Project{}, Errorf(CodeInvalidInput, "project", "several projects are configured; name one of %s", strings.Join(names, ", "))
	}
	for _, p := range s.Projects {
		if strings.EqualFold(p.FullName(), name) {
			return p, nil
		}
	}
	if !strings.Contains(name, "/") {
		return store.Project{}, Errorf(CodeInvalidInput, "project", "project must be owner/repo, got %q", name)
	}
	return store.Project{}, Errorf(CodeNotFound, "project", "project %s is not served by this CommiTea", name)
}

// projectView is one consistent reading of a project: its latest snapshot,
// decoded and indexed, and its mirror's issue heads and milestones.
type projectView struct {
	Project store.Project
	Version int64
	Counter int64
	// SnapshotCounter and SnapshotAt are the change counter the snapshot
	// was computed from and when it was stored: against Counter they say
	// whether it covers the mirror's latest change.
	SnapshotCounter int64
	SnapshotAt      time.Time
	Data            worker.SnapshotData
	Status          map[int64]*scheduler.IssueStatus
	Forecast        map[int64]*scheduler.IssueForecast
	Milestone       map[int64]*scheduler.MilestoneForecast
	// Age is each open, started issue's work item age from the flow
	// figures (empty in a snapshot without them).
	Age        map[int64]*scheduler.WorkItemAge
	Heads      []store.IssueHead
	Head       map[int64]*store.IssueHead
	Milestones []store.Milestone
	orders     orders
}

type projectCache struct {
	mu         sync.Mutex
	view       *projectView
	checked    time.Time // when the versions were last compared
	refreshing bool
}

// Freshness bounds how old a cached view may be. Within Fresh a request
// uses the cached view without touching the database; between Fresh and
// Stale it still answers from the cache at once and one background check
// brings the cache up to date (stale-while-revalidate); past Stale, or
// after Invalidate, the request checks before answering. So a busy server
// does one versions query per Fresh interval instead of one per request,
// and a database hiccup does not reach read latency.
const (
	DefaultFresh = 250 * time.Millisecond
	DefaultStale = 5 * time.Second
)

func (s *Service) cacheFor(id int64) *projectCache {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cache == nil {
		s.cache = map[int64]*projectCache{}
	}
	pc := s.cache[id]
	if pc == nil {
		pc = &projectCache{}
		s.cache[id] = pc
	}
	return pc
}

// Invalidate makes the next read of a project check the database first;
// write tools call it after changing the mirror, so a caller reads its own
// writes.
func (s *Service) Invalidate(projectID int64) {
	pc := s.cacheFor(projectID)
	pc.mu.Lock()
	pc.checked = time.Time{}
	pc.mu.Unlock()
}

func (s *Service) fresh() (time.Duration, time.Duration) {
	fresh, stale := s.Fresh, s.Stale
	if fresh == 0 {
		fresh = DefaultFresh
	}
	if stale == 0 {
		stale = DefaultStale
	}
	return fresh, stale
}

// view returns the project's current view.
func (s *Service) view(ctx context.Context, p store.Project) (*projectView, error) {
	pc := s.cacheFor(p.ID)
	fresh, stale := s.fresh()
	pc.mu.Lock()
	cur, age := pc.view, time.Since(pc.checked)
	switch {
	case cur != nil && age < fresh:
		pc.mu.Unlock()
		return cur, nil
	case cur != nil && age < stale:
		if !pc.refreshing {
			pc.refreshing = true
			go func() {
				bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
				defer cancel()
				if _, err := s.refresh(bg, p, pc); err != nil {
					s.Log.WarnContext(bg, "refresh tool cache", slog.String("project", p.FullName()), slog.Any("error", err))
				}
			}()
		}
		pc.mu.Unlock()
		return cur, nil
	}
	pc.refreshing = true
	pc.mu.Unlock()
	return s.refresh(ctx, p, pc)
}

// refresh compares the versions and reloads what moved. The caller has set
// pc.refreshing; refresh clears it.
func (s *Service) refresh(ctx context.Context, p store.Project, pc *projectCache) (*projectView, error) {
	checked := time.Now()
	next, err := s.load(ctx, p, pc.current())
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.refreshing = false
	if err != nil {
		return nil, err
	}
	pc.view, pc.checked = next, checked
	return next, nil
}

func (pc *projectCache) current() *projectView {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.view
}

// load builds the view at the current versions, reusing from cur what has
// not moved.
func (s *Service) load(ctx context.Context, p store.Project, cur *projectView) (*projectView, error) {
	v, err := store.ProjectVersions(ctx, s.Pool, p.ID)
	if err != nil {
		return nil, fmt.Errorf("read versions of %s: %w", p.FullName(), err)
	}
	if !v.Backfilled {
		// The recompute publishes no snapshot before the first backfill
		// completed; one from before that rule (of a half-imported
		// mirror) would be served as if the project had only the issues
		// imported so far.
		return nil, Errorf(CodeNotReady, "", "no forecast for %s yet: the first import from Gitea is still running; retry in a minute", p.FullName())
	}
	if v.SnapshotVersion == 0 {
		return nil, Errorf(CodeNotReady, "", "no forecast for %s yet: the first sync and recompute have not finished; retry in a minute", p.FullName())
	}
	// The snapshot's rescue options are stored after it: a view cached
	// while they were being computed reloads them once they are there.
	rescueDue := cur != nil && cur.Data.RescuePending && v.Rescued
	if cur != nil && cur.Version == v.SnapshotVersion && cur.Counter == v.ChangeCounter && !rescueDue {
		return cur, nil
	}
	next := &projectView{Project: p, Counter: v.ChangeCounter}
	if cur != nil && cur.Version == v.SnapshotVersion {
		next.Version, next.Data, next.Status, next.Forecast, next.Milestone = cur.Version, cur.Data, cur.Status, cur.Forecast, cur.Milestone
		next.SnapshotCounter, next.SnapshotAt, next.Age = cur.SnapshotCounter, cur.SnapshotAt, cur.Age
		if rescueDue {
			raw, err := store.SnapshotRescue(ctx, s.Pool, p.ID, cur.Version)
			if err != nil {
				return nil, fmt.Errorf("load rescue of %s: %w", p.FullName(), err)
			}
			if err := next.Data.SetRescue(raw); err != nil {
				return nil, fmt.Errorf("snapshot %d of %s: %w", cur.Version, p.FullName(), err)
			}
		}
	} else {
		snap, err := store.LatestSnapshot(ctx, s.Pool, p.ID)
		if err != nil {
			return nil, fmt.Errorf("load snapshot of %s: %w", p.FullName(), err)
		}
		if err := json.Unmarshal(snap.Data, &next.Data); err != nil {
			return nil, fmt.Errorf("decode snapshot %d of %s: %w", snap.Version, p.FullName(), err)
		}
		if err := next.Data.SetRescue(snap.Rescue); err != nil {
			return nil, fmt.Errorf("snapshot %d of %s: %w", snap.Version, p.FullName(), err)
		}
		next.Version, next.SnapshotCounter, next.SnapshotAt = snap.Version, snap.ChangeCounter, snap.ComputedAt
		next.index()
	}
	if cur != nil && cur.Counter == v.ChangeCounter {
		next.Heads, next.Head, next.Milestones = cur.Heads, cur.Head, cur.Milestones
	} else {
		if next.Heads, err = store.IssueHeads(ctx, s.Pool, p.ID); err != nil {
			return nil, err
		}
		if next.Milestones, err = store.Milestones(ctx, s.Pool, p.ID); err != nil {
			return nil, err
		}
		next.Head = make(map[int64]*store.IssueHead, len(next.Heads))
		for i := range next.Heads {
			next.Head[next.Heads[i].Number] = &next.Heads[i]
		}
	}
	next.buildOrders()
	return next, nil
}

func (v *projectView) index() {
	v.Status = make(map[int64]*scheduler.IssueStatus, len(v.Data.Statuses))
	for i := range v.Data.Statuses {
		v.Status[v.Data.Statuses[i].Number] = &v.Data.Statuses[i]
	}
	v.Forecast = make(map[int64]*scheduler.IssueForecast, len(v.Data.Forecast.Issues))
	for i := range v.Data.Forecast.Issues {
		v.Forecast[v.Data.Forecast.Issues[i].Number] = &v.Data.Forecast.Issues[i]
	}
	v.Milestone = make(map[int64]*scheduler.MilestoneForecast, len(v.Data.Forecast.Milestones))
	for i := range v.Data.Forecast.Milestones {
		v.Milestone[v.Data.Forecast.Milestones[i].ID] = &v.Data.Forecast.Milestones[i]
	}
	v.Age = map[int64]*scheduler.WorkItemAge{}
	if f := v.Data.Flow; f != nil {
		for i := range f.Age {
			v.Age[f.Age[i].Number] = &f.Age[i]
		}
	}
}

// title is an issue's title from the mirror, or a placeholder when the
// mirror no longer has it.
func (v *projectView) title(n int64) string {
	if h := v.Head[n]; h != nil {
		return h.Title
	}
	return fmt.Sprintf("(issue #%d is no longer in the mirror)", n)
}

// notFound maps store.ErrNotFound to a NOT_FOUND tool error on field.
func notFound(err error, field, format string, args ...any) error {
	if errors.Is(err, store.ErrNotFound) {
		return Errorf(CodeNotFound, field, format, args...)
	}
	return err
}

// Range is a forecast as a range of dates, never a point.
type Range struct {
	P10 string `json:"p10,omitempty"`
	P50 string `json:"p50"`
	P80 string `json:"p80"`
}

func day(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.DateOnly)
}

func dayPtr(t *time.Time) string {
	if t == nil {
		return ""
	}
	return day(*t)
}
