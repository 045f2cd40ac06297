package dashboard

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/commitea/commitea/scheduler"
)

// The flow page's charts. Each runs over local dates (YYYY-MM-DD, the
// project's calendar days) across and counts or days up, drawn like the
// other charts from numbers and escaped text only.

// dayFrame is a chart area with one slot per local date.
type dayFrame struct {
	width, height, left, right, top, bottom float64
	days                                    []string
	ymax                                    float64
}

func newDayFrame(days []string, ymax float64) dayFrame {
	return dayFrame{width: 960, height: 300, left: 50, right: 90, top: 20, bottom: 40, days: days, ymax: niceMax(ymax)}
}

// x is the centre of slot i.
func (f dayFrame) x(i float64) float64 {
	n := math.Max(float64(len(f.days)), 1)
	return f.left + (i+0.5)/n*(f.width-f.left-f.right)
}

func (f dayFrame) slot() float64 {
	return (f.width - f.left - f.right) / math.Max(float64(len(f.days)), 1)
}

func (f dayFrame) y(v float64) float64 {
	return f.top + (1-v/f.ymax)*(f.height-f.top-f.bottom)
}

// open starts the svg with its grid: horizontal lines at round values, and
// a date label at the first day of each month or, for short spans, at
// every Monday.
func (f dayFrame) open(b *strings.Builder, class, label, unit string) {
	fmt.Fprintf(b, `<svg class="%s" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="100%%" role="img" aria-label="%s">`, class, f.width, f.height, esc(label))
	step := niceStep(f.ymax)
	for v := 0.0; v <= f.ymax+1e-9; v += step {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eeeeee"/><text x="%.1f" y="%.1f" font-size="11" text-anchor="end" fill="#757575">%s</text>`,
			f.left, f.y(v), f.width-f.right, f.y(v), f.left-6, f.y(v)+4, trimFloat(v))
	}
	if unit != "" {
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="11" fill="#757575">%s</text>`, 4.0, f.top-6, esc(unit))
	}
	monthly := len(f.days) > 120
	for i, d := range f.days {
		t, err := time.Parse(time.DateOnly, d)
		if err != nil {
			continue
		}
		if (monthly && t.Day() == 1) || (!monthly && t.Weekday() == time.Monday) {
			x := f.x(float64(i)) - f.slot()/2
			fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#f5f5f5"/><text x="%.1f" y="%.1f" font-size="11" text-anchor="middle" fill="#757575">%s</text>`,
				x, f.top, x, f.y(0), x, f.y(0)+16, t.Format("2 Jan"))
		}
	}
}

// legend writes coloured keys in a row under the chart.
func (f dayFrame) legend(b *strings.Builder, keys [][2]string) {
	x := f.left
	for _, k := range keys {
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="12" height="12" fill="%s"/><text x="%.1f" y="%.1f" font-size="12" fill="#424242">%s</text>`,
			x, f.height-14, k[1], x+16, f.height-4, esc(k[0]))
		x += 26 + 7*float64(len(k[0]))
	}
}

// niceMax rounds a chart's top up to a round number (at least 1).
func niceMax(v float64) float64 {
	if v <= 1 {
		return 1
	}
	step := niceStep(v * 1.05)
	return math.Ceil(v*1.05/step) * step
}

// niceStep is a round grid step giving four to eight lines up to v.
func niceStep(v float64) float64 {
	if v <= 0 {
		return 1
	}
	raw := v / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*mag {
			return math.Max(m*mag, 1)
		}
	}
	return 10 * mag
}

func trimFloat(v float64) string { return fmt.Sprintf("%g", math.Round(v*100)/100) }

// dates lists the local dates from one to another, inclusive.
func dates(from, to string) []string {
	a, err1 := time.Parse(time.DateOnly, from)
	b, err2 := time.Parse(time.DateOnly, to)
	if err1 != nil || err2 != nil {
		return nil
	}
	var out []string
	for t := a; !t.After(b); t = t.AddDate(0, 0, 1) {
		out = append(out, t.Format(time.DateOnly))
	}
	return out
}

func indexOf(days []string) map[string]int {
	out := make(map[string]int, len(days))
	for i, d := range days {
		out[d] = i
	}
	return out
}

// percentileColour shades the bands between cycle-time percentiles, from
// usual to late.
var percentileColour = map[int]string{50: "#2e7d32", 70: "#9e9d24", 85: "#ef6c00", 95: "#c62828"}

// cycleTimeSVG is the cycle-time scatterplot: one dot per issue done in the
// window, at its done date and its cycle time, with the 50th, 70th, 85th
// and 95th percentiles as lines.
func cycleTimeSVG(m scheduler.FlowMetrics) string {
	days := dates(m.From, m.To)
	at := indexOf(days)
	top := float64(m.CycleTime.Percentiles.P95)
	for _, it := range m.CycleTime.Items {
		top = math.Max(top, float64(it.Days))
	}
	f := newDayFrame(days, top)
	var b strings.Builder
	f.open(&b, "scatter", "Cycle time of each issue done in the window, by the day it was done", "days")
	for _, p := range scheduler.FlowPercentiles {
		v := m.CycleTime.Percentiles.At(p)
		if v == 0 {
			continue
		}
		y := f.y(float64(v))
		fmt.Fprintf(&b, `<g class="percentile" data-p="%d"><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="5,3"/><text x="%.1f" y="%.1f" font-size="11" fill="%s">%d%%: %s</text></g>`,
			p, f.left, y, f.width-f.right, y, percentileColour[p], f.width-f.right+4, y+4, percentileColour[p], p, dayCount(v))
	}
	for _, it := range m.CycleTime.Items {
		i, ok := at[it.DoneDay]
		if !ok {
			continue
		}
		// Issues done the same day with the same cycle time spread out in
		// their day's slot, by number, so none hides another.
		jitter := (math.Mod(float64(it.Number)*0.618034, 1) - 0.5) * 0.7 * f.slot()
		fmt.Fprintf(&b, `<circle class="dot" data-number="%d" data-days="%d" cx="%.1f" cy="%.1f" r="3.5" fill="#5d4037" opacity="0.75"><title>#%d: %s, done %s</title></circle>`,
			it.Number, it.Days, f.x(float64(i))+jitter, f.y(float64(it.Days)), it.Number, dayCount(it.Days), it.DoneDay)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// ageSVG is the aging chart: every open, started issue as a dot in its
// state's column at its age, over bands between the cycle-time
// percentiles; aging issues (older than the SLE) in red.
func ageSVG(m scheduler.FlowMetrics, rows []ageRow) string {
	pc := m.CycleTime.Percentiles
	top := float64(pc.P95)
	for _, r := range rows {
		top = math.Max(top, float64(r.Days))
	}
	const width, height, left, right, topM, bottom = 960.0, 320.0, 50.0, 90.0, 20.0, 40.0
	ymax := niceMax(top)
	y := func(v float64) float64 { return topM + (1-v/ymax)*(height-topM-bottom) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="aging" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="100%%" role="img" aria-label="Age of every issue in progress against the cycle-time percentiles">`, width, height)
	// Bands: up to p50, p50–p70, p70–p85, p85–p95, beyond.
	lo := 0.0
	for _, p := range scheduler.FlowPercentiles {
		v := float64(pc.At(p))
		if v <= lo {
			continue
		}
		fmt.Fprintf(&b, `<rect class="band" data-p="%d" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" opacity="0.10"/>`,
			p, left, y(math.Min(v, ymax)), width-left-right, y(lo)-y(math.Min(v, ymax)), percentileColour[p])
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="5,3"/><text x="%.1f" y="%.1f" font-size="11" fill="%s">%d%%: %s</text>`,
			left, y(v), width-right, y(v), percentileColour[p], width-right+4, y(v)+4, percentileColour[p], p, dayCount(int(v)))
		lo = v
	}
	step := niceStep(ymax)
	for v := 0.0; v <= ymax+1e-9; v += step {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="end" fill="#757575">%s</text>`, left-6, y(v)+4, trimFloat(v))
	}
	fmt.Fprintf(&b, `<text x="4" y="%.1f" font-size="11" fill="#757575">days</text>`, topM-6)
	if m.SLE.Days > 0 {
		v := float64(m.SLE.Days)
		fmt.Fprintf(&b, `<line class="sle" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#b71c1c" stroke-width="2"/>`, left, y(v), width-right, y(v))
	}
	cols := []scheduler.State{scheduler.Steeping, scheduler.InReview}
	colW := (width - left - right) / float64(len(cols))
	for c, st := range cols {
		x0 := left + colW*float64(c)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="12" font-weight="600" text-anchor="middle" fill="#424242">%s</text>`, x0+colW/2, height-14, stateName(st))
		var in []ageRow
		for _, r := range rows {
			if r.State == st {
				in = append(in, r)
			}
		}
		for k, r := range in {
			x := x0 + colW*(0.15+0.7*(float64(k)+0.5)/float64(len(in)))
			fill, class := "#5d4037", "item"
			if r.Aging {
				fill, class = "#c62828", "item aging"
			}
			title := fmt.Sprintf("#%d %s: %s in progress, since %s", r.Number, r.Title, dayCount(r.Days), r.StartDay)
			fmt.Fprintf(&b, `<g class="%s" data-number="%d" data-days="%d"><circle cx="%.1f" cy="%.1f" r="5" fill="%s"><title>%s</title></circle>`,
				class, r.Number, r.Days, x, y(float64(r.Days)), fill, esc(title))
			if r.Aging {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="10" fill="#b71c1c">#%d</text>`, x+7, y(float64(r.Days))+3, r.Number)
			}
			b.WriteString(`</g>`)
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// throughputSVG is the run chart of weekly throughput: a bar per Monday
// week (partial weeks pale), the median of complete weeks as a line.
func throughputSVG(t scheduler.Throughput) string {
	var days []string
	top := float64(t.Predictability.P90)
	for _, w := range t.Weeks {
		days = append(days, w.Start)
		top = math.Max(top, float64(w.Count))
	}
	f := newDayFrame(days, top)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="throughput" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="100%%" role="img" aria-label="Issues done each week">`, f.width, f.height)
	step := niceStep(f.ymax)
	for v := 0.0; v <= f.ymax+1e-9; v += step {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eeeeee"/><text x="%.1f" y="%.1f" font-size="11" text-anchor="end" fill="#757575">%s</text>`,
			f.left, f.y(v), f.width-f.right, f.y(v), f.left-6, f.y(v)+4, trimFloat(v))
	}
	fmt.Fprintf(&b, `<text x="4" y="%.1f" font-size="11" fill="#757575">done</text>`, f.top-6)
	w := f.slot() * 0.7
	for i, wk := range t.Weeks {
		x := f.x(float64(i))
		fill, note := "#6d4c41", ""
		if !wk.Complete() {
			fill, note = "#bcaaa4", fmt.Sprintf(" (%d of 7 days)", wk.Days)
		}
		label, _ := time.Parse(time.DateOnly, wk.Start)
		fmt.Fprintf(&b, `<rect class="week" data-start="%s" data-count="%d" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>week of %s: %d done%s</title></rect>`,
			wk.Start, wk.Count, x-w/2, f.y(float64(wk.Count)), w, math.Max(f.y(0)-f.y(float64(wk.Count)), 0.5), fill, wk.Start, wk.Count, note)
		if len(t.Weeks) <= 30 || i%2 == 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle" fill="#757575">%s</text>`, x, f.y(0)+16, label.Format("2 Jan"))
		}
	}
	if pr := t.Predictability; pr.Weeks > 0 {
		y := f.y(float64(pr.P50))
		fmt.Fprintf(&b, `<g class="median"><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#1565c0" stroke-dasharray="5,3"/><text x="%.1f" y="%.1f" font-size="11" fill="#1565c0">median %d</text></g>`,
			f.left, y, f.width-f.right, y, f.width-f.right+4, y+4, pr.P50)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// wipSVG is work in progress at the end of each day.
func wipSVG(wip []scheduler.DayCount) string {
	var days []string
	top := 0.0
	for _, d := range wip {
		days = append(days, d.Day)
		top = math.Max(top, float64(d.Count))
	}
	f := newDayFrame(days, top)
	var b strings.Builder
	f.open(&b, "wip", "Issues in steeping or in review at the end of each day", "in progress")
	var path strings.Builder
	for i, d := range wip {
		// A step per day: the day's count across its slot.
		x0, x1 := f.x(float64(i))-f.slot()/2, f.x(float64(i))+f.slot()/2
		cmd := "L"
		if i == 0 {
			cmd = "M"
		}
		fmt.Fprintf(&path, "%s%.1f,%.1f L%.1f,%.1f ", cmd, x0, f.y(float64(d.Count)), x1, f.y(float64(d.Count)))
	}
	if len(wip) > 0 {
		fmt.Fprintf(&b, `<path class="line" d="%s" fill="none" stroke="#ef6c00" stroke-width="2"/>`, strings.TrimSpace(path.String()))
		last := wip[len(wip)-1]
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" fill="#ef6c00">today %d</text>`, f.width-f.right+4, f.y(float64(last.Count))+4, last.Count)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// cfdStates are the cumulative flow's bands from the bottom up, with their
// colours.
var cfdStates = []struct {
	state  scheduler.State
	colour string
}{
	{scheduler.Done, "#8d6e63"}, {scheduler.InReview, "#7e57c2"}, {scheduler.Steeping, "#ef6c00"},
	{scheduler.Triage, "#42a5f5"}, {scheduler.Diagnosis, "#b0bec5"},
}

// cfdSVG is the cumulative flow diagram: the issues in each state at the
// end of each day, stacked, done at the bottom.
func cfdSVG(cfd []scheduler.CFDDay) string {
	var days []string
	top := 0.0
	for _, d := range cfd {
		days = append(days, d.Day)
		top = math.Max(top, float64(d.Diagnosis+d.Triage+d.Steeping+d.InReview+d.Done))
	}
	f := newDayFrame(days, top)
	f.height = 340
	f.bottom = 60
	var b strings.Builder
	f.open(&b, "cfd", "Cumulative flow: issues in each lifecycle state at the end of each day", "issues")
	below := make([]float64, len(cfd))
	var keys [][2]string
	for _, s := range cfdStates {
		var upper, lower []string
		for i, d := range cfd {
			v := below[i] + float64(d.Count(s.state))
			upper = append(upper, fmt.Sprintf("%.1f,%.1f", f.x(float64(i)), f.y(v)))
			lower = append(lower, fmt.Sprintf("%.1f,%.1f", f.x(float64(i)), f.y(below[i])))
			below[i] = v
		}
		if len(cfd) == 0 {
			continue
		}
		for l, r := 0, len(lower)-1; l < r; l, r = l+1, r-1 {
			lower[l], lower[r] = lower[r], lower[l]
		}
		fmt.Fprintf(&b, `<path class="band" data-state="%s" d="M%s L%s Z" fill="%s" opacity="0.85"><title>%s</title></path>`,
			s.state, strings.Join(upper, " L"), strings.Join(lower, " L"), s.colour, stateName(s.state))
		keys = append(keys, [2]string{stateName(s.state), s.colour})
	}
	f.legend(&b, keys)
	b.WriteString(`</svg>`)
	return b.String()
}

// howManySVG draws "how many by when": the issues done by each day of the
// horizon with 50%, 80% and 90% probability, the throughput-only 80% curve
// dashed, and the asked day marked.
func howManySVG(d scheduler.DoneBy, base *scheduler.DoneBy, asked *scheduler.DoneByPoint) string {
	days := dates(d.From, d.Last())
	f := newDayFrame(days, float64(d.Open))
	f.height = 320
	f.bottom = 60
	var b strings.Builder
	f.open(&b, "howmany", "Open issues done by each date, at 50%, 80% and 90% probability", "done")
	curve := func(class string, vs []int, colour, dash string, width float64) {
		var path strings.Builder
		for i, v := range vs {
			cmd := "L"
			if i == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&path, "%s%.1f,%.1f ", cmd, f.x(float64(i)), f.y(float64(v)))
		}
		if len(vs) > 0 {
			fmt.Fprintf(&b, `<path class="%s" d="%s" fill="none" stroke="%s" stroke-width="%.1f"%s/>`, class, strings.TrimSpace(path.String()), colour, width, dash)
		}
	}
	// Everything open: the ceiling no curve can pass.
	yo := f.y(float64(d.Open))
	fmt.Fprintf(&b, `<g class="open"><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#9e9e9e"/><text x="%.1f" y="%.1f" font-size="11" fill="#616161">all %d open</text></g>`,
		f.left, yo, f.width-f.right, yo, f.width-f.right+4, yo+4, d.Open)
	keys := [][2]string{{"50%", "#90a4ae"}, {"80%", "#5d4037"}, {"90%", "#2e7d32"}}
	if base != nil {
		curve("curve baseline", base.AtLeast80, "#9e9e9e", ` stroke-dasharray="6,4"`, 2)
		keys = append(keys, [2]string{"80%, throughput only", "#9e9e9e"})
	}
	curve("curve p50", d.AtLeast50, "#90a4ae", "", 2)
	curve("curve p80", d.AtLeast80, "#5d4037", "", 3)
	curve("curve p90", d.AtLeast90, "#2e7d32", "", 2)
	if asked != nil {
		if i, ok := indexOf(days)[asked.Day]; ok {
			// The label sits right of the line, or left of it near the end.
			x := f.x(float64(i))
			dx, anchor := 6.0, "start"
			if i > len(days)*2/3 {
				dx, anchor = -6, "end"
			}
			fmt.Fprintf(&b, `<g class="asked"><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#1565c0" stroke-width="1.5"/><circle cx="%.1f" cy="%.1f" r="4.5" fill="#5d4037"/><text x="%.1f" y="%.1f" font-size="12" fill="#1565c0" text-anchor="%s">%s: at least %d at 80%%</text></g>`,
				x, f.top, x, f.y(0), x, f.y(float64(asked.AtLeast80)), x+dx, f.top+12, anchor, asked.Day, asked.AtLeast80)
		}
	}
	f.legend(&b, keys)
	b.WriteString(`</svg>`)
	return b.String()
}

func stateName(s scheduler.State) string {
	switch s {
	case scheduler.InReview:
		return "in review"
	case "":
		return "—"
	}
	return string(s)
}

func dayCount(n int) string {
	if n == 1 {
		return "1 day"
	}
	return fmt.Sprintf("%d days", n)
}
