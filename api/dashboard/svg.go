package dashboard

import (
	"fmt"
	"html"
	"math"
	"strings"
	"time"
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
	// The grid ends above the bottom edge, leaving room under it for the
	// "today" label's descenders.
	base := top + rowH*float64(len(rows)) + 4
	height := base + 22
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="runway" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="100%%" role="img" aria-label="Runway: each milestone's p50 to p80 band against its due date">`, width, height)
	for _, t := range sc.ticks() {
		x := sc.x(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e0e0e0"/>`, x, top-8, x, base)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle" fill="#757575">%s</text>`, x, top-14, t.Format("2 Jan"))
	}
	xn := sc.x(now)
	fmt.Fprintf(&b, `<line class="today" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#1565c0" stroke-dasharray="2,3"/><text class="today" x="%.1f" y="%.1f" font-size="11" fill="#1565c0" text-anchor="middle">today</text>`, xn, top-8, xn, base, xn, base+14)
	for k, r := range rows {
		y := top + rowH*float64(k) + rowH/2
		colour := verdictColour[r.Verdict]
		label := r.Title
		if r.Hard {
			label += " ⚑"
		}
		fmt.Fprintf(&b, `<g class="milestone" data-id="%d" data-verdict="%s">`, r.ID, r.Verdict)
		fmt.Fprintf(&b, `<text x="8" y="%.1f" font-size="13" font-weight="600" fill="#212121">%s</text>`, y-3, esc(label))
		fmt.Fprintf(&b, `<text x="8" y="%.1f" font-size="11" fill="#616161">%d open · P(on time) %s</text>`, y+12, r.Open, esc(r.Chance))
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
