package gitea_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
)

const owner, repo = "ceo", "demo"

func newFake(t *testing.T, opts giteafake.Options) *giteafake.Server {
	t.Helper()
	f, err := giteafake.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

func newClient(t *testing.T, f *giteafake.Server, opts gitea.Options) *gitea.Client {
	t.Helper()
	if opts.BaseBackoff == 0 {
		opts.BaseBackoff = time.Millisecond
		opts.MaxBackoff = 5 * time.Millisecond
	}
	c, err := gitea.New(f.URL, f.Token(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func numbers(is []gitea.Issue) []int64 {
	var out []int64
	for _, i := range is {
		out = append(out, i.Number)
	}
	slices.Sort(out)
	return out
}

func countRequests(f *giteafake.Server, method, pathSuffix string) int {
	n := 0
	for _, r := range f.Requests() {
		if r.Method == method && strings.HasSuffix(r.Path, pathSuffix) {
			n++
		}
	}
	return n
}

func TestReadSeededRepository(t *testing.T) {
	f := newFake(t, giteafake.Options{})
	c := newClient(t, f, gitea.Options{})
	ctx := context.Background()

	issues, err := c.ListIssues(ctx, owner, repo, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got := numbers(issues); !slices.Equal(got, []int64{1, 2, 3, 4}) {
		t.Fatalf("issues %v", got)
	}
	for _, is := range issues {
		row := is.Row()
		if row.IsPull != (is.Number == 4) {
			t.Errorf("#%d IsPull %v", is.Number, row.IsPull)
		}
		if is.Number == 1 && (!slices.Equal(row.Labels, []string{"deadline/hard", "est/S", "p/1"}) || row.Milestone == nil || *row.Milestone != 1 || row.State != "closed") {
			t.Errorf("#1 row %+v", row)
		}
		if is.Number == 4 && (!row.Merged || !slices.Equal(row.ClosingRefs, []int64{1})) {
			t.Errorf("#4 issue-form row %+v", row)
		}
	}

	pulls, err := c.ListPulls(ctx, owner, repo)
	if err != nil {
		t.Fatal(err)
	}
	if len(pulls) != 1 {
		t.Fatalf("pulls %d", len(pulls))
	}
	pr := pulls[0].Row()
	if pr.Number != 4 || !pr.IsPull || pr.Ref != "fix-1" || !pr.Merged || !slices.Equal(pr.ClosingRefs, []int64{1}) || pr.State != "closed" {
		t.Errorf("pull row %+v", pr)
	}

	labels, err := c.ListLabels(ctx, owner, repo)
	if err != nil {
		t.Fatal(err)
	}
	rows := gitea.Rows[gitea.Label, store.Label](labels)
	if len(rows) != 4 || rows[1].Name != "est/M" || !rows[1].Exclusive || rows[0].Exclusive {
		t.Errorf("labels %+v", rows)
	}
	ms, err := c.ListMilestones(ctx, owner, repo)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Row().DueOn == nil || ms[0].State != "closed" {
		t.Errorf("milestones %+v", ms)
	}
	if r := countRequests(f, http.MethodGet, "/milestones"); r != 1 {
		t.Errorf("%d milestone requests", r)
	}
	for _, r := range f.Requests() {
		if strings.HasSuffix(r.Path, "/milestones") && r.Query.Get("state") != "all" {
			t.Errorf("milestones listed with state %q", r.Query.Get("state"))
		}
		if strings.HasSuffix(r.Path, "/issues") && r.Query.Get("state") != "all" {
			t.Errorf("issues listed with state %q", r.Query.Get("state"))
		}
	}

	deps, err := c.ListDependencies(ctx, owner, repo, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := numbers(deps); !slices.Equal(got, []int64{1, 3}) {
		t.Errorf("dependencies of #2: %v", got)
	}
	times, err := c.ListTrackedTimes(ctx, owner, repo, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(times) != 2 || times[0].Row().Issue != 1 || times[0].Row().Seconds != 3600 || times[0].Row().User != "ceo" {
		t.Errorf("tracked times %+v", times)
	}
	comments, err := c.ListComments(ctx, owner, repo, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(comments) != 2 || comments[0].Row().Issue != 1 || comments[1].Row().Issue != 4 || comments[1].Row().Author != "ceo" {
		t.Errorf("comments %+v", comments)
	}
}

func TestTimelineDecodesLabelEvents(t *testing.T) {
	f := newFake(t, giteafake.Options{})
	c := newClient(t, f, gitea.Options{})
	tl, err := c.IssueTimeline(context.Background(), owner, repo, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl) != 32 {
		t.Fatalf("timeline of #1 has %d entries, want 32", len(tl))
	}
	byID := map[int64]store.TimelineEvent{}
	for _, e := range tl {
		byID[e.ID] = e.Row(1)
	}
	check := func(id int64, want store.TimelineEvent) {
		t.Helper()
		got := byID[id]
		want.ID, want.Issue, want.Actor, want.CreatedAt = id, 1, "ceo", got.CreatedAt
		if got.CreatedAt.IsZero() || got.Kind != want.Kind || got.Label != want.Label || got.Removed != want.Removed ||
			got.Assignee != want.Assignee || got.RefIssue != want.RefIssue || (got.Milestone == nil) != (want.Milestone == nil) {
			t.Errorf("timeline %d = %+v, want %+v", id, got, want)
		}
	}
	one := int64(1)
	check(2, store.TimelineEvent{Kind: "label", Label: "deadline/hard"})
	check(4, store.TimelineEvent{Kind: "label", Label: "est/S", Removed: true}) // est/M pushed est/S out
	check(5, store.TimelineEvent{Kind: "label", Label: "est/M"})
	check(12, store.TimelineEvent{Kind: "milestone", Milestone: &one})
	check(13, store.TimelineEvent{Kind: "milestone", Removed: true})
	check(16, store.TimelineEvent{Kind: "assignees", Assignee: "dev"})
	check(17, store.TimelineEvent{Kind: "assignees", Assignee: "dev", Removed: true})
	check(23, store.TimelineEvent{Kind: "close"})
	check(29, store.TimelineEvent{Kind: "add_dependency", RefIssue: 2})
	check(39, store.TimelineEvent{Kind: "pull_ref", RefIssue: 4})

	prTL, err := c.IssueTimeline(context.Background(), owner, repo, 4)
	if err != nil {
		t.Fatal(err)
	}
	kinds := []string{}
	for _, e := range prTL {
		kinds = append(kinds, e.Type)
	}
	if !slices.Contains(kinds, "merge_pull") || !slices.Contains(kinds, "review_request") || prTL[1].Row(4).Label != "p/1" {
		t.Errorf("pull timeline kinds %v", kinds)
	}
}

func TestPagingFollowsTotalCount(t *testing.T) {
	f := newFake(t, giteafake.Options{MaxPageSize: 2})
	c := newClient(t, f, gitea.Options{})
	ctx := context.Background()
	for i := range 5 {
		if _, err := c.CreateIssue(ctx, owner, repo, gitea.CreateIssueOptions{Title: "paging " + string(rune('a'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	f.ResetRequests()
	issues, err := c.ListIssues(ctx, owner, repo, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got := numbers(issues); !slices.Equal(got, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Fatalf("issues %v", got)
	}
	reqs := f.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests for 9 issues at 2 per page, want 5", len(reqs))
	}
	for i, r := range reqs {
		if r.Query.Get("page") != string(rune('1'+i)) || r.Query.Get("limit") != "50" {
			t.Errorf("request %d query %v", i, r.Query)
		}
	}
	// Timelines page too: #1 has 32 entries.
	tl, err := c.IssueTimeline(ctx, owner, repo, 1)
	if err != nil || len(tl) != 32 {
		t.Errorf("paged timeline: %d entries, %v", len(tl), err)
	}
}

func TestSinceFilters(t *testing.T) {
	f := newFake(t, giteafake.Options{})
	c := newClient(t, f, gitea.Options{})
	ctx := context.Background()
	since := time.Date(2026, 11, 29, 21, 23, 0, 0, time.UTC)
	issues, err := c.ListIssues(ctx, owner, repo, since)
	if err != nil {
		t.Fatal(err)
	}
	if got := numbers(issues); !slices.Equal(got, []int64{1, 4}) {
		t.Errorf("issues since %s: %v", since, got)
	}
	comments, err := c.ListComments(ctx, owner, repo, since)
	if err != nil {
		t.Fatal(err)
	}
	if len(comments) != 1 || comments[0].ID != 44 {
		t.Errorf("comments since: %+v", comments)
	}
	times, err := c.ListTrackedTimes(ctx, owner, repo, time.Date(2026, 11, 29, 21, 22, 45, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if len(times) != 1 || times[0].ID != 2 {
		t.Errorf("times since: %+v", times)
	}
	for _, r := range f.Requests() {
		if strings.HasSuffix(r.Path, "/issues") && r.Query.Get("since") != "2026-11-29T21:23:00Z" {
			t.Errorf("since sent as %q", r.Query.Get("since"))
		}
	}
}

func TestRetryOn503ThenSuccess(t *testing.T) {
	f := newFake(t, giteafake.Options{})
	c := newClient(t, f, gitea.Options{})
	f.InjectFault(giteafake.Fault{Status: http.StatusServiceUnavailable, Times: 2})
	labels, err := c.ListLabels(context.Background(), owner, repo)
	if err != nil {
		t.Fatal(err)
	}
	if len(labels) != 4 || len(f.Requests()) != 3 {
		t.Errorf("%d labels after %d requests, want 4 after 3", len(labels), len(f.Requests()))
	}
}

func TestRetryAfterOn429(t *testing.T) {
	f := newFake(t, giteafake.Options{})
	c := newClient(t, f, gitea.Options{})
	f.InjectFault(giteafake.Fault{Status: http.StatusTooManyRequests, RetryAfter: "1"})
	start := time.Now()
	if _, err := c.ListMilestones(context.Background(), owner, repo); err != nil {
		t.Fatal(err)
	}
	// A lower bound only: the client must have waited what the server asked.
	if waited := time.Since(start); waited < 900*time.Millisecond {
		t.Errorf("retried after %s, server asked for 1s", waited)
	}
	// 429 is retried even for a non-idempotent POST: the server did nothing.
	f.InjectFault(giteafake.Fault{Method: http.MethodPost, Status: http.StatusTooManyRequests, RetryAfter: "0"})
	if _, err := c.CreateIssue(context.Background(), owner, repo, gitea.CreateIssueOptions{Title: "after 429"}); err != nil {
		t.Fatal(err)
	}
}

func TestRetryAfterBeyondCapIsUnavailable(t *testing.T) {
	f := newFake(t, giteafake.Options{})
	c := newClient(t, f, gitea.Options{MaxRetryAfter: 2 * time.Second})
	f.InjectFault(giteafake.Fault{Status: http.StatusTooManyRequests, RetryAfter: "120"})
	_, err := c.ListLabels(context.Background(), owner, repo)
	var apiErr *gitea.APIError
	if !errors.Is(err, gitea.ErrUnavailable) || !errors.As(err, &apiErr) || apiErr.Status != 429 {
		t.Fatalf("err %v, want unavailable with status 429", err)
	}
}

func TestRetriesExhausted(t *testing.T) {
	f := newFake(t, giteafake.Options{})
	c := newClient(t, f, gitea.Options{MaxAttempts: 3})
	f.InjectFault(giteafake.Fault{Status: http.StatusBadGateway, Times: 10})
	_, err := c.ListLabels(context.Background(), owner, repo)
	var apiErr *gitea.APIError
	if !errors.Is(err, gitea.ErrUnavailable) || !errors.As(err, &apiErr) || apiErr.Status != 502 || apiErr.Attempts != 3 {
		t.Fatalf("err %v, want unavailable 502 after 3 attempts", err)
	}
	if errors.Is(err, gitea.ErrNotFound) {
		t.Error("unavailable error also matches ErrNotFound")
	}
}

func TestNoRetryOfCreateAfter5xx(t *testing.T) {
	f := newFake(t, giteafake.Options{})
	c := newClient(t, f, gitea.Options{})
	f.InjectFault(giteafake.Fault{Method: http.MethodPost, Status: http.StatusInternalServerError, Times: 5})
	if _, err := c.CreateIssue(context.Background(), owner, repo, gitea.CreateIssueOptions{Title: "x"}); err == nil {
		t.Fatal("create succeeded through a 500")
	}
	if n := countRequests(f, http.MethodPost, "/issues"); n != 1 {
		t.Errorf("create sent %d times, want 1", n)
	}
}

func TestCallTimeout(t *testing.T) {
	f := newFake(t, giteafake.Options{})
	c := newClient(t, f, gitea.Options{CallTimeout: 100 * time.Millisecond})
	f.InjectFault(giteafake.Fault{Delay: 5 * time.Second, Times: 10})
	_, err := c.ListLabels(context.Background(), owner, repo)
	if !errors.Is(err, gitea.ErrUnavailable) {
		t.Fatalf("err %v, want unavailable on timeout", err)
	}
	// The caller's own context wins too.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.ListLabels(ctx, owner, repo); err == nil {
		t.Fatal("canceled context still succeeded")
	}
}

func TestNotFoundAndAuth(t *testing.T) {
	f := newFake(t, giteafake.Options{})
	c := newClient(t, f, gitea.Options{})
	_, err := c.GetIssue(context.Background(), owner, repo, 99)
	var apiErr *gitea.APIError
	if !errors.Is(err, gitea.ErrNotFound) || !errors.As(err, &apiErr) || apiErr.Status != 404 || apiErr.Attempts != 1 {
		t.Fatalf("err %v, want not found after one attempt", err)
	}
	if _, err := c.ListLabels(context.Background(), owner, "nope"); !errors.Is(err, gitea.ErrNotFound) {
		t.Errorf("unknown repo: %v", err)
	}
	if r := f.Requests()[0]; r.Header.Get("Authorization") != "token "+f.Token() {
		t.Errorf("auth header %q", r.Header.Get("Authorization"))
	}

	bad, err := gitea.New(f.URL+"/api/v1/", "wrong", gitea.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.ListLabels(context.Background(), owner, repo); !errors.As(err, &apiErr) || apiErr.Status != 401 {
		t.Errorf("wrong token: %v", err)
	}
	req, _ := http.NewRequest(http.MethodGet, f.URL+"/api/v1/repos/ceo/demo/labels", nil)
	req.Header.Set("Authorization", "Bearer "+f.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Total-Count") != "4" {
		t.Errorf("bearer auth: %d, total %q", resp.StatusCode, resp.Header.Get("X-Total-Count"))
	}
}

func TestAddDependencyIsIdempotent(t *testing.T) {
	f := newFake(t, giteafake.Options{})
	c := newClient(t, f, gitea.Options{})
	ctx := context.Background()
	dep := gitea.IssueMeta{Owner: owner, Repo: repo, Index: 1}
	// #3 -> #1 is new: one POST; the second call sees it and sends nothing.
	for range 2 {
		if err := c.AddDependency(ctx, owner, repo, 3, dep); err != nil {
			t.Fatal(err)
		}
	}
	if n := countRequests(f, http.MethodPost, "/issues/3/dependencies"); n != 1 {
		t.Errorf("%d POSTs, want 1", n)
	}
	deps, err := c.ListDependencies(ctx, owner, repo, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := numbers(deps); !slices.Equal(got, []int64{1}) {
		t.Errorf("dependencies of #3: %v", got)
	}
	// When the check misses it (a race), Forgejo's 500 "already exist" is
	// taken as done.
	f.InjectFault(giteafake.Fault{Method: http.MethodGet, PathPrefix: "/repos/ceo/demo/issues/3/dependencies", Status: 200, Body: "[]"})
	if err := c.AddDependency(ctx, owner, repo, 3, dep); err != nil {
		t.Fatalf("duplicate after a missed check: %v", err)
	}
	if n := countRequests(f, http.MethodPost, "/issues/3/dependencies"); n != 2 {
		t.Errorf("%d POSTs, want 2", n)
	}
	// Removal twice: one DELETE.
	for range 2 {
		if err := c.RemoveDependency(ctx, owner, repo, 3, dep); err != nil {
			t.Fatal(err)
		}
	}
	if n := countRequests(f, http.MethodDelete, "/issues/3/dependencies"); n != 1 {
		t.Errorf("%d DELETEs, want 1", n)
	}
	deps, _ = c.ListDependencies(ctx, owner, repo, 3)
	if len(deps) != 0 {
		t.Errorf("dependencies left: %v", numbers(deps))
	}
}

func labelNames(ls []gitea.Label) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Name)
	}
	return out
}

func TestExclusiveLabelScopes(t *testing.T) {
	f := newFake(t, giteafake.Options{})
	c := newClient(t, f, gitea.Options{})
	ctx := context.Background()
	// #1 carries deadline/hard, est/S, p/1.
	got, err := c.AddLabels(ctx, owner, repo, 1, []int64{2}) // est/M
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"deadline/hard", "est/M", "p/1"}; !slices.Equal(labelNames(got), want) {
		t.Errorf("after est/M: %v, want %v", labelNames(got), want)
	}
	xl, err := c.CreateLabel(ctx, owner, repo, gitea.CreateLabelOptions{Name: "est/xl", Color: "112233", Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	if !xl.Exclusive || xl.Color != "112233" {
		t.Errorf("created label %+v", xl)
	}
	hard2, err := c.CreateLabel(ctx, owner, repo, gitea.CreateLabelOptions{Name: "deadline/soft", Color: "#445566"})
	if err != nil {
		t.Fatal(err)
	}
	got, err = c.AddLabels(ctx, owner, repo, 1, []int64{xl.ID, hard2.ID})
	if err != nil {
		t.Fatal(err)
	}
	// Non-exclusive deadline/* labels coexist; est/xl pushed est/M out.
	if want := []string{"deadline/hard", "deadline/soft", "est/xl", "p/1"}; !slices.Equal(labelNames(got), want) {
		t.Errorf("after est/xl: %v, want %v", labelNames(got), want)
	}
	got, err = c.ReplaceLabels(ctx, owner, repo, 1, []int64{1, 2}) // est/S then est/M: one survives
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"est/M"}; !slices.Equal(labelNames(got), want) {
		t.Errorf("after replace: %v, want %v", labelNames(got), want)
	}
	if err := c.RemoveLabel(ctx, owner, repo, 1, 2); err != nil {
		t.Fatal(err)
	}
	is, err := c.GetIssue(ctx, owner, repo, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(is.Labels) != 0 {
		t.Errorf("labels left %v", labelNames(is.Labels))
	}
	// The writes show in the timeline as label events.
	tl, err := c.IssueTimeline(ctx, owner, repo, 1)
	if err != nil {
		t.Fatal(err)
	}
	last := tl[len(tl)-1].Row(1)
	if last.Kind != "label" || last.Label != "est/M" || !last.Removed {
		t.Errorf("last timeline event %+v", last)
	}
}

func TestEditIssueAndMilestone(t *testing.T) {
	f := newFake(t, giteafake.Options{})
	c := newClient(t, f, gitea.Options{})
	ctx := context.Background()
	is, err := c.EditIssue(ctx, owner, repo, 2, gitea.EditIssueOptions{
		Milestone: gitea.Int64(1), Assignees: gitea.Strings("dev", "ceo"), State: gitea.String("closed")})
	if err != nil {
		t.Fatal(err)
	}
	row := is.Row()
	if row.Milestone == nil || *row.Milestone != 1 || !slices.Equal(row.Assignees, []string{"ceo", "dev"}) || row.State != "closed" || row.ClosedAt == nil {
		t.Errorf("edited row %+v", row)
	}
	is, err = c.EditIssue(ctx, owner, repo, 2, gitea.EditIssueOptions{Milestone: gitea.Int64(0), Assignees: gitea.Strings(), State: gitea.String("open")})
	if err != nil {
		t.Fatal(err)
	}
	row = is.Row()
	if row.Milestone != nil || len(row.Assignees) != 0 || row.State != "open" || row.ClosedAt != nil {
		t.Errorf("cleared row %+v", row)
	}
	due := time.Date(2027, 1, 31, 23, 59, 59, 0, time.UTC)
	m, err := c.EditMilestone(ctx, owner, repo, 1, gitea.EditMilestoneOptions{Description: gitea.String("first release\ndeadline: hard"), DueOn: &due})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := c.ListMilestones(ctx, owner, repo)
	if err != nil {
		t.Fatal(err)
	}
	if m.Description != "first release\ndeadline: hard" || len(ms) != 1 || ms[0].Description != m.Description || !ms[0].DueOn.Equal(due) || ms[0].Title != "v1.0" {
		t.Errorf("milestone after edit %+v", ms)
	}
	if _, err := c.EditIssue(ctx, owner, repo, 2, gitea.EditIssueOptions{Milestone: gitea.Int64(42)}); err == nil {
		t.Error("unknown milestone accepted")
	}
}

// A 429 is about the client: a call started after another call was told to
// wait waits too, instead of spending its own attempts on more 429s.
func TestConcurrentCallsShareA429Pause(t *testing.T) {
	t.Parallel()
	f := newFake(t, giteafake.Options{})
	c := newClient(t, f, gitea.Options{})
	f.InjectFault(giteafake.Fault{PathPrefix: "/repos/ceo/demo/labels", Status: http.StatusTooManyRequests, RetryAfter: "1"})
	first := make(chan error, 1)
	go func() {
		_, err := c.ListLabels(context.Background(), owner, repo)
		first <- err
	}()
	var refused time.Time
	for deadline := time.Now().Add(5 * time.Second); refused.IsZero(); {
		if time.Now().After(deadline) {
			t.Fatal("the labels request never arrived")
		}
		for _, r := range f.Requests() {
			if strings.HasSuffix(r.Path, "/labels") {
				refused = r.At
			}
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // the 429 reaches the client
	if _, err := c.ListMilestones(context.Background(), owner, repo); err != nil {
		t.Fatal(err)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Requests() {
		if strings.HasSuffix(r.Path, "/milestones") {
			if gap := r.At.Sub(refused); gap < 900*time.Millisecond {
				t.Errorf("milestones requested %s after the 429 with Retry-After 1", gap)
			}
		}
	}
}

func TestMaxConcurrentBoundsRequestsInFlight(t *testing.T) {
	t.Parallel()
	f := newFake(t, giteafake.Options{Latency: 30 * time.Millisecond})
	c := newClient(t, f, gitea.Options{MaxConcurrent: 3})
	errs := make(chan error, 12)
	for range 12 {
		go func() {
			_, err := c.ListLabels(context.Background(), owner, repo)
			errs <- err
		}()
	}
	for range 12 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if peak := f.PeakInFlight(); peak > 3 || peak < 2 {
		t.Errorf("peak requests in flight = %d, want 3 (bound 3, 12 callers)", peak)
	}
}

// The fake's rate limit answers what a rate-limiting proxy does, and the
// client waits it out.
func TestRateLimitedForgeIsWaitedOut(t *testing.T) {
	t.Parallel()
	f := newFake(t, giteafake.Options{RateLimit: &giteafake.RateLimit{Requests: 3, Window: time.Second}})
	c := newClient(t, f, gitea.Options{})
	for range 5 {
		if _, err := c.ListLabels(context.Background(), owner, repo); err != nil {
			t.Fatal(err)
		}
	}
	if f.Limited() == 0 {
		t.Fatal("5 calls against 3 a second were never answered 429")
	}
}
