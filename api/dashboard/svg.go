package dashboard

import (
	"fmt"
	"html"
	"math"
	"strings"
	"time"

	"github.com/commitea/commitea/scheduler"
)

// The charts are inline SVG written here from numbers and escaped text, so
// the pages need no script and print as they look.

var verdictColour = map[string]string{"ok": "#2e7d32", "risk": "#f9a825", "late": "#c62828", "none": "#607d8b"}

// timeScale maps times onto [x0, x1] pixels.
type timeScale struct {
	from, to time.Time
	x0, x1   float64
}

func (s timeScale) x(t time.Time) float64 {
	span := s.to.Sub(s.from).Seconds()
	if span <= 0 {
		return s.x0
	}
	f := t.Sub(s.from).Seconds() / span
	return s.x0 + math.Max(0, math.Min(1, f))*(s.x1-s.x0)
}

// ticks returns dates to label on the axis: weeks for short spans, months
// for long ones.
func (s timeScale) ticks() []time.Time {
	var out []time.Time
	days := s.to.Sub(s.from).Hours() / 24
	t := time.Date(s.from.Year(), s.from.Month(), s.from.Day(), 0, 0, 0, 0, time.UTC)
	if days > 120 {
		t = time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC)
		for ; t.Before(s.to); t = t.AddDate(0, 1, 0) {
			out = append(out, t)
		}
		return out
	}
	step := 7
	if days > 60 {
		step = 14
	}
	for t.Weekday() != time.Monday {
		t = t.AddDate(0, 0, 1)
	}
	for ; t.Before(s.to); t = t.AddDate(0, 0, step) {
		out = append(out, t)
	}
	return out
}

func span(now time.Time, ts ...time.Time) timeScale {
	from, to := now, now
	for _, t := range ts {
		if t.IsZero() {
			continue
		}
		if t.Before(from) {
			from = t
		}
		if t.After(to) {
			to = t
		}
	}
	pad := max(to.Sub(from)/12, 24*time.Hour)
	return timeScale{from: from.Add(-pad / 3), to: to.Add(pad)}
}

func esc(s string) string { return html.EscapeString(s) }

// runwaySVG draws every milestone as a row: p10–p50 as a thin line, the
// p50–p80 band coloured by verdict, and the due date as a tick (red and
// labelled "hard" for a hard deadline).
func runwaySVG(rows []runwayRow, now time.Time) string {
	var ts []time.Time
	for _, r := range rows {
		ts = append(ts, r.P10, r.P80, r.Due)
	}
	sc := span(now, ts...)
	const width, left, rowH, top = 960.0, 230.0, 46.0, 34.0
	sc.x0, sc.x1 = left, width-20
	height := top + rowH*float64(len(rows)) + 10
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="runway" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="100%%" role="img" aria-label="Runway: each milestone's p50 to p80 band against its due date">`, width, height)
	for _, t := range sc.ticks() {
		x := sc.x(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e0e0e0"/>`, x, top-8, x, height-6)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle" fill="#757575">%s</text>`, x, top-14, t.Format("2 Jan"))
	}
	xn := sc.x(now)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#1565c0" stroke-dasharray="2,3"/><text x="%.1f" y="%.1f" font-size="11" fill="#1565c0" text-anchor="middle">today</text>`, xn, top-8, xn, height-6, xn, height)
	for k, r := range rows {
		y := top + rowH*float64(k) + rowH/2
		colour := verdictColour[r.Verdict]
		label := r.Title
		if r.Hard {
			label += " ⚑"
		}
		fmt.Fprintf(&b, `<g class="milestone" data-id="%d" data-verdict="%s">`, r.ID, r.Verdict)
		fmt.Fprintf(&b, `<text x="8" y="%.1f" font-size="13" font-weight="600" fill="#212121">%s</text>`, y-3, esc(label))
		fmt.Fprintf(&b, `<text x="8" y="%.1f" font-size="11" fill="#616161">%d open · P(on time) %d%%</text>`, y+12, r.Open, int(r.PDue*100+0.5))
		if r.Open > 0 && !r.P50.IsZero() {
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2" opacity="0.5"/>`, sc.x(r.P10), y, sc.x(r.P50), y, colour)
			x50, x80 := sc.x(r.P50), sc.x(r.P80)
			fmt.Fprintf(&b, `<rect class="band" x="%.1f" y="%.1f" width="%.1f" height="16" rx="3" fill="%s" opacity="0.85"><title>p50 %s – p80 %s</title></rect>`,
				x50, y-8, math.Max(x80-x50, 2), colour, r.P50.Format("2 Jan"), r.P80.Format("2 Jan"))
		}
		if !r.Due.IsZero() {
			xd := sc.x(r.Due)
			stroke, w := "#212121", 2.0
			if r.Hard {
				stroke, w = "#b71c1c", 3
			}
			fmt.Fprintf(&b, `<line class="due" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%.0f"/>`, xd, y-15, xd, y+15, stroke, w)
			due := "due " + r.Due.Format("2 Jan")
			if r.Hard {
				due = "hard " + due
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="10" fill="%s" text-anchor="middle">%s</text>`, xd, y+25, stroke, due)
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// completion returns P(milestone done by t). With Quantiles (evenly spaced
// probabilities) it interpolates them; otherwise it is a split normal
// through (p10, 0.1), (p50, 0.5), (p80, 0.8): one normal below p50 and
// another above, each fitted to its side's quantile, so the curve passes
// through the three published points exactly.
func completion(m scheduler.MilestoneForecast, quantiles []time.Time) (func(time.Time) float64, string) {
	if len(quantiles) >= 3 {
		n := len(quantiles)
		return func(t time.Time) float64 {
			if t.Before(quantiles[0]) {
				return 0
			}
			for i := 1; i < n; i++ {
				if t.Before(quantiles[i]) {
					a, b := quantiles[i-1], quantiles[i]
					f := t.Sub(a).Seconds() / math.Max(b.Sub(a).Seconds(), 1)
					return (float64(i-1) + f) / float64(n-1)
				}
			}
			return 1
		}, "quantiles"
	}
	const z10, z80 = 1.2815515655446004, 0.8416212335729143
	lo := math.Max(m.P50.Sub(m.P10).Seconds()/z10, 3600)
	hi := math.Max(m.P80.Sub(m.P50).Seconds()/z80, 3600)
	return func(t time.Time) float64 {
		d := t.Sub(m.P50).Seconds()
		s := hi
		if d < 0 {
			s = lo
		}
		return 0.5 * (1 + math.Erf(d/s/math.Sqrt2))
	}, "three points"
}

// coneSVG draws the probability that the milestone is complete by each
// date: the S-curve, the p10–p80 cone shaded, the three quantiles and the
// due date marked.
func coneSVG(m scheduler.MilestoneForecast, now time.Time) (string, string) {
	if m.Open == 0 || m.P50.IsZero() {
		return "", ""
	}
	qs := milestoneQuantiles(m)
	p, curve := completion(m, qs)
	// The chart spans today to the 95th percentile (or the due date): the
	// far tail of a few slow trials would squeeze the part that matters.
	edge := m.P80.Add(m.P80.Sub(m.P50))
	if len(qs) == scheduler.MilestoneQuantiles {
		edge = qs[19]
	}
	sc := span(now, m.P10, m.P80, m.Due, edge)
	const width, height, left, right, top, bottom = 960.0, 380.0, 60.0, 20.0, 30.0, 50.0
	sc.x0, sc.x1 = left, width-right
	y := func(f float64) float64 { return top + (1-f)*(height-top-bottom) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="cone" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="100%%" role="img" aria-label="Probability that %s is complete by each date">`, width, height, esc(m.Title))
	for _, f := range []float64{0, 0.25, 0.5, 0.75, 1} {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eeeeee"/><text x="%.1f" y="%.1f" font-size="11" text-anchor="end" fill="#757575">%d%%</text>`,
			left, y(f), width-right, y(f), left-6, y(f)+4, int(f*100))
	}
	for _, t := range sc.ticks() {
		x := sc.x(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#f5f5f5"/><text x="%.1f" y="%.1f" font-size="11" text-anchor="middle" fill="#757575">%s</text>`,
			x, top, x, y(0), x, y(0)+16, t.Format("2 Jan"))
	}
	// The cone: the area under the curve between p10 and p80.
	const steps = 160
	var cone strings.Builder
	x10, x80 := sc.x(m.P10), sc.x(m.P80)
	fmt.Fprintf(&cone, "M%.1f,%.1f", x10, y(0))
	var path strings.Builder
	for i := 0; i <= steps; i++ {
		t := sc.from.Add(time.Duration(float64(sc.to.Sub(sc.from)) * float64(i) / steps))
		x, v := sc.x(t), y(p(t))
		if i == 0 {
			fmt.Fprintf(&path, "M%.1f,%.1f", x, v)
		} else {
			fmt.Fprintf(&path, " L%.1f,%.1f", x, v)
		}
		if x >= x10 && x <= x80 {
			fmt.Fprintf(&cone, " L%.1f,%.1f", x, v)
		}
	}
	fmt.Fprintf(&cone, " L%.1f,%.1f L%.1f,%.1f Z", x80, y(p(m.P80)), x80, y(0))
	colour := verdictColour[verdict(m)]
	fmt.Fprintf(&b, `<path class="cone-area" d="%s" fill="%s" opacity="0.18"/>`, cone.String(), colour)
	fmt.Fprintf(&b, `<path class="s-curve" d="%s" fill="none" stroke="%s" stroke-width="3"/>`, path.String(), colour)
	for _, q := range []struct {
		name string
		t    time.Time
		f    float64
	}{{"p10", m.P10, 0.1}, {"p50", m.P50, 0.5}, {"p80", m.P80, 0.8}} {
		x := sc.x(q.t)
		fmt.Fprintf(&b, `<g class="quantile" data-q="%s"><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#424242" stroke-dasharray="4,3"/><circle cx="%.1f" cy="%.1f" r="4.5" fill="#212121"/><text x="%.1f" y="%.1f" font-size="12" fill="#212121">%s %s</text></g>`,
			q.name, x, y(q.f), x, y(0), x, y(q.f), x+6, y(q.f)-6, q.name, q.t.Format("2 Jan"))
	}
	if !m.Due.IsZero() {
		x := sc.x(m.Due)
		label := fmt.Sprintf("due %s · P(on time) %d%%", m.Due.Format("2 Jan"), int(m.PDue*100+0.5))
		stroke := "#212121"
		if m.Hard {
			stroke, label = "#b71c1c", "hard "+label
		}
		anchor := "start"
		if x > width*0.7 {
			anchor = "end"
		}
		fmt.Fprintf(&b, `<g class="due"><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2.5"/><text x="%.1f" y="%.1f" font-size="12" font-weight="600" fill="%s" text-anchor="%s">%s</text></g>`,
			x, top-6, x, y(0), stroke, x+4*map[bool]float64{true: 1, false: -1}[anchor == "start"], top+8, stroke, anchor, esc(label))
	}
	xn := sc.x(now)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#1565c0" stroke-dasharray="2,3"/><text x="%.1f" y="%.1f" font-size="11" fill="#1565c0" text-anchor="middle">today</text>`,
		xn, top, xn, y(0), xn, y(0)+32)
	b.WriteString(`</svg>`)
	return b.String(), curve
}

// milestoneQuantiles is the forecast's compact CDF when the snapshot has it.
func milestoneQuantiles(m scheduler.MilestoneForecast) []time.Time {
	if m.Quantiles[0].IsZero() {
		return nil
	}
	return m.Quantiles[:]
}
