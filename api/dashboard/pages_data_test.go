package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/tools"
)

// boardNumbers are the issue numbers of a board page's cards, sorted.
func boardNumbers(t *testing.T, h http.Handler, path string) []int64 {
	t.Helper()
	code, doc, _ := get(t, h, path)
	if code != http.StatusOK {
		t.Fatalf("%s: %d", path, code)
	}
	var out []int64
	for _, c := range find(doc, byClass("div", "card")) {
		n, err := strconv.ParseInt(attr(c, "data-number"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
		links := find(c, func(n *html.Node) bool { return n.Data == "a" })
		if len(links) == 0 || attr(links[0], "href") != "/ceo/demo/issues/"+strconv.FormatInt(n, 10) {
			t.Errorf("card #%d does not link to its issue page", n)
		}
	}
	slices.Sort(out)
	return out
}

// TestBoardFilters: each filter returns exactly the issues the mirror and
// the snapshot say match, computed here from the store, not the page.
func TestBoardFilters(t *testing.T) {
	t.Parallel()
	d, pool, p := newTestDashboard(t)
	ctx := context.Background()
	h := d.Handler()
	rows, err := store.IssueCards(ctx, pool, p.ID, testNow.Add(time.Minute).Add(-doneWindow))
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.snapshot(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	status := map[int64]scheduler.IssueStatus{}
	for _, st := range s.data.Statuses {
		status[st.Number] = st
	}
	forecast := map[int64]scheduler.IssueForecast{}
	for _, f := range s.data.Forecast.Issues {
		forecast[f.Number] = f
	}
	want := func(keep func(store.IssueCard) bool) []int64 {
		var out []int64
		for _, r := range rows {
			if keep(r) {
				out = append(out, r.Number)
			}
		}
		slices.Sort(out)
		return out
	}
	all := boardNumbers(t, h, "/ceo/demo/")
	if !slices.Equal(all, want(func(store.IssueCard) bool { return true })) {
		t.Fatalf("unfiltered board = %d cards, want all %d", len(all), len(rows))
	}
	var label, assignee string
	for _, r := range rows {
		if assignee == "" && len(r.Assignees) > 0 {
			assignee = r.Assignees[0]
		}
		for _, l := range r.Labels {
			if strings.HasPrefix(l, "kind/") {
				label = l
			}
		}
	}
	type filterCase struct {
		query string
		keep  func(store.IssueCard) bool
	}
	cases := []filterCase{
		{"milestone=1", func(r store.IssueCard) bool { return r.Milestone != nil && *r.Milestone == 1 }},
		{"milestone=none", func(r store.IssueCard) bool { return r.Milestone == nil }},
		{"assignee=" + assignee, func(r store.IssueCard) bool { return slices.Contains(r.Assignees, assignee) }},
		{"assignee=none", func(r store.IssueCard) bool { return len(r.Assignees) == 0 }},
		{"label=" + url.QueryEscape(label), func(r store.IssueCard) bool { return slices.Contains(r.Labels, label) }},
		{"flag=blocked", func(r store.IssueCard) bool { return status[r.Number].Blocked }},
		{"flag=stale", func(r store.IssueCard) bool { return status[r.Number].Stale }},
		{"flag=no-estimate", func(r store.IssueCard) bool { return status[r.Number].MissingEstimate }},
		{"flag=hard", func(r store.IssueCard) bool { _, _, hard := scheduler.ParseLabels(r.Labels); return hard }},
		{"flag=unschedulable", func(r store.IssueCard) bool { return status[r.Number].Unschedulable != "" }},
		{"flag=aging", func(r store.IssueCard) bool { return status[r.Number].Aging }},
		{"flag=discarded", func(r store.IssueCard) bool { return status[r.Number].Discarded }},
		{"flag=new", func(r store.IssueCard) bool { _, ok := status[r.Number]; return !ok }},
		{"flag=unassigned", func(r store.IssueCard) bool {
			f, ok := forecast[r.Number]
			return ok && len(r.Assignees) == 0 && f.Unassigned && f.Assignee != ""
		}},
		{"milestone=1&flag=blocked", func(r store.IssueCard) bool {
			return r.Milestone != nil && *r.Milestone == 1 && status[r.Number].Blocked
		}},
	}
	for _, f := range flagFilters {
		if !slices.ContainsFunc(cases, func(c filterCase) bool { return c.query == "flag="+f.Key }) {
			t.Errorf("the board's flag filter %q has no case here", f.Key)
		}
	}
	for _, c := range cases {
		got, exp := boardNumbers(t, h, "/ceo/demo/?"+c.query), want(c.keep)
		if !slices.Equal(got, exp) {
			t.Errorf("?%s: cards %v, want %v", c.query, got, exp)
		}
		if len(exp) == 0 && !strings.Contains(c.query, "none") && !slices.Contains([]string{"flag=no-estimate", "flag=hard", "flag=unschedulable", "flag=aging", "flag=discarded", "flag=new"}, c.query) {
			t.Errorf("?%s matches nothing in the seeded project: the case shows nothing", c.query)
		}
	}
	_, doc, _ := get(t, h, "/ceo/demo/?flag=blocked")
	if sel := find(doc, func(n *html.Node) bool {
		return n.Data == "option" && attr(n, "value") == "blocked" && hasAttr(n, "selected")
	}); len(sel) != 1 {
		t.Error("the flag filter does not show its choice")
	}
	if dts := find(doc, func(n *html.Node) bool { return n.Data == "dt" }); len(dts) != 5 {
		t.Errorf("legend has %d states, want the five", len(dts))
	}
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

// TestIssuePage: the page shows what query_project's issue view returns
// for the same snapshot.
func TestIssuePage(t *testing.T) {
	t.Parallel()
	d, _, p := newTestDashboard(t)
	d.cfg.GiteaURL = "https://gitea.example"
	ctx := context.Background()
	s, err := d.snapshot(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	// An issue with dependencies and a forecast.
	var n int64
	for _, st := range s.data.Statuses {
		if st.Blocked {
			n = st.Number
			break
		}
	}
	a, err := d.cfg.Query(ctx, tools.QueryProjectInput{Project: p.FullName(), View: "issue", Filters: &tools.Filters{IssueID: &n}})
	if err != nil {
		t.Fatal(err)
	}
	v := a.Data.(tools.IssueView)
	code, doc, _ := get(t, d.Handler(), "/ceo/demo/issues/"+strconv.FormatInt(n, 10))
	if code != http.StatusOK {
		t.Fatalf("issue page: %d", code)
	}
	if h1 := find(doc, func(n *html.Node) bool { return n.Data == "h1" }); text(h1[0]) != "#"+strconv.FormatInt(n, 10)+" "+v.Intent.Title {
		t.Errorf("title %q", text(h1[0]))
	}
	if l := find(doc, byID("in-gitea")); len(l) != 1 || attr(l[0], "href") != "https://gitea.example/ceo/demo/issues/"+strconv.FormatInt(n, 10) {
		t.Error("no link to the issue in Gitea")
	}
	figure := func(name string) string {
		f := find(doc, func(x *html.Node) bool { return attr(x, "data-figure") == name })
		if len(f) != 1 {
			t.Fatalf("no figure %s", name)
		}
		return text(f[0])
	}
	if got := figure("state"); got != stateWords[v.Derived.State] {
		t.Errorf("state %q, view %q", got, v.Derived.State)
	}
	if f := v.Derived.Forecast; f == nil || figure("range") != "p10 "+dayText(f.P10)+" · p50 "+dayText(f.P50)+" – p80 "+dayText(f.P80) || figure("critical") != pctText(f.CriticalFreq) {
		t.Errorf("range %q, critical %q; view %+v", figure("range"), figure("critical"), f)
	}
	links := func(id string) []int64 {
		var out []int64
		for _, a := range find(find(doc, byID(id))[0], func(n *html.Node) bool { return n.Data == "a" }) {
			k, _ := strconv.ParseInt(strings.TrimPrefix(text(a), "#"), 10, 64)
			out = append(out, k)
		}
		return out
	}
	deps := links("deps")
	if want := slices.Concat(v.Derived.DependsOn, v.Derived.Blocks, v.Derived.BlockedBy); !slices.Equal(deps, want) || len(v.Derived.BlockedBy) == 0 {
		t.Errorf("dependency links %v, view: depends on %v, blocks %v, waiting for %v", deps, v.Derived.DependsOn, v.Derived.Blocks, v.Derived.BlockedBy)
	}
	if rows := find(find(doc, byID("timeline"))[0], func(n *html.Node) bool { return n.Data == "tr" }); len(rows)-1 != len(v.Derived.Timeline) {
		t.Errorf("timeline rows %d, view %d", len(rows)-1, len(v.Derived.Timeline))
	}
	// Provenance: every reason the view gives, in its order, and no other.
	var reasons []string
	if pv := v.Derived.Provenance; pv != nil {
		reasons = slices.Concat(pv.State, pv.Discarded, pv.Blocked, pv.Stale, pv.MissingEstimate, pv.Aging, pv.Unschedulable)
	}
	var shown []string
	for _, r := range find(find(doc, byID("provenance"))[0], func(n *html.Node) bool { return n.Data == "div" }) {
		shown = append(shown, text(r))
	}
	norm := func(ss []string) []string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = strings.Join(strings.Fields(s), " ")
		}
		return out
	}
	if !slices.Equal(shown, norm(reasons)) || len(reasons) == 0 {
		t.Errorf("provenance shown %q, view %q", shown, reasons)
	}
	if code, _, _ := get(t, d.Handler(), "/ceo/demo/issues/99999"); code != http.StatusNotFound {
		t.Errorf("unknown issue: %d", code)
	}
}

// TestPeoplePage: each person's figures are what the runway view's
// capacity returns.
func TestPeoplePage(t *testing.T) {
	t.Parallel()
	d, _, p := newTestDashboard(t)
	ctx := context.Background()
	limit := tools.MaxLimit
	a, err := d.cfg.Query(ctx, tools.QueryProjectInput{Project: p.FullName(), View: "runway", Filters: &tools.Filters{Limit: &limit}})
	if err != nil {
		t.Fatal(err)
	}
	capacity := a.Data.(tools.RunwayView).Capacity
	_, doc, _ := get(t, d.Handler(), "/ceo/demo/people")
	rows := find(doc, func(n *html.Node) bool { return n.Data == "tr" && attr(n, "data-login") != "" })
	if len(rows) != len(capacity) || len(capacity) == 0 {
		t.Fatalf("%d people rows, runway capacity has %d", len(rows), len(capacity))
	}
	for i, c := range capacity {
		r := rows[i]
		cell := func(name string) *html.Node {
			return find(r, func(x *html.Node) bool { return attr(x, "data-figure") == name })[0]
		}
		got := []string{attr(r, "data-login"), text(cell("hoursPerWeek")), text(cell("loadHours")), text(cell("loadWeeks")), text(cell("issues")), attr(cell("freeFrom"), "data-day")}
		want := []string{c.Login, fmtNum(c.HoursPerWeek), fmtNum(c.LoadHours), fmtNum(c.LoadWeeks), strconv.Itoa(c.Issues), c.FreeFrom}
		if !slices.Equal(got, want) {
			t.Errorf("row %d = %q, runway %q", i, got, want)
		}
	}
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
