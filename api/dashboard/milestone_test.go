package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker"
)

// pathPoints reads an SVG path of M/L commands.
func pathPoints(t *testing.T, d string) [][2]float64 {
	t.Helper()
	var out [][2]float64
	for _, part := range strings.Fields(strings.NewReplacer("M", " ", "L", " ").Replace(d)) {
		var x, y float64
		if _, err := fmt.Sscanf(part, "%g,%g", &x, &y); err != nil {
			t.Fatalf("path %q: %v", part, err)
		}
		out = append(out, [2]float64{x, y})
	}
	return out
}

func attrFloat(t *testing.T, n *html.Node, key string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(attr(n, key), 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", key, attr(n, key), err)
	}
	return f
}

// TestMilestoneHeadlineIsCurveAtDue: on every milestone page the headline
// chance is the S-curve's height where the due line crosses it, read off
// the drawn path; the histogram's bars before the due line hold the
// trials on time, and all of them hold every trial; the curve ends at 100%
// at the last trial, inside the chart.
func TestMilestoneHeadlineIsCurveAtDue(t *testing.T) {
	t.Parallel()
	d, _, p := newTestDashboard(t)
	s, err := d.snapshot(context.Background(), p.ID)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, m := range s.data.Forecast.Milestones {
		if m.Open == 0 || m.Due.IsZero() {
			continue
		}
		code, doc, _ := get(t, d.Handler(), fmt.Sprintf("/ceo/demo/milestones/%d", m.ID))
		if code != http.StatusOK {
			t.Fatalf("milestone %d: %d", m.ID, code)
		}
		cone := find(doc, byClass("svg", "cone"))[0]
		y0, y1 := attrFloat(t, cone, "data-y0"), attrFloat(t, cone, "data-y1")
		pts := pathPoints(t, attr(find(cone, byClass("path", "s-curve"))[0], "d"))
		line := find(find(cone, byClass("g", "due"))[0], func(n *html.Node) bool { return n.Data == "line" })[0]
		xd := attrFloat(t, line, "x1")
		height := 0.0
		switch {
		case xd <= pts[0][0]:
			height = (y0 - pts[0][1]) / (y0 - y1)
		case xd >= pts[len(pts)-1][0]:
			height = 1
		default:
			for i := 1; i < len(pts); i++ {
				if xd <= pts[i][0] {
					a, b := pts[i-1], pts[i]
					yy := a[1] + (b[1]-a[1])*(xd-a[0])/max(b[0]-a[0], 1e-9)
					height = (y0 - yy) / (y0 - y1)
					break
				}
			}
		}
		headline := text(find(doc, func(n *html.Node) bool { return attr(n, "data-figure") == "chance" })[0])
		fin := finishOf(s.data.Forecast, m.ID)
		exact := float64(fin.OnTime) / float64(fin.Trials)
		// The path is written to two decimals of a pixel on a 276 px axis.
		if diff := height - exact; diff > 0.002 || diff < -0.002 || headline != chance(exact) {
			t.Errorf("milestone %d: headline %q, curve at the due date %.4f, trials on time %d of %d", m.ID, headline, height, fin.OnTime, fin.Trials)
		}
		if m.PDue != scheduler.RoundPDue(exact) {
			t.Errorf("milestone %d: pDue %v, trials on time %v", m.ID, m.PDue, exact)
		}
		last := pts[len(pts)-1]
		if last[1] != y1 || last[0] > chartW-chartRight+0.01 {
			t.Errorf("milestone %d: the curve ends at %v, want 100%% inside the chart", m.ID, last)
		}
		onTime, all := 0, 0
		for _, r := range find(doc, byClass("rect", "week")) {
			n, _ := strconv.Atoi(attr(r, "data-trials"))
			all += n
			if attr(r, "data-on-time") == "true" {
				onTime += n
			}
		}
		if onTime != fin.OnTime || all != fin.Trials {
			t.Errorf("milestone %d: histogram holds %d on time of %d, trials %d of %d", m.ID, onTime, all, fin.OnTime, fin.Trials)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no milestone with a due date and open work")
	}
}

// TestChanceWords: a chance short of certain never reads as 100% or 0%.
func TestChanceWords(t *testing.T) {
	for p, want := range map[float64]string{1: "100%", 0.9961: ">99%", 0.96: "96%", 0.004: "<1%", 0: "0%"} {
		if got := chance(p); got != want {
			t.Errorf("chance(%v) = %q, want %q", p, got, want)
		}
	}
}

// TestFinishCurveThroughWeeks: the curve passes through every week's
// cumulative count, so its height at a due date that ends a week is the
// count on time, whatever the quantiles say between the weeks.
func TestFinishCurveThroughWeeks(t *testing.T) {
	due := time.Date(2027, 4, 30, 0, 0, 0, 0, time.UTC)
	fin := &scheduler.MilestoneFinish{ID: 1, Trials: 100, OnTime: 96, From: due.Add(-3 * scheduler.Week), Weeks: []int{10, 40, 46, 3, 1}}
	m := scheduler.MilestoneForecast{ID: 1, Open: 3, Due: due, P10: fin.From.Add(5 * 24 * time.Hour), P50: due.Add(-7 * 24 * time.Hour), P80: due.Add(-2 * 24 * time.Hour)}
	for i := range m.Quantiles {
		// Deliberately off: quantiles that put the due date at 90%.
		m.Quantiles[i] = fin.From.Add(time.Duration(float64(5*scheduler.Week) * float64(i) / 20))
	}
	pts, src := finishCurve(m, fin)
	if src != curveTrials {
		t.Fatalf("source %q", src)
	}
	if got := curveAt(pts, due); got != 0.96 {
		t.Errorf("height at the due date %v, want 0.96", got)
	}
	for i := 1; i < len(pts); i++ {
		if pts[i].p < pts[i-1].p || pts[i].t.Before(pts[i-1].t) {
			t.Fatalf("curve not monotone at %d: %v", i, pts)
		}
	}
	if last := pts[len(pts)-1]; last.p != 1 || !last.t.Equal(m.Quantiles[20]) {
		t.Errorf("curve ends at %v, want 100%% at the last trial %v", last, m.Quantiles[20])
	}
}

// TestMilestoneHistory: every recompute leaves each milestone's published
// forecast in the history, one point an hour (the latest of the hour);
// replayed points come before the first live one only; the page charts
// them all, dashed where replayed.
func TestMilestoneHistory(t *testing.T) {
	t.Parallel()
	d, pool, p := newTestDashboard(t)
	ctx := context.Background()
	log := d.cfg.Log
	recompute := func(at time.Time) {
		t.Helper()
		f := &worker.Forecaster{Pool: pool, Log: log, Trials: 300, StaleWorkingDays: 3, Now: func() time.Time { return at }}
		if err := f.Recompute(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
	}
	replay := []store.MilestonePoint{
		{MilestoneID: 1, At: testNow.AddDate(0, 0, -30), Open: 9, Done: 1, Due: testNow.AddDate(0, 1, 0), P10: testNow, P50: testNow.AddDate(0, 0, 3), P80: testNow.AddDate(0, 0, 9), PDue: 0.9},
		{MilestoneID: 1, At: testNow.AddDate(0, 0, -20), Open: 8, Done: 3, Due: testNow.AddDate(0, 1, 0), P10: testNow, P50: testNow.AddDate(0, 0, 5), P80: testNow.AddDate(0, 0, 12), PDue: 0.8},
		// After the first live point: the live ones tell that part.
		{MilestoneID: 1, At: testNow.Add(5 * time.Hour), Open: 1, Done: 1},
	}
	if err := store.ReplaceReplayedForecasts(ctx, pool, p.ID, replay); err != nil {
		t.Fatal(err)
	}
	recompute(testNow.Add(2 * time.Hour))
	recompute(testNow.Add(2*time.Hour + 10*time.Minute)) // same hour: replaces
	s, err := d.snapshot(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range s.data.Forecast.Milestones {
		h, err := store.MilestoneHistory(ctx, pool, p.ID, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		var live []store.MilestonePoint
		replayed := 0
		for _, pt := range h {
			if pt.Source == store.HistoryLive {
				live = append(live, pt)
			} else {
				replayed++
			}
		}
		if len(live) != 2 || !live[0].At.Equal(testNow.Truncate(time.Hour)) || !live[1].At.Equal(testNow.Add(2*time.Hour).Truncate(time.Hour)) {
			t.Fatalf("milestone %d: live points %+v, want one at each recompute's hour", m.ID, live)
		}
		last := live[1]
		fin := finishOf(s.data.Forecast, m.ID)
		if last.Version != s.version || last.Open != m.Open || !last.P50.Equal(m.P50) || !last.P80.Equal(m.P80) || !last.Due.Equal(m.Due) ||
			(!m.Due.IsZero() && last.PDue != float64(fin.OnTime)/float64(fin.Trials)) {
			t.Errorf("milestone %d: last point %+v, published forecast %+v (version %d)", m.ID, last, m, s.version)
		}
		if want := map[int64]int{1: 2}[m.ID]; replayed != want {
			t.Errorf("milestone %d: %d replayed points shown, want %d (only those before the first live one)", m.ID, replayed, want)
		}
	}
	_, doc, _ := get(t, d.Handler(), "/ceo/demo/milestones/1")
	svg := find(doc, byClass("svg", "history"))
	if len(svg) != 1 || attr(svg[0], "data-points") != "4" {
		t.Fatalf("history chart %v, want 4 points", svg)
	}
	sources := map[string]bool{}
	for _, path := range find(svg[0], byClass("path", "p50")) {
		sources[attr(path, "data-source")] = true
	}
	if !sources["live"] || !sources["replay"] || len(find(svg[0], byClass("rect", "open"))) != 4 || len(find(svg[0], byClass("line", "watching"))) != 1 {
		t.Errorf("history chart draws p50 from %v, %d scope bars", sources, len(find(svg[0], byClass("rect", "open"))))
	}
}
