package tools_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
	"github.com/commitea/commitea/worker/tools"
)

// writeStack is the real write path: the loopback fake of the recorded
// Forgejo repository ceo/demo, its mirror in Postgres brought in by the
// real backfill, a snapshot from the real recompute, and the tool service
// writing through the real Gitea client.
type writeStack struct {
	pool   *store.Pool
	p      store.Project
	fake   *giteafake.Server
	client *gitea.Client
	svc    *tools.Service
	reg    *tools.Registry
	engine *worker.Forecaster
}

var writeNow = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

var (
	writer   = tools.Caller{Name: "planner", Scopes: []string{tools.ScopeRead, tools.ScopeWrite}}
	approver = tools.Caller{Name: "pm", Scopes: []string{tools.ScopeRead, tools.ScopeWrite, tools.ScopeApprove}}
)

func newWriteStack(t *testing.T) *writeStack {
	t.Helper()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "ceo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	fake, err := giteafake.New(giteafake.Options{Now: func() time.Time { return writeNow }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	client, err := gitea.New(fake.URL, fake.Token(), gitea.Options{BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	syncer := &worker.Syncer{Pool: pool, Gitea: client, Replayer: worker.LifecycleReplayer{}, Log: log, Now: func() time.Time { return writeNow }}
	if err := syncer.Backfill(ctx, p); err != nil {
		t.Fatal(err)
	}
	engine := &worker.Forecaster{Pool: pool, Log: log, Trials: 200, Now: func() time.Time { return writeNow }}
	if err := engine.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	svc := tools.NewService(pool, []store.Project{p}, log)
	svc.Write = tools.WriteConfig{Gitea: client, Engine: engine, Now: func() time.Time { return writeNow }}
	fake.ResetRequests()
	return &writeStack{pool: pool, p: p, fake: fake, client: client, svc: svc, reg: svc.Registry(), engine: engine}
}

// call runs a tool and returns its envelope or error.
func (s *writeStack) call(t *testing.T, c tools.Caller, tool, input string) (tools.Envelope, *tools.Error) {
	t.Helper()
	return s.reg.Call(context.Background(), c, tool, json.RawMessage(input))
}

// apply runs apply_changes and decodes its data; it fails the test on an
// error.
func (s *writeStack) apply(t *testing.T, c tools.Caller, input string) tools.ApplyChangesOutput {
	t.Helper()
	env, terr := s.call(t, c, "apply_changes", input)
	if terr != nil {
		t.Fatalf("apply_changes %s: %v", input, terr)
	}
	return env.Data.(tools.ApplyChangesOutput)
}

// writes are the mutating requests the fake received.
func (s *writeStack) writes() []giteafake.Request {
	var out []giteafake.Request
	for _, r := range s.fake.Requests() {
		if r.Method != http.MethodGet {
			out = append(out, r)
		}
	}
	return out
}

func (s *writeStack) issue(t *testing.T, n int64) gitea.Issue {
	t.Helper()
	is, err := s.client.GetIssue(context.Background(), "ceo", "demo", n)
	if err != nil {
		t.Fatal(err)
	}
	return is
}

func (s *writeStack) mirrorIssue(t *testing.T, n int64) store.Issue {
	t.Helper()
	is, err := store.GetIssue(context.Background(), s.pool, s.p.ID, n)
	if err != nil {
		t.Fatal(err)
	}
	return is
}

func (s *writeStack) counter(t *testing.T) int64 {
	t.Helper()
	n, err := store.ChangeCounter(context.Background(), s.pool, s.p.ID)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func labelNames(ls []gitea.Label) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Name
	}
	slices.Sort(out)
	return out
}

// Request bodies real Gitea accepts, per endpoint: the properties of the
// option types in the server's own swagger (fixtures/api/swagger.v1.json,
// Forgejo 9 / Gitea 1.22).
var acceptedBodies = []struct {
	method string
	path   *regexp.Regexp
	fields []string
}{
	{"POST", regexp.MustCompile(`^/repos/[^/]+/[^/]+/issues$`), []string{"assignee", "assignees", "body", "closed", "due_date", "labels", "milestone", "ref", "title"}},
	{"PATCH", regexp.MustCompile(`^/repos/[^/]+/[^/]+/issues/\d+$`), []string{"assignee", "assignees", "body", "due_date", "milestone", "ref", "state", "title", "unset_due_date", "updated_at"}},
	{"POST", regexp.MustCompile(`^/repos/[^/]+/[^/]+/issues/\d+/labels$`), []string{"labels", "updated_at"}},
	{"DELETE", regexp.MustCompile(`^/repos/[^/]+/[^/]+/issues/\d+/labels/\d+$`), nil},
	{"POST", regexp.MustCompile(`^/repos/[^/]+/[^/]+/labels$`), []string{"color", "description", "exclusive", "is_archived", "name"}},
	{"POST", regexp.MustCompile(`^/repos/[^/]+/[^/]+/issues/\d+/dependencies$`), []string{"index", "owner", "repo"}},
	{"DELETE", regexp.MustCompile(`^/repos/[^/]+/[^/]+/issues/\d+/dependencies$`), []string{"index", "owner", "repo"}},
	{"PATCH", regexp.MustCompile(`^/repos/[^/]+/[^/]+/milestones/\d+$`), []string{"description", "due_on", "state", "title"}},
}

// recordedShapes are the method and path shapes of the write requests the
// recorded scenario sent to the real server (numbers generalised).
func recordedShapes(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "gitea", "giteafake", "testdata", "api", "actions", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("recorded actions: %v (%d files)", err, len(files))
	}
	digits := regexp.MustCompile(`/\d+`)
	out := map[string]bool{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var a struct {
			Request struct{ Method, Path string } `json:"request"`
			Status  int                           `json:"status"`
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if a.Status < 300 {
			out[a.Request.Method+" "+digits.ReplaceAllString(a.Request.Path, "/N")] = true
		}
	}
	return out
}

// checkAcceptedByGitea validates every write request the fake received: its
// method and path shape is one the real server answered with success in
// the recording, and its body holds only fields of the option type the
// server's swagger declares for that endpoint, with a JSON object body.
func checkAcceptedByGitea(t *testing.T, reqs []giteafake.Request) {
	t.Helper()
	shapes := recordedShapes(t)
	digits := regexp.MustCompile(`/\d+`)
	for _, r := range reqs {
		if r.Method == http.MethodGet {
			continue
		}
		shape := r.Method + " " + digits.ReplaceAllString(r.Path, "/N")
		if !shapes[shape] {
			t.Errorf("%s %s: no request of this shape succeeded against real Forgejo in the recording", r.Method, r.Path)
			continue
		}
		k := slices.IndexFunc(acceptedBodies, func(a struct {
			method string
			path   *regexp.Regexp
			fields []string
		}) bool {
			return a.method == r.Method && a.path.MatchString(r.Path)
		})
		if k < 0 {
			t.Errorf("%s %s: endpoint not in the accepted list", r.Method, r.Path)
			continue
		}
		if len(strings.TrimSpace(string(r.Body))) == 0 {
			if acceptedBodies[k].fields != nil {
				t.Errorf("%s %s: empty body", r.Method, r.Path)
			}
			continue
		}
		var body map[string]json.RawMessage
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Errorf("%s %s: body is not a JSON object: %s", r.Method, r.Path, r.Body)
			continue
		}
		for f := range body {
			if !slices.Contains(acceptedBodies[k].fields, f) {
				t.Errorf("%s %s: field %q is not in the swagger option type: %s", r.Method, r.Path, f, r.Body)
			}
		}
	}
}

// deps lists what issue n depends on, in Gitea and in the mirror, and
// fails when the two disagree.
func (s *writeStack) deps(t *testing.T, n int64) []int64 {
	t.Helper()
	ctx := context.Background()
	blockers, err := s.client.ListDependencies(ctx, "ceo", "demo", n)
	if err != nil {
		t.Fatal(err)
	}
	var inGitea []int64
	for _, b := range blockers {
		inGitea = append(inGitea, b.Number)
	}
	rows, _, err := store.IssueDependencies(ctx, s.pool, s.p.ID, n)
	if err != nil {
		t.Fatal(err)
	}
	var inMirror []int64
	for _, d := range rows {
		inMirror = append(inMirror, d.DependsOn)
	}
	slices.Sort(inGitea)
	slices.Sort(inMirror)
	if !slices.Equal(inGitea, inMirror) {
		t.Fatalf("dependencies of #%d: Gitea %v, mirror %v", n, inGitea, inMirror)
	}
	return inGitea
}
