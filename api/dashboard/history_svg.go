package dashboard

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/commitea/commitea/store"
)

// historySVG draws a milestone's forecast over its life, the chart of
// Jira's version report: above, the p50 and p80 finish dates each forecast
// gave (one step per point, held until the next) against the due date of
// the time and the diagonal of the day the forecast was made (no finish
// can come before it); below, the open and the done issues, the
// milestone's scope. Points replayed from the history before CommiTea
// watched are drawn dashed, left of a line where the live ones begin.
func historySVG(points []store.MilestonePoint, now time.Time) string {
	// A milestone's life starts when it first holds work: the cut-offs
	// replayed before that have nothing to draw.
	for len(points) > 0 && points[0].Open+points[0].Done == 0 {
		points = points[1:]
	}
	if len(points) == 0 {
		return ""
	}
	end := now
	if last := points[len(points)-1].At; last.After(end) {
		end = last
	}
	start := points[0].At
	if !end.After(start) {
		end = start.Add(24 * time.Hour)
	}
	const width, left, right, top, mid, gap, bottom = 960.0, 70.0, 20.0, 30.0, 250.0, 36.0, 110.0
	xs := timeScale{from: start, to: end.Add(end.Sub(start) / 40), x0: left, x1: width - right}
	// The finish dates' axis spans every p50, p80 and due date shown.
	var lo, hi time.Time
	for _, p := range points {
		for _, t := range []time.Time{p.P50, p.P80, p.Due} {
			if t.IsZero() {
				continue
			}
			if lo.IsZero() || t.Before(lo) {
				lo = t
			}
			if t.After(hi) {
				hi = t
			}
		}
	}
	if lo.IsZero() {
		lo, hi = start, end
	}
	pad := max(hi.Sub(lo)/20, 24*time.Hour)
	ys := timeScale{from: lo.Add(-pad), to: hi.Add(pad), x0: mid, x1: top}
	most := 1
	for _, p := range points {
		most = max(most, p.Open+p.Done)
	}
	// The scope axis runs to a round count, labelled every countStep
	// (1, 2, 5, 10, 20, 50, ... issues: two or three labels).
	countStep := 1
	for k := 0; most > 2*countStep; k++ {
		countStep = []int{2, 5, 10}[k%3] * pow10(k/3)
	}
	most = (most + countStep - 1) / countStep * countStep
	scopeTop := mid + gap
	scopeBase := scopeTop + bottom
	yScope := func(n float64) float64 { return scopeBase - n/float64(most)*bottom }
	height := scopeBase + 30

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="history" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="100%%" role="img" aria-label="The milestone's forecast and scope over time" data-points="%d">`, width, height, len(points))
	// Axes: finish dates on the left of the upper panel, issues of the
	// lower one, forecast dates along the bottom.
	yticks := ys.ticks()
	// At most about eight labels up the side.
	every := (len(yticks) + 7) / 8
	label := "2 Jan"
	if ys.to.Sub(ys.from) > 300*24*time.Hour {
		label = "Jan 2006" // the dates span years
	}
	for k, t := range yticks {
		if k%max(every, 1) != 0 {
			continue
		}
		y := ys.x(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eeeeee"/><text x="%.1f" y="%.1f" font-size="11" text-anchor="end" fill="#757575">%s</text>`,
			left, y, width-right, y, left-6, y+4, t.Format(label))
	}
	for n := 0; n <= most; n += countStep {
		y := yScope(float64(n))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eeeeee"/><text x="%.1f" y="%.1f" font-size="11" text-anchor="end" fill="#757575">%d</text>`,
			left, y, width-right, y, left-6, y+4, n)
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" fill="#757575">finish date forecast</text>`, left, top-14)
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" fill="#757575">issues: open above done</text>`, left, scopeTop-8)
	for _, t := range xs.ticks() {
		x := xs.x(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#f5f5f5"/><text x="%.1f" y="%.1f" font-size="11" text-anchor="middle" fill="#757575">%s</text>`,
			x, top, x, scopeBase, x, scopeBase+16, t.Format("2 Jan"))
	}
	// The day each forecast was made: a forecast cannot finish before it.
	if from, to := later(start, ys.from), earlier(end, ys.to); from.Before(to) {
		fmt.Fprintf(&b, `<line class="made" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#9e9e9e" stroke-dasharray="2,3"/>`,
			xs.x(from), ys.x(from), xs.x(to), ys.x(to))
	}

	// Each point's values hold until the next point (the last until now).
	until := func(i int) time.Time {
		if i+1 < len(points) {
			return points[i+1].At
		}
		return end
	}
	replayed := func(i int) bool { return points[i].Source == store.HistoryReplay }
	steps := func(class, colour string, width float64, value func(store.MilestonePoint) (float64, bool)) {
		for _, live := range []bool{false, true} {
			var d strings.Builder
			pen := false
			for i, p := range points {
				v, ok := value(p)
				if replayed(i) == live || !ok {
					pen = false
					continue
				}
				x0, x1 := xs.x(p.At), xs.x(until(i))
				if pen {
					fmt.Fprintf(&d, " L%.1f,%.1f", x0, v)
				} else {
					fmt.Fprintf(&d, " M%.1f,%.1f", x0, v)
				}
				fmt.Fprintf(&d, " L%.1f,%.1f", x1, v)
				pen = true
			}
			if d.Len() == 0 {
				continue
			}
			dash, source := "", "live"
			if !live {
				dash, source = ` stroke-dasharray="5,3"`, "replay"
			}
			fmt.Fprintf(&b, `<path class="%s" data-source="%s" d="%s" fill="none" stroke="%s" stroke-width="%.1f"%s/>`, class, source, strings.TrimSpace(d.String()), colour, width, dash)
		}
	}
	date := func(pick func(store.MilestonePoint) time.Time) func(store.MilestonePoint) (float64, bool) {
		return func(p store.MilestonePoint) (float64, bool) {
			t := pick(p)
			return ys.x(t), !t.IsZero()
		}
	}
	steps("due", "#b71c1c", 2, date(func(p store.MilestonePoint) time.Time { return p.Due }))
	steps("p80", "#6d4c41", 2.5, date(func(p store.MilestonePoint) time.Time { return p.P80 }))
	steps("p50", "#1565c0", 2.5, date(func(p store.MilestonePoint) time.Time { return p.P50 }))

	// The latest forecast, which a step of an hour would hide at the edge.
	if last := points[len(points)-1]; !last.P50.IsZero() {
		x := xs.x(last.At)
		// p80 labelled above its dot, p50 below: they may sit close.
		for _, q := range []struct {
			name, colour string
			t            time.Time
			dy           float64
		}{{"p50", "#1565c0", last.P50, 15}, {"p80", "#6d4c41", last.P80, -7}} {
			y := ys.x(q.t)
			fmt.Fprintf(&b, `<g class="latest" data-q="%s"><circle cx="%.1f" cy="%.1f" r="4" fill="%s"/><text x="%.1f" y="%.1f" font-size="11" font-weight="600" fill="%s" stroke="#fff" stroke-width="3" paint-order="stroke" text-anchor="end">now: %s %s</text></g>`,
				q.name, x, y, q.colour, x-7, y+q.dy, q.colour, q.name, q.t.Format("2 Jan 2006"))
		}
	}
	// Scope: done from the base, open stacked on it.
	for i, p := range points {
		x0, x1 := xs.x(p.At), xs.x(until(i))
		w := math.Max(x1-x0, 0.5)
		op := "0.9"
		if replayed(i) {
			op = "0.5"
		}
		fmt.Fprintf(&b, `<rect class="done" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#81c784" opacity="%s"/>`, x0, yScope(float64(p.Done)), w, scopeBase-yScope(float64(p.Done)), op)
		fmt.Fprintf(&b, `<rect class="open" data-open="%d" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#a1887f" opacity="%s"/>`, p.Open, x0, yScope(float64(p.Open+p.Done)), w, yScope(float64(p.Done))-yScope(float64(p.Open+p.Done)), op)
	}
	// Where the live points begin, when replayed ones come before.
	for i := 1; i < len(points); i++ {
		if replayed(i-1) && !replayed(i) {
			x := xs.x(points[i].At)
			fmt.Fprintf(&b, `<line class="watching" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#616161" stroke-dasharray="3,3"/>`, x, top, x, scopeBase)
			if x < width-right-120 {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" fill="#616161" text-anchor="end">replayed ←</text><text x="%.1f" y="%.1f" font-size="11" fill="#616161">→ live from %s</text>`,
					x-4, scopeTop-8, x+4, scopeTop-8, points[i].At.Format("2 Jan"))
			} else {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" fill="#616161" text-anchor="end">← replayed | live from %s</text>`, x-4, scopeTop-8, points[i].At.Format("2 Jan"))
			}
			break
		}
	}
	// Legend, beside the panel's title: the latest forecast is labelled
	// at the right edge.
	lx := left + 150
	for k, l := range []struct{ name, colour string }{{"p50", "#1565c0"}, {"p80", "#6d4c41"}, {"due date", "#b71c1c"}} {
		x := lx + float64(k)*80
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2.5"/><text x="%.1f" y="%.1f" font-size="11" fill="#424242">%s</text>`,
			x, top-18, x+18, top-18, l.colour, x+22, top-14, l.name)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func pow10(k int) int {
	n := 1
	for range k {
		n *= 10
	}
	return n
}
