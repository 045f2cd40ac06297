// Package dashboard is CommiTea's read-only web view of a project: the
// board (five lifecycle columns with flags), the runway (every milestone's
// p50–p80 band against its due date), a milestone's forecast cone, the
// calibration, the directive ledger and the latest standup. Pages are
// server-rendered with html/template from the latest snapshot, which is
// decoded once per version and kept, so a page costs two small queries; no
// JavaScript and no front-end build. Pages carry no inline style or script
// (their stylesheet is served from /static/), so they work under the strict
// Content-Security-Policy the api package sets. Authentication is the api
// package's business: mount the handler behind its check, which refuses
// the pages of projects the viewer cannot read; the index lists only the
// projects the viewer (signin.ViewerFrom) reads, and a signed-in viewer
// gets a sign-out button.
package dashboard

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/commitea/commitea/api/signin"
	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/tools"
)

//go:embed templates/*.html
var templateFiles embed.FS

// stylesheet is the pages' one stylesheet, served from /static/ rather than
// inlined: the Content-Security-Policy the api package sets allows only
// styles and scripts CommiTea serves itself.
//
//go:embed static/dashboard.css
var stylesheet []byte

// favicon is the tab icon; served here so that browsers do not ask the
// server root for one and log the 404 as an error.
//
//go:embed static/favicon.svg
var favicon []byte

// Config is what the dashboard reads.
type Config struct {
	Pool     *store.Pool
	Projects []store.Project
	Log      *slog.Logger
	// Now is the clock; tests set it.
	Now func() time.Time
	// Prefix is where the handler is mounted (e.g. "/dashboard"), for links.
	Prefix string
	// Query answers query_project (tools.Service.Query): the pages that
	// show what a view returns (issue, people, directives) read it, so a
	// page and an agent never disagree. Nil: a service over Pool.
	Query func(context.Context, tools.QueryProjectInput) (tools.Answer[any], error)
	// People and DefaultCalendar are the configured team and calendar the
	// forecast schedules (the capacity calendar is laid over them), for
	// the people page.
	People          []scheduler.Person
	DefaultCalendar scheduler.Calendar
	// GiteaURL is where browsers reach Gitea, for links to an issue there;
	// empty: no link.
	GiteaURL string
}

// Dashboard serves the pages.
type Dashboard struct {
	cfg   Config
	pages map[string]*template.Template

	mu    sync.Mutex
	cache map[int64]cachedSnapshot
}

// snapshot is the stored snapshot as the dashboard reads it.
type snapshot struct {
	worker.SnapshotData
	version int64
}

type cachedSnapshot struct {
	version  int64
	computed time.Time
	data     *snapshot
}

// New parses the templates and builds the handler.
func New(cfg Config) (*Dashboard, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Query == nil {
		cfg.Query = tools.NewService(cfg.Pool, cfg.Projects, cfg.Log).Query
	}
	cfg.GiteaURL = strings.TrimSuffix(cfg.GiteaURL, "/")
	d := &Dashboard{cfg: cfg, pages: map[string]*template.Template{}, cache: map[int64]cachedSnapshot{}}
	for _, page := range []string{"index", "board", "runway", "milestone", "calibration", "directives", "standup", "flow", "issue", "people"} {
		files := []string{"templates/layout.html", "templates/" + page + ".html"}
		if page == "milestone" {
			files = append(files, "templates/rescue.html") // a section of its own
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, files...)
		if err != nil {
			return nil, fmt.Errorf("dashboard template %s: %w", page, err)
		}
		d.pages[page] = t
	}
	return d, nil
}

// Handler routes the pages below the mount point.
func (d *Dashboard) Handler() http.Handler {
	r := chi.NewRouter()
	r.Get("/", d.index)
	r.Get("/static/dashboard.css", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(stylesheet)
	})
	r.Get("/static/favicon.svg", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Header().Set("Cache-Control", "max-age=86400")
		_, _ = w.Write(favicon)
	})
	r.Route("/{owner}/{repo}", func(r chi.Router) {
		r.Get("/", d.page("board", d.board))
		r.Get("/runway", d.page("runway", d.runway))
		r.Get("/milestones/{id}", d.page("milestone", d.milestone))
		r.Get("/calibration", d.page("calibration", d.calibration))
		r.Get("/directives", d.page("directives", d.directives))
		r.Get("/standup", d.page("standup", d.standup))
		r.Get("/flow", d.page("flow", d.flow))
		r.Get("/issues/{n}", d.page("issue", d.issue))
		r.Get("/people", d.page("people", d.people))
	})
	return r
}

// view is what every page template gets.
type view struct {
	Prefix   string
	Project  string
	Base     string // link base of the project's pages
	Page     string
	Title    string
	Version  int64
	Computed time.Time
	Age      string
	Now      time.Time
	Empty    string // set when there is no snapshot yet
	Data     any
	// SignedInAs is the Gitea login of a signed-in viewer, who gets a
	// sign-out button posting to SignOutPath.
	SignedInAs  string
	SignOutPath string
}

// withViewer fills the view's sign-in fields from the request.
func withViewer(r *http.Request, v view) view {
	if who, ok := signin.ViewerFrom(r.Context()); ok && who.SignedIn {
		v.SignedInAs, v.SignOutPath = who.Name, signin.LogoutPath
	}
	return v
}

// visibleProjects are the projects the request's viewer reads; the api
// layer answers 404 for the others' pages, and the index does not name
// them. Without a viewer (the handler mounted alone), every project.
func (d *Dashboard) visibleProjects(r *http.Request) []store.Project {
	who, ok := signin.ViewerFrom(r.Context())
	if !ok {
		return d.cfg.Projects
	}
	var out []store.Project
	for _, p := range d.cfg.Projects {
		if who.Can(p.FullName(), tools.ScopeRead) {
			out = append(out, p)
		}
	}
	return out
}

func (d *Dashboard) index(w http.ResponseWriter, r *http.Request) {
	projects := d.visibleProjects(r)
	if len(projects) == 1 {
		p := projects[0]
		http.Redirect(w, r, d.cfg.Prefix+"/"+p.Owner+"/"+p.Name+"/", http.StatusFound)
		return
	}
	names := make([]string, 0, len(projects))
	for _, p := range projects {
		names = append(names, p.FullName())
	}
	d.render(w, "index", withViewer(r, view{Prefix: d.cfg.Prefix, Title: "Projects", Data: names, Now: d.cfg.Now()}))
}

// errNotFound makes a page answer 404.
var errNotFound = errors.New("not found")

// page wraps a page builder: it finds the project and its snapshot, and
// renders the template with what build returns.
func (d *Dashboard) page(name string, build func(ctx context.Context, p store.Project, s *snapshot, r *http.Request) (string, any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		full := chi.URLParam(r, "owner") + "/" + chi.URLParam(r, "repo")
		var project store.Project
		for _, p := range d.cfg.Projects {
			if strings.EqualFold(p.FullName(), full) {
				project = p
			}
		}
		if project.ID == 0 {
			http.Error(w, "no such project: "+full, http.StatusNotFound)
			return
		}
		now := d.cfg.Now()
		v := withViewer(r, view{Prefix: d.cfg.Prefix, Project: project.FullName(), Base: d.cfg.Prefix + "/" + project.FullName(), Page: name, Now: now})
		snap, err := d.snapshot(r.Context(), project.ID)
		if err != nil {
			d.cfg.Log.ErrorContext(r.Context(), "dashboard snapshot", slog.String("project", full), slog.Any("error", err))
			http.Error(w, "could not read the snapshot", http.StatusServiceUnavailable)
			return
		}
		if snap.data == nil {
			v.Title = "Waiting for the first forecast"
			v.Empty = "No snapshot yet: CommiTea is importing the project and computing its first forecast. Reload in a few seconds."
			w.Header().Set("Refresh", "3")
			d.render(w, name, v)
			return
		}
		v.Version, v.Computed, v.Age = snap.version, snap.computed, ago(now.Sub(snap.computed))
		title, data, err := build(r.Context(), project, snap.data, r)
		if errors.Is(err, errNotFound) {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		if err != nil {
			d.cfg.Log.ErrorContext(r.Context(), "dashboard page", slog.String("page", name), slog.Any("error", err))
			http.Error(w, "could not build the page", http.StatusInternalServerError)
			return
		}
		v.Title, v.Data = title, data
		d.render(w, name, v)
	}
}

func (d *Dashboard) render(w http.ResponseWriter, name string, v view) {
	var b strings.Builder
	if err := d.pages[name].ExecuteTemplate(&b, "layout.html", v); err != nil {
		d.cfg.Log.Error("render dashboard", slog.String("page", name), slog.Any("error", err))
		http.Error(w, "could not render the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(b.String()))
}

// snapshot returns the latest snapshot, decoding it only when its version
// is new.
func (d *Dashboard) snapshot(ctx context.Context, projectID int64) (cachedSnapshot, error) {
	mark, err := store.LatestSnapshotMark(ctx, d.cfg.Pool, projectID)
	if errors.Is(err, store.ErrNotFound) {
		return cachedSnapshot{}, nil // not computed yet
	}
	if err != nil {
		return cachedSnapshot{}, err
	}
	d.mu.Lock()
	c, ok := d.cache[projectID]
	d.mu.Unlock()
	if ok && c.version == mark.Version {
		if !c.data.RescuePending || !mark.Rescued {
			return c, nil
		}
		// The rescue options came after the snapshot: a copy with them.
		raw, err := store.SnapshotRescue(ctx, d.cfg.Pool, projectID, c.version)
		if err != nil {
			return cachedSnapshot{}, err
		}
		data := *c.data
		if err := data.SetRescue(raw); err != nil {
			return cachedSnapshot{}, fmt.Errorf("snapshot %d: %w", c.version, err)
		}
		c.data = &data
		d.mu.Lock()
		if old, ok := d.cache[projectID]; ok && old.version == c.version {
			d.cache[projectID] = c
		}
		d.mu.Unlock()
		return c, nil
	}
	s, err := store.LatestSnapshot(ctx, d.cfg.Pool, projectID)
	if err != nil {
		return cachedSnapshot{}, err
	}
	var data snapshot
	if err := json.Unmarshal(s.Data, &data); err != nil {
		return cachedSnapshot{}, fmt.Errorf("decode snapshot %d: %w", s.Version, err)
	}
	if err := data.SetRescue(s.Rescue); err != nil {
		return cachedSnapshot{}, fmt.Errorf("snapshot %d: %w", s.Version, err)
	}
	data.version = s.Version
	// The forecaster's clock, which the pages' Now shares; the row's
	// computed_at is the database's, which a demo's clock does not follow.
	computed := data.ComputedAt
	if computed.IsZero() {
		computed = s.ComputedAt
	}
	c = cachedSnapshot{version: s.Version, computed: computed, data: &data}
	d.mu.Lock()
	if old, ok := d.cache[projectID]; !ok || old.version < c.version {
		d.cache[projectID] = c
	}
	d.mu.Unlock()
	return c, nil
}

func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%.1fh ago", d.Hours())
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

var funcs = template.FuncMap{
	"date": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("Mon 2 Jan 2006")
	},
	"short": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2 Jan")
	},
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"pct": func(f float64) string { return strconv.Itoa(int(f*100+0.5)) + "%" },
	"inc": func(k int) int { return k + 1 },
	"num": func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) },
	"days": func(f float64) string {
		if f >= 0 {
			return fmt.Sprintf("+%.1f", f)
		}
		return fmt.Sprintf("%.1f", f)
	},
	"join":  strings.Join,
	"lower": strings.ToLower,
	"safeSVG": func(s string) template.HTML {
		// Built by svg.go from numbers and escaped text only.
		return template.HTML(s) // #nosec G203
	},
	"contains":     slices.Contains[[]string],
	"flagKind":     flagKind,
	"flagWords":    flagWords,
	"dayText":      dayText,
	"chance":       chance,
	"withinPoints": func() int { return int(math.Round(calibratedWithin * 100)) },
}
