package dashboard

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker"
)

func latestFlow(t *testing.T, pool *store.Pool, p store.Project) worker.SnapshotData {
	t.Helper()
	snap, err := store.LatestSnapshot(context.Background(), pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var data worker.SnapshotData
	if err := json.Unmarshal(snap.Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.Flow == nil {
		t.Fatal("snapshot has no flow figures")
	}
	return data
}

func figure(doc *html.Node, name string) string {
	ns := find(doc, func(n *html.Node) bool { return attr(n, "data-figure") == name })
	if len(ns) == 0 {
		return ""
	}
	return text(ns[0])
}

func TestFlowPage(t *testing.T) {
	t.Parallel()
	d, pool, p := newTestDashboard(t)
	data := latestFlow(t, pool, p)
	f := data.Flow
	code, doc, body := get(t, d.Handler(), "/ceo/demo/flow")
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	for _, class := range []string{"howmany", "scatter", "aging", "throughput", "wip", "cfd"} {
		if len(find(doc, byClass("svg", class))) != 1 {
			t.Errorf("no svg.%s chart", class)
		}
	}
	if n := len(find(doc, byClass("circle", "dot"))); n != len(f.CycleTime.Items) || n == 0 {
		t.Errorf("%d scatter dots, %d cycle times", n, len(f.CycleTime.Items))
	}
	if n := len(find(doc, byClass("g", "percentile"))); n != 4 {
		t.Errorf("%d percentile lines, want 4", n)
	}
	if n := len(find(doc, byClass("rect", "week"))); n != len(f.Throughput.Weeks) {
		t.Errorf("%d weeks drawn, %d in the figures", n, len(f.Throughput.Weeks))
	}
	if n := len(find(doc, byClass("path", "band"))); n != 5 {
		t.Errorf("%d CFD bands, want 5", n)
	}
	aging := 0
	for _, a := range f.Age {
		if a.Aging {
			aging++
		}
	}
	if n := len(find(doc, byClass("g", "aging"))); n != aging {
		t.Errorf("%d aging dots, %d aging issues", n, aging)
	}
	for name, want := range map[string]int{
		"n": f.CycleTime.N, "p50": f.CycleTime.Percentiles.P50, "p70": f.CycleTime.Percentiles.P70,
		"p85": f.CycleTime.Percentiles.P85, "p95": f.CycleTime.Percentiles.P95, "aging": aging,
		"wip": f.WIP[len(f.WIP)-1].Count, "weekly": f.Throughput.Predictability.P50,
	} {
		if got := figure(doc, name); got != strconv.Itoa(want) {
			t.Errorf("figure %s = %q, want %d", name, got, want)
		}
	}
	// The form asks for the first due date of an open milestone in the
	// horizon, and the answer is the curves read on that day.
	ans := find(doc, byID("answer"))
	if len(ans) != 1 {
		t.Fatalf("no answer:\n%s", body)
	}
	day := attr(ans[0], "data-day")
	pt, ok := f.DoneBy.On(day)
	if !ok || figure(doc, "at-least-80") != strconv.Itoa(pt.AtLeast80) || figure(doc, "at-least-90") != strconv.Itoa(pt.AtLeast90) {
		t.Errorf("answer for %q: %s, curve %+v", day, text(ans[0]), pt)
	}
	if f.Baseline != nil {
		bp, _ := f.Baseline.On(day)
		if figure(doc, "baseline-80") != strconv.Itoa(bp.AtLeast80) {
			t.Errorf("baseline answer %q, curve %+v", figure(doc, "baseline-80"), bp)
		}
	}
	// Asking for another date, a non-date and a date past the horizon.
	last := f.DoneBy.Last()
	_, doc, _ = get(t, d.Handler(), "/ceo/demo/flow?by="+last)
	if pt, _ := f.DoneBy.On(last); figure(doc, "at-least-50") != strconv.Itoa(pt.AtLeast50) {
		t.Errorf("answer on %s: %q, want %d", last, figure(doc, "at-least-50"), pt.AtLeast50)
	}
	for q, want := range map[string]string{"soon": "is not a date", "2099-01-01": "outside the forecast horizon"} {
		code, doc, _ := get(t, d.Handler(), "/ceo/demo/flow?by="+q)
		if ans := find(doc, byID("answer")); code != http.StatusOK || len(ans) != 1 || !strings.Contains(text(ans[0]), want) {
			t.Errorf("?by=%s: %d, want %q", q, code, want)
		}
	}
	// The quick questions are the open milestones' due dates.
	links := 0
	for _, a := range find(doc, func(n *html.Node) bool { return n.Data == "a" && strings.Contains(attr(n, "href"), "/flow?by=") }) {
		links++
		if code, _, _ := get(t, d.Handler(), strings.Split(attr(a, "href"), "#")[0]); code != http.StatusOK {
			t.Errorf("%s answers %d", attr(a, "href"), code)
		}
	}
	if links == 0 {
		t.Error("no quick date links")
	}
}
