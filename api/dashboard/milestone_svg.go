package dashboard

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/commitea/commitea/scheduler"
)

// A milestone's page draws its finish-date distribution twice, on one time
// axis: the S-curve (the share of trials done by each date) and the
// weekly histogram of the trials' finish dates beside it. Both come from
// the same trials as the headline chance: the histogram's weeks end at the
// due date (scheduler.MilestoneFinish), so the S-curve is drawn through
// each week's cumulative count and its height at the due date is exactly
// the share of trials on time, the headline. Between the week ends the
// curve follows the forecast's 21 quantiles, held between the counts of
// the weeks around them, and it runs to the last trial (quantile 100%):
// nothing is cut and nothing is drawn past it.

// curvePoint is one point of a milestone's completion curve: the share of
// trials done by t.
type curvePoint struct {
	t time.Time
	p float64
}

// Curve sources, as the page's caption names them.
const (
	curveTrials    = "trials"
	curveQuantiles = "quantiles"
	curveThree     = "three points"
)

// finishCurve is the milestone's completion curve as points to join with
// straight lines, and what it was made from: the trials' weekly counts and
// quantiles, the quantiles alone (a snapshot from before the weekly
// counts), or a split normal through p10, p50 and p80 (older still).
func finishCurve(m scheduler.MilestoneForecast, fin *scheduler.MilestoneFinish) ([]curvePoint, string) {
	var qs []curvePoint
	if !m.Quantiles[0].IsZero() {
		for i, t := range m.Quantiles {
			qs = append(qs, curvePoint{t, float64(i) / float64(len(m.Quantiles)-1)})
		}
	}
	if fin != nil && fin.Trials > 0 && len(fin.Weeks) > 0 {
		edges := make([]curvePoint, 0, len(fin.Weeks)+1)
		edges = append(edges, curvePoint{fin.From, 0})
		done := 0
		for k, n := range fin.Weeks {
			done += n
			edges = append(edges, curvePoint{fin.From.Add(time.Duration(k+1) * scheduler.Week), float64(done) / float64(fin.Trials)})
		}
		out := slices.Clone(edges)
		for _, q := range qs {
			// The week q falls in: its ends' counts are exact, the
			// quantile (nearest rank, to the minute) is held between them.
			j, found := slices.BinarySearchFunc(edges, q.t, func(e curvePoint, t time.Time) int { return e.t.Compare(t) })
			if found || j == 0 || j == len(edges) {
				continue
			}
			q.p = min(max(q.p, edges[j-1].p), edges[j].p)
			out = append(out, q)
		}
		slices.SortStableFunc(out, func(a, b curvePoint) int { return a.t.Compare(b.t) })
		// End at the last trial: the week's end after it adds nothing.
		if last := slices.IndexFunc(out, func(c curvePoint) bool { return c.p >= 1 }); last >= 0 {
			out = out[:last+1]
		}
		return out, curveTrials
	}
	if len(qs) > 0 {
		return qs, curveQuantiles
	}
	if m.P50.IsZero() {
		return nil, ""
	}
	// One normal below p50 and another above, each fitted to its side's
	// quantile, so the curve passes through the three published points.
	const z10, z80 = 1.2815515655446004, 0.8416212335729143
	lo := math.Max(m.P50.Sub(m.P10).Seconds()/z10, 3600)
	hi := math.Max(m.P80.Sub(m.P50).Seconds()/z80, 3600)
	from, to := m.P50.Add(-time.Duration(3*lo)*time.Second), m.P50.Add(time.Duration(3*hi)*time.Second)
	var out []curvePoint
	const steps = 120
	for i := 0; i <= steps; i++ {
		t := from.Add(time.Duration(float64(to.Sub(from)) * float64(i) / steps))
		d := t.Sub(m.P50).Seconds()
		s := hi
		if d < 0 {
			s = lo
		}
		out = append(out, curvePoint{t, 0.5 * (1 + math.Erf(d/s/math.Sqrt2))})
	}
	return out, curveThree
}

// curveAt is the curve's height at t, joining its points with straight
// lines as the chart draws them.
func curveAt(pts []curvePoint, t time.Time) float64 {
	if len(pts) == 0 {
		return 0
	}
	if !t.After(pts[0].t) {
		if t.Equal(pts[0].t) {
			return pts[0].p
		}
		return 0
	}
	for i := 1; i < len(pts); i++ {
		if !t.After(pts[i].t) {
			a, b := pts[i-1], pts[i]
			span := b.t.Sub(a.t).Seconds()
			if span <= 0 {
				return b.p
			}
			return a.p + (b.p-a.p)*t.Sub(a.t).Seconds()/span
		}
	}
	return pts[len(pts)-1].p
}

// finishOf is the milestone's weekly finish counts in the snapshot, nil
// in one from before them.
func finishOf(f scheduler.Forecast, id int64) *scheduler.MilestoneFinish {
	for i := range f.Finish {
		if f.Finish[i].ID == id {
			return &f.Finish[i]
		}
	}
	return nil
}

// onTimeShare is the share of trials finishing by the due date, exact when
// the snapshot holds the counts (PDue is rounded to two decimals, which
// would read 99.6% as certain).
func onTimeShare(m scheduler.MilestoneForecast, fin *scheduler.MilestoneFinish) float64 {
	if fin != nil && fin.Trials > 0 {
		return float64(fin.OnTime) / float64(fin.Trials)
	}
	return m.PDue
}

// milestoneCharts are the S-curve and the weekly histogram of one milestone.
type milestoneCharts struct {
	Cone, Weeks string
	Curve       string // what the curve was made from
	// AtDue is the curve's height at the due date, the headline chance.
	AtDue float64
}

// The two charts' frame: side by side on the page, one time axis.
const (
	chartW, chartH                             = 640.0, 360.0
	chartLeft, chartRight, chartTop, chartBase = 46.0, 16.0, 34.0, 50.0
)

func drawMilestone(m scheduler.MilestoneForecast, fin *scheduler.MilestoneFinish, now time.Time) milestoneCharts {
	if m.Open == 0 || m.P50.IsZero() {
		return milestoneCharts{}
	}
	pts, curve := finishCurve(m, fin)
	if len(pts) == 0 {
		return milestoneCharts{}
	}
	ts := []time.Time{pts[0].t, pts[len(pts)-1].t, m.Due}
	if fin != nil && len(fin.Weeks) > 0 {
		ts = append(ts, fin.From, fin.From.Add(time.Duration(len(fin.Weeks))*scheduler.Week))
	}
	sc := span(now, ts...)
	sc.x0, sc.x1 = chartLeft, chartW-chartRight
	out := milestoneCharts{Curve: curve, AtDue: onTimeShare(m, fin)}
	if !m.Due.IsZero() && curve != curveTrials {
		out.AtDue = curveAt(pts, m.Due)
	}
	out.Cone = coneSVG(m, pts, sc, now, out.AtDue)
	if fin != nil && len(fin.Weeks) > 0 {
		out.Weeks = weeksSVG(m, fin, sc, now)
	}
	return out
}

func chartY(f float64) float64 { return chartTop + (1-f)*(chartH-chartTop-chartBase) }

// timeAxis draws the date ticks under a chart and the dotted line of today.
func timeAxis(b *strings.Builder, sc timeScale, now time.Time) {
	for _, t := range sc.ticks() {
		x := sc.x(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#f5f5f5"/><text x="%.1f" y="%.1f" font-size="11" text-anchor="middle" fill="#757575">%s</text>`,
			x, chartTop, x, chartY(0), x, chartY(0)+16, t.Format("2 Jan"))
	}
	xn := sc.x(now)
	fmt.Fprintf(b, `<line class="today" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#1565c0" stroke-dasharray="2,3"/><text x="%.1f" y="%.1f" font-size="11" fill="#1565c0" text-anchor="start">today</text>`,
		xn, chartTop, xn, chartY(0), xn+3, chartY(0)+32)
}

// dueLine marks the due date across a chart with label at its top.
func dueLine(b *strings.Builder, m scheduler.MilestoneForecast, sc timeScale, label string, p float64) {
	if m.Due.IsZero() {
		return
	}
	x := sc.x(m.Due)
	stroke := "#212121"
	if m.Hard {
		stroke, label = "#b71c1c", "hard "+label
	}
	anchor, dx := "start", 4.0
	if x > chartW*0.6 {
		anchor, dx = "end", -4
	}
	fmt.Fprintf(b, `<g class="due" data-p="%.4f"><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2.5"/><text x="%.1f" y="%.1f" font-size="12" font-weight="600" fill="%s" text-anchor="%s">%s</text></g>`,
		p, x, chartTop-8, x, chartY(0), stroke, x+dx, chartTop-14, stroke, anchor, esc(label))
}

// coneSVG draws the probability that the milestone is complete by each
// date: the S-curve to the last trial, the p10–p80 cone shaded, the three
// quantiles and the due date marked at the curve's height there.
func coneSVG(m scheduler.MilestoneForecast, pts []curvePoint, sc timeScale, now time.Time, atDue float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="cone" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="100%%" role="img" aria-label="Probability that %s is complete by each date" data-y0="%.1f" data-y1="%.1f">`,
		chartW, chartH, esc(m.Title), chartY(0), chartY(1))
	for _, f := range []float64{0, 0.25, 0.5, 0.75, 1} {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eeeeee"/><text x="%.1f" y="%.1f" font-size="11" text-anchor="end" fill="#757575">%d%%</text>`,
			chartLeft, chartY(f), chartW-chartRight, chartY(f), chartLeft-6, chartY(f)+4, int(f*100))
	}
	timeAxis(&b, sc, now)
	var path, cone strings.Builder
	for i, c := range pts {
		cmd := " L"
		if i == 0 {
			cmd = "M"
		}
		fmt.Fprintf(&path, "%s%.2f,%.2f", cmd, sc.x(c.t), chartY(c.p))
	}
	x10, x80 := sc.x(m.P10), sc.x(m.P80)
	fmt.Fprintf(&cone, "M%.2f,%.2f L%.2f,%.2f", x10, chartY(0), x10, chartY(curveAt(pts, m.P10)))
	for _, c := range pts {
		if c.t.After(m.P10) && c.t.Before(m.P80) {
			fmt.Fprintf(&cone, " L%.2f,%.2f", sc.x(c.t), chartY(c.p))
		}
	}
	fmt.Fprintf(&cone, " L%.2f,%.2f L%.2f,%.2f Z", x80, chartY(curveAt(pts, m.P80)), x80, chartY(0))
	colour := verdictColour[verdict(m)]
	fmt.Fprintf(&b, `<path class="cone-area" d="%s" fill="%s" opacity="0.18"/>`, cone.String(), colour)
	fmt.Fprintf(&b, `<path class="s-curve" d="%s" fill="none" stroke="%s" stroke-width="3"><title>last trial done %s</title></path>`, path.String(), colour, pts[len(pts)-1].t.Format("2 Jan 2006"))
	for _, q := range []struct {
		name string
		t    time.Time
	}{{"p10", m.P10}, {"p50", m.P50}, {"p80", m.P80}} {
		x, y := sc.x(q.t), chartY(curveAt(pts, q.t))
		fmt.Fprintf(&b, `<g class="quantile" data-q="%s"><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#424242" stroke-dasharray="4,3"/><circle cx="%.1f" cy="%.1f" r="4" fill="#212121"/><text x="%.1f" y="%.1f" font-size="11" fill="#212121">%s %s</text></g>`,
			q.name, x, y, x, chartY(0), x, y, x+6, y+4, q.name, q.t.Format("2 Jan"))
	}
	dueLine(&b, m, sc, fmt.Sprintf("due %s · %s on time", m.Due.Format("2 Jan"), chance(atDue)), atDue)
	if !m.Due.IsZero() {
		fmt.Fprintf(&b, `<circle class="at-due" cx="%.1f" cy="%.1f" r="5" fill="none" stroke="#212121" stroke-width="2"/>`, sc.x(m.Due), chartY(atDue))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// weeksSVG draws the weekly histogram of the trials' finish dates on the
// S-curve's time axis: the weeks ending on or before the due date in the
// verdict's colour, the later ones grey.
func weeksSVG(m scheduler.MilestoneForecast, fin *scheduler.MilestoneFinish, sc timeScale, now time.Time) string {
	most := slices.Max(fin.Weeks)
	top := math.Max(float64(most)/float64(fin.Trials), 0.01)
	// Round steps for the axis (1, 2, 5, 10, 20 or 25%), four or fewer.
	step := 0.25
	for _, s := range []float64{0.01, 0.02, 0.05, 0.1, 0.2} {
		if top <= 4*s {
			step = s
			break
		}
	}
	lines := int(math.Ceil(top/step - 1e-9))
	top = float64(lines) * step
	y := func(share float64) float64 { return chartY(share / top) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="weeks" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="100%%" role="img" aria-label="Trials of %s finishing in each week">`,
		chartW, chartH, esc(m.Title))
	for k := 0; k <= lines; k++ {
		share := step * float64(k)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eeeeee"/><text x="%.1f" y="%.1f" font-size="11" text-anchor="end" fill="#757575">%s</text>`,
			chartLeft, y(share), chartW-chartRight, y(share), chartLeft-6, y(share)+4, shareText(share))
	}
	timeAxis(&b, sc, now)
	colour := verdictColour[verdict(m)]
	if m.Due.IsZero() {
		colour = verdictColour["none"]
	}
	for k, n := range fin.Weeks {
		from, to := fin.From.Add(time.Duration(k)*scheduler.Week), fin.From.Add(time.Duration(k+1)*scheduler.Week)
		fill := colour
		onTime := !m.Due.IsZero() && !to.After(m.Due)
		if !m.Due.IsZero() && !onTime {
			fill = "#b0bec5"
		}
		x0, x1 := sc.x(from), sc.x(to)
		share := float64(n) / float64(fin.Trials)
		fmt.Fprintf(&b, `<rect class="week" data-trials="%d" data-on-time="%t" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>week to %s: %d of %d trials finish (%s)</title></rect>`,
			n, onTime, x0+0.5, y(share), math.Max(x1-x0-1, 1), chartY(0)-y(share), fill, to.Format("Mon 2 Jan"), n, fin.Trials, shareText(share))
	}
	if !m.Due.IsZero() {
		dueLine(&b, m, sc, fmt.Sprintf("due %s · %d of %d trials before", m.Due.Format("2 Jan"), fin.OnTime, fin.Trials), onTimeShare(m, fin))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// shareText writes a share of trials for an axis or a bar: whole percent,
// one decimal under 10%.
func shareText(f float64) string {
	if f > 0 && f < 0.1 {
		return fmt.Sprintf("%.1f%%", f*100)
	}
	return fmt.Sprintf("%.0f%%", f*100)
}
