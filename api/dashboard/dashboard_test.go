package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker"
)

var testNow = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// newTestDashboard seeds a generated project, computes its snapshot the way
// the recompute job does, and returns the dashboard over it.
func newTestDashboard(t testing.TB) (*Dashboard, *store.Pool, store.Project) {
	t.Helper()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "ceo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	shape := storetest.ProjectShape{Open: 60, Done: 120, People: 4, DepShare: 0.25, Milestones: 3, Seed: 3}
	if err := storetest.SeedProject(ctx, pool, p.ID, shape, testNow); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	f := &worker.Forecaster{Pool: pool, Log: log, Trials: 300, StaleWorkingDays: 3, Now: func() time.Time { return testNow }}
	if err := f.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	empty, err := store.EnsureProject(ctx, pool, "ceo", "empty")
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(Config{Pool: pool, Projects: []store.Project{p, empty}, Log: log, Now: func() time.Time { return testNow.Add(time.Minute) }})
	if err != nil {
		t.Fatal(err)
	}
	return d, pool, p
}

func get(t testing.TB, h http.Handler, path string) (int, *html.Node, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body := rec.Body.String()
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatalf("%s: parse: %v", path, err)
	}
	return rec.Code, doc, body
}

// find returns the nodes under n for which match holds, in document order.
func find(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

func byClass(tag, class string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Data == tag && hasClass(n, class) }
}

func byID(id string) func(*html.Node) bool {
	return func(n *html.Node) bool { return attr(n, "id") == id }
}

func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

func TestBoard(t *testing.T) {
	t.Parallel()
	d, _, _ := newTestDashboard(t)
	code, doc, _ := get(t, d.Handler(), "/ceo/demo/")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	cols := find(doc, byClass("section", "col"))
	var states []string
	cards := 0
	for _, c := range cols {
		states = append(states, attr(c, "data-state"))
		if attr(c, "data-state") != "done" {
			cards += len(find(c, byClass("div", "card")))
		}
	}
	if got := strings.Join(states, ","); got != "diagnosis,triage,steeping,in_review,done" {
		t.Fatalf("columns = %s", got)
	}
	if cards != 60 {
		t.Fatalf("open cards = %d, want the 60 open issues", cards)
	}
	var blocked int
	for _, b := range find(doc, byClass("span", "badge")) {
		if strings.HasPrefix(text(b), "blocked by #") {
			blocked++
		}
	}
	if blocked == 0 {
		t.Fatal("no card is flagged blocked, though a quarter of the issues have dependencies")
	}
	if h := find(doc, byClass("span", "meta")); len(h) != 1 || !strings.Contains(text(h[0]), "snapshot v1") {
		t.Fatalf("header lacks the snapshot version: %v", h)
	}
}

func TestRunway(t *testing.T) {
	t.Parallel()
	d, _, _ := newTestDashboard(t)
	code, doc, _ := get(t, d.Handler(), "/ceo/demo/runway")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	rows := find(doc, func(n *html.Node) bool { return n.Data == "tr" && attr(n, "data-id") != "" })
	if len(rows) != 3 {
		t.Fatalf("milestone rows = %d, want 3", len(rows))
	}
	if !strings.Contains(text(rows[0]), "hard") || strings.Contains(text(rows[1]), "hard") {
		t.Fatalf("only the first milestone is hard: %q / %q", text(rows[0]), text(rows[1]))
	}
	svg := find(doc, byClass("svg", "runway"))
	if len(svg) != 1 {
		t.Fatal("no runway chart")
	}
	if bands := find(svg[0], byClass("rect", "band")); len(bands) != 3 {
		t.Fatalf("bands = %d, want one per milestone", len(bands))
	}
	if dues := find(svg[0], byClass("line", "due")); len(dues) != 3 {
		t.Fatalf("due ticks = %d", len(dues))
	}
	// The "today" label sits inside the chart with room for its
	// descenders (it once read "todav", its y cut at the bottom edge).
	var vw, vh float64
	fmt.Sscanf(attr(svg[0], "viewBox"), "0 0 %g %g", &vw, &vh)
	today := find(svg[0], byClass("text", "today"))
	if len(today) != 1 || text(today[0]) != "today" || attrFloat(t, today[0], "y")+4 > vh {
		t.Fatalf("today label %v in a chart %g high", today, vh)
	}
	for _, r := range rows {
		v := find(r, byClass("td", "verdict"))
		if len(v) != 1 || !strings.Contains("on track|at risk|late", text(v[0])) {
			t.Fatalf("verdict of %q", text(r))
		}
	}
}

func TestMilestoneCone(t *testing.T) {
	t.Parallel()
	d, _, _ := newTestDashboard(t)
	code, doc, _ := get(t, d.Handler(), "/ceo/demo/milestones/1")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	cone := find(doc, byClass("svg", "cone"))
	if len(cone) != 1 {
		t.Fatal("no cone")
	}
	if len(find(cone[0], byClass("path", "s-curve"))) != 1 || len(find(cone[0], byClass("path", "cone-area"))) != 1 {
		t.Fatal("cone lacks its curve or its shaded area")
	}
	var qs []string
	for _, g := range find(cone[0], byClass("g", "quantile")) {
		qs = append(qs, attr(g, "data-q"))
	}
	if strings.Join(qs, ",") != "p10,p50,p80" {
		t.Fatalf("quantiles marked = %v", qs)
	}
	due := find(cone[0], byClass("g", "due"))
	if len(due) != 1 || !strings.HasPrefix(text(due[0]), "hard due ") || !strings.HasSuffix(text(due[0]), " on time") {
		t.Fatalf("due marker = %v", due)
	}
	if strings.Contains(text(doc), "(from the forecast's quantiles)") || strings.Contains(text(doc), "(fitted to") {
		t.Fatal("the curve should come from the snapshot's trials")
	}
	if len(find(doc, byClass("svg", "weeks"))) != 1 {
		t.Fatal("no weekly histogram beside the S-curve")
	}
	issues := find(doc, func(n *html.Node) bool { return n.Data == "tr" && attr(n, "data-number") != "" })
	if len(issues) == 0 {
		t.Fatal("milestone page lists no open issue")
	}
	if code, _, _ := get(t, d.Handler(), "/ceo/demo/milestones/99"); code != http.StatusNotFound {
		t.Fatalf("unknown milestone: %d", code)
	}
}

func TestCalibrationLedgerStandup(t *testing.T) {
	t.Parallel()
	d, pool, p := newTestDashboard(t)
	_, doc, _ := get(t, d.Handler(), "/ceo/demo/calibration")
	if s := find(doc, byClass("div", "summary")); len(s) != 1 || !strings.Contains(text(s[0]), "samples fitted") {
		t.Fatal("calibration summary missing")
	}
	if len(find(doc, byID("people"))) != 1 || len(find(doc, byID("labels"))) != 1 || len(find(doc, byID("backtest"))) != 1 {
		t.Fatal("calibration tables missing")
	}
	for _, page := range []string{"directives", "standup"} {
		code, doc, _ := get(t, d.Handler(), "/ceo/demo/"+page)
		none := find(doc, byID("none"))
		if code != http.StatusOK || len(none) != 1 || !strings.HasPrefix(text(none[0]), "None yet") {
			t.Fatalf("%s: %d, want 'None yet'", page, code)
		}
	}
	_ = pool
	_ = p
}

func TestWithoutSnapshotAndUnknownProject(t *testing.T) {
	t.Parallel()
	d, _, _ := newTestDashboard(t)
	code, doc, _ := get(t, d.Handler(), "/ceo/empty/runway")
	if code != http.StatusOK || len(find(doc, byID("empty"))) != 1 {
		t.Fatalf("project without snapshot: %d", code)
	}
	if code, _, _ := get(t, d.Handler(), "/nobody/here/"); code != http.StatusNotFound {
		t.Fatalf("unknown project: %d", code)
	}
	if code, doc, _ := get(t, d.Handler(), "/"); code != http.StatusOK || len(find(doc, func(n *html.Node) bool { return n.Data == "li" })) != 2 {
		t.Fatalf("index: %d", code)
	}
}

// BenchmarkPages renders each page from a cached snapshot: what a page load
// costs once the snapshot is decoded (the target is well under 100 ms).
func BenchmarkPages(b *testing.B) {
	d, _, _ := newTestDashboard(b)
	h := d.Handler()
	for _, page := range []string{"", "runway", "milestones/1", "calibration", "directives", "standup"} {
		b.Run("/"+page, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ceo/demo/"+page, nil))
				if rec.Code != http.StatusOK {
					b.Fatal(rec.Code)
				}
			}
		})
	}
}

// putSnapshotWith stores a new snapshot of p: its latest with change
// applied, under inputs hash hash.
func putSnapshotWith(t *testing.T, pool *store.Pool, p store.Project, hash string, change func(*worker.SnapshotData)) {
	t.Helper()
	ctx := context.Background()
	s, err := store.LatestSnapshot(ctx, pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var data worker.SnapshotData
	if err := json.Unmarshal(s.Data, &data); err != nil {
		t.Fatal(err)
	}
	change(&data)
	raw, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.PutSnapshot(ctx, pool, store.Snapshot{ProjectID: p.ID, InputsHash: hash, Data: raw}); err != nil {
		t.Fatal(err)
	}
}

// TestCalibrationBacktest shows a snapshot's backtest as coverage against
// the throughput baseline.
func TestCalibrationBacktest(t *testing.T) {
	t.Parallel()
	d, pool, p := newTestDashboard(t)
	putSnapshotWith(t, pool, p, "backtest", func(data *worker.SnapshotData) {
		data.Backtest = &worker.BacktestSummary{Current: true, BacktestResult: scheduler.BacktestResult{
			BacktestScore: scheduler.BacktestScore{Cutoffs: 12, Items: 340, P50Coverage: 0.52, P80Coverage: 0.79, P90Coverage: 0.88, MedianRelWidth: 1.4, PinballLoss: 3.2},
			Baseline:      scheduler.BacktestScore{Cutoffs: 12, Items: 340, P50Coverage: 0.31, P80Coverage: 0.55, P90Coverage: 0.63, MedianRelWidth: 2.1, PinballLoss: 6.8},
		}}
	})
	_, doc, _ := get(t, d.Handler(), "/ceo/demo/calibration")
	tb := find(doc, byID("backtest"))
	if len(tb) != 1 || tb[0].Data != "table" {
		t.Fatal("no backtest table")
	}
	rows := find(tb[0], func(n *html.Node) bool { return n.Data == "tr" })
	var cells []string
	for _, td := range find(rows[2], func(n *html.Node) bool { return n.Data == "td" }) {
		cells = append(cells, text(td))
	}
	if len(rows) != 6 || strings.Join(cells, "|") != "finished by p80|80%|79%|55%" {
		t.Fatalf("backtest rows = %d, p80 row %q", len(rows), cells)
	}
	words := find(doc, byID("backtest-words"))
	if len(words) != 1 || !strings.Contains(text(words[0]), "CommiTea is the better forecast on single issues") || !strings.Contains(text(words[0]), "only 55% of the work") {
		t.Fatalf("the backtest is not said in words: %v", words)
	}
}

// TestCalibrationLiveBacktest: a backtest that replayed the live model
// shows its coverage, the milestones' track record and the people-less
// replay's line for comparison.
func TestCalibrationLiveBacktest(t *testing.T) {
	t.Parallel()
	d, pool, p := newTestDashboard(t)
	putSnapshotWith(t, pool, p, "live-backtest", func(data *worker.SnapshotData) {
		day := func(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }
		data.Backtest = &worker.BacktestSummary{Current: true, BacktestResult: scheduler.BacktestResult{
			BacktestScore: scheduler.BacktestScore{Cutoffs: 9, Items: 185, P80Coverage: 0.93, PinballLoss: 13.0},
			Baseline:      scheduler.BacktestScore{Cutoffs: 9, Items: 185, P80Coverage: 0.45, PinballLoss: 4.3},
		}, Live: &scheduler.LiveBacktest{
			Items: scheduler.BacktestResult{
				BacktestScore: scheduler.BacktestScore{Cutoffs: 20, Items: 419, P50Coverage: 0.53, P80Coverage: 0.8, P90Coverage: 0.88, PinballLoss: 1.2},
				Baseline:      scheduler.BacktestScore{Cutoffs: 20, Items: 419, P50Coverage: 0.62, P80Coverage: 0.72, P90Coverage: 0.77, PinballLoss: 2.0},
			},
			Milestones: scheduler.BacktestResult{
				BacktestScore: scheduler.BacktestScore{Cutoffs: 18, Items: 31, P80Coverage: 0.87, PinballLoss: 2.5},
				Baseline:      scheduler.BacktestScore{Cutoffs: 18, Items: 31, P80Coverage: 0.48, PinballLoss: 7.9},
			},
			Record: []scheduler.MilestoneRecord{
				{ID: 6, Title: "v0.2", ForecastAt: day(1), Open: 12, P80: day(20), Completed: day(18), P80Kept: true},
				{ID: 5, Title: "v0.1", ForecastAt: day(2), Open: 9, P80: day(10), Completed: day(12)},
			},
			P80Kept: 1,
		}}
	})
	_, doc, _ := get(t, d.Handler(), "/ceo/demo/calibration")
	row := func(id string, k int) string {
		tb := find(doc, byID(id))
		if len(tb) != 1 {
			t.Fatalf("no #%s", id)
		}
		rows := find(tb[0], func(n *html.Node) bool { return n.Data == "tr" })
		var cells []string
		for _, td := range find(rows[k], func(n *html.Node) bool { return n.Data == "td" }) {
			cells = append(cells, text(td))
		}
		return strings.Join(cells, "|")
	}
	if got := row("backtest", 2); got != "finished by p80|80%|80%|72%" {
		t.Errorf("live p80 row %q", got)
	}
	if got := row("backtest-milestones", 2); got != "finished by p80|80%|87%|48%" {
		t.Errorf("milestone p80 row %q", got)
	}
	if got := row("milestone-record", 2); got != "v0.1|2026-03-02|9|2026-03-10|2026-03-12|no" {
		t.Errorf("record row %q", got)
	}
	if tr := find(doc, byID("track-record")); len(tr) != 1 || !strings.Contains(text(tr[0]), "p80 came true on 1 of the last 2 milestones") {
		t.Error("no track record sentence")
	}
	if pl := find(doc, byID("backtest-peopleless")); len(pl) != 1 || !strings.Contains(text(pl[0]), "pinball loss 13.0 days (baseline 4.3)") {
		t.Error("no people-less line")
	}
}
