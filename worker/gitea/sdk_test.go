package gitea_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
)

// The SDK-backed listings page through everything (the fake caps pages at
// 50, like Gitea's MAX_RESPONSE_ITEMS) and no request, creates included,
// asks the server for its version.
func TestSDKPagesPastFiftyWithoutVersionCall(t *testing.T) {
	f := newFake(t, giteafake.Options{})
	c := newClient(t, f, gitea.Options{UserAgent: "commitea-test"})
	ctx := context.Background()
	const extra = 60
	for i := range extra {
		if _, err := c.CreateIssue(ctx, owner, repo, gitea.CreateIssueOptions{Title: "bulk " + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	f.ResetRequests()
	issues, err := c.ListIssues(ctx, owner, repo, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]int64, 0, 4+extra)
	for n := int64(1); n <= 4+extra; n++ {
		want = append(want, n)
	}
	if got := numbers(issues); !slices.Equal(got, want) {
		t.Fatalf("listed %d issues, want %d: %v", len(got), len(want), got)
	}
	var pages []string
	for _, r := range f.Requests() {
		if strings.HasSuffix(r.Path, "/issues") {
			pages = append(pages, r.Query.Get("page")+"/"+r.Query.Get("limit")+"/"+r.Query.Get("state"))
		}
	}
	if !slices.Equal(pages, []string{"1/50/all", "2/50/all"}) {
		t.Errorf("issue pages asked (page/limit/state): %v", pages)
	}
	if _, err := c.ListLabels(ctx, owner, repo); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetIssue(ctx, owner, repo, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.IssueTimeline(ctx, owner, repo, 1); err != nil {
		t.Fatal(err)
	}
	f.ResetRequests()
	if _, err := c.CreateIssue(ctx, owner, repo, gitea.CreateIssueOptions{Title: "one more"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListMilestones(ctx, owner, repo); err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	if len(reqs) != 2 {
		t.Errorf("%d requests for one create and one list, want 2", len(reqs))
	}
	for _, r := range reqs {
		if r.Header.Get("User-Agent") != "commitea-test" || r.Header.Get("Authorization") != "token "+f.Token() {
			t.Errorf("%s %s: user agent %q, authorization %q", r.Method, r.Path, r.Header.Get("User-Agent"), r.Header.Get("Authorization"))
		}
	}
	if n := countRequests(f, http.MethodGet, "/version"); n != 0 {
		t.Errorf("%d /version requests", n)
	}
}

// Retries happen in the shared transport: an SDK write marked safe (PATCH)
// is sent again with the same body, a raw read (timeline) is retried too.
func TestSDKAndRawCallsShareRetries(t *testing.T) {
	f := newFake(t, giteafake.Options{})
	c := newClient(t, f, gitea.Options{})
	ctx := context.Background()
	f.InjectFault(giteafake.Fault{Method: http.MethodPatch, Status: http.StatusServiceUnavailable, Times: 2})
	is, err := c.EditIssue(ctx, owner, repo, 3, gitea.EditIssueOptions{Title: gitea.String("retried title")})
	if err != nil {
		t.Fatal(err)
	}
	if is.Title != "retried title" {
		t.Errorf("title %q", is.Title)
	}
	var bodies [][]byte
	for _, r := range f.Requests() {
		if r.Method == http.MethodPatch {
			bodies = append(bodies, r.Body)
		}
	}
	if len(bodies) != 3 || !bytes.Equal(bodies[0], bodies[2]) || !bytes.Contains(bodies[2], []byte(`"retried title"`)) {
		t.Errorf("PATCH bodies %q, want the same body three times", bodies)
	}

	f.ResetRequests()
	f.InjectFault(giteafake.Fault{Method: http.MethodGet, PathPrefix: "/repos/ceo/demo/issues/1/timeline", Status: http.StatusBadGateway})
	tl, err := c.IssueTimeline(ctx, owner, repo, 1)
	if err != nil || len(tl) != 32 {
		t.Fatalf("timeline after a 502: %d entries, %v", len(tl), err)
	}
	if n := countRequests(f, http.MethodGet, "/issues/1/timeline"); n != 2 {
		t.Errorf("%d timeline requests, want 2", n)
	}

	// A create is not repeated after a 502, but the error says unavailable.
	f.InjectFault(giteafake.Fault{Method: http.MethodPost, PathPrefix: "/repos/ceo/demo/labels", Status: http.StatusBadGateway, Times: 3})
	_, err = c.CreateLabel(ctx, owner, repo, gitea.CreateLabelOptions{Name: "x/y", Color: "abcdef"})
	var apiErr *gitea.APIError
	if !errors.Is(err, gitea.ErrUnavailable) || !errors.As(err, &apiErr) || apiErr.Attempts != 1 || apiErr.Status != 502 {
		t.Errorf("create label through a 502: %v", err)
	}
}

// Each call binds its own context: a call whose context expires fails
// alone while a concurrent one on the same client succeeds.
func TestConcurrentCallsKeepTheirOwnContext(t *testing.T) {
	f := newFake(t, giteafake.Options{})
	c := newClient(t, f, gitea.Options{})
	f.InjectFault(giteafake.Fault{Method: http.MethodGet, PathPrefix: "/repos/ceo/demo/labels", Delay: 5 * time.Second})
	var wg sync.WaitGroup
	var slowErr, fastErr error
	wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		defer cancel()
		_, slowErr = c.ListLabels(ctx, owner, repo)
	})
	wg.Go(func() {
		for range 20 {
			if _, err := c.ListMilestones(context.Background(), owner, repo); err != nil {
				fastErr = err
				return
			}
		}
	})
	wg.Wait()
	if !errors.Is(slowErr, gitea.ErrUnavailable) {
		t.Errorf("slow call: %v, want unavailable", slowErr)
	}
	if fastErr != nil {
		t.Errorf("concurrent call failed: %v", fastErr)
	}
}

// The SDK sends every field of its edit options (unset ones as "" or
// null); the edit must still change only what was asked.
func TestEditLeavesUnsetFields(t *testing.T) {
	f := newFake(t, giteafake.Options{})
	c := newClient(t, f, gitea.Options{})
	ctx := context.Background()
	before, err := c.GetIssue(ctx, owner, repo, 1)
	if err != nil {
		t.Fatal(err)
	}
	after, err := c.EditIssue(ctx, owner, repo, 1, gitea.EditIssueOptions{Body: gitea.String("new body")})
	if err != nil {
		t.Fatal(err)
	}
	b, a := before.Row(), after.Row()
	if a.Body != "new body" || a.Title != b.Title || a.State != b.State || !slices.Equal(a.Assignees, b.Assignees) ||
		(a.Milestone == nil) != (b.Milestone == nil) || !slices.Equal(a.Labels, b.Labels) {
		t.Errorf("before %+v\nafter %+v", b, a)
	}
	if _, err := c.EditIssue(ctx, owner, repo, 1, gitea.EditIssueOptions{Title: gitea.String("")}); err == nil {
		t.Error("empty title accepted; Gitea would silently keep the old one")
	}
	m, err := c.EditMilestone(ctx, owner, repo, 1, gitea.EditMilestoneOptions{State: gitea.String("open")})
	if err != nil {
		t.Fatal(err)
	}
	if m.Title != "v1.0" || m.State != "open" || m.DueOn == nil {
		t.Errorf("milestone after reopening %+v", m)
	}
}

// New wraps a copy of the caller's http.Client, not the client itself.
func TestCallerHTTPClientUntouched(t *testing.T) {
	f := newFake(t, giteafake.Options{})
	hc := &http.Client{Timeout: time.Minute}
	c := newClient(t, f, gitea.Options{HTTPClient: hc})
	if _, err := c.ListLabels(context.Background(), owner, repo); err != nil {
		t.Fatal(err)
	}
	if hc.Transport != nil {
		t.Errorf("caller's client transport replaced by %T", hc.Transport)
	}
}
