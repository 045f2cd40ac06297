package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker"
)

// doneWindow is how far back the board's done column reaches.
const doneWindow = 14 * 24 * time.Hour

// card is one issue on the board or a milestone page.
type card struct {
	Number      int64
	Title       string
	Assignee    string
	Assignees   []string
	Labels      []string
	Estimate    string
	Priority    int
	Milestone   string
	MilestoneID int64
	Flags       []flag
	P50, P80    time.Time
	Critical    float64
	// Age is started, open work's age in calendar days since it first
	// started (the flow figures' work item age), 0 for other work.
	Age int
}

// flag is a badge on a card; Kind picks its colour, Key names it in the
// board's flag filter.
type flag struct{ Kind, Text, Key string }

// Flag keys, as the board's flag filter names them.
const (
	flagBlocked       = "blocked"
	flagStale         = "stale"
	flagNoEstimate    = "no-estimate"
	flagUnschedulable = "unschedulable"
	flagAging         = "aging"
	flagDiscarded     = "discarded"
	flagHard          = "hard"
	flagNew           = "new"
	flagLikely        = "unassigned"
)

// flagFilters are the board's flag filter choices, in menu order.
var flagFilters = []struct{ Key, Name string }{
	{flagBlocked, "blocked"}, {flagStale, "stale"}, {flagNoEstimate, "no estimate"}, {flagUnschedulable, "unschedulable"},
	{flagAging, "aging (past the SLE)"},
	{flagHard, "deadline/hard"}, {flagLikely, "unassigned, likely taker"}, {flagNew, "new since the forecast"}, {flagDiscarded, "discarded"},
}

type column struct {
	State scheduler.State
	Name  string
	Cards []card
}

type boardData struct {
	Columns []column
	Counts  map[string]int
	Filter  boardFilter
	Options boardChoices
	// Shown is how many cards pass the filter, of Total.
	Shown, Total int
	Legend       []legendEntry
}

var columnNames = []struct {
	state scheduler.State
	name  string
}{
	{scheduler.Diagnosis, "Diagnosis"}, {scheduler.Triage, "Triage"}, {scheduler.Steeping, "Steeping"},
	{scheduler.InReview, "In review"}, {scheduler.Done, "Done (14 days)"},
}

func milestoneTitles(s *snapshot) map[int64]string {
	out := map[int64]string{}
	for _, m := range s.Forecast.Milestones {
		out[m.ID] = m.Title
	}
	return out
}

// cards joins the mirror's cards with the snapshot's statuses and forecast.
func (d *Dashboard) cards(ctx context.Context, p store.Project, s *snapshot) ([]card, map[int64]scheduler.IssueStatus, []store.IssueCard, error) {
	rows, err := store.IssueCards(ctx, d.cfg.Pool, p.ID, d.cfg.Now().Add(-doneWindow))
	if err != nil {
		return nil, nil, nil, err
	}
	status := make(map[int64]scheduler.IssueStatus, len(s.Statuses))
	for _, st := range s.Statuses {
		status[st.Number] = st
	}
	fc := make(map[int64]scheduler.IssueForecast, len(s.Forecast.Issues))
	for _, f := range s.Forecast.Issues {
		fc[f.Number] = f
	}
	titles := milestoneTitles(s)
	ages := map[int64]scheduler.WorkItemAge{}
	var sle scheduler.SLE
	if s.Flow != nil {
		sle = s.Flow.SLE
		for _, a := range s.Flow.Age {
			ages[a.Number] = a
		}
	}
	out := make([]card, 0, len(rows))
	for _, r := range rows {
		size, prio, hard := scheduler.ParseLabels(r.Labels)
		c := card{Number: r.Number, Title: r.Title, Estimate: string(size), Priority: prio, Labels: r.Labels, Assignees: r.Assignees}
		if len(r.Assignees) > 0 {
			c.Assignee = r.Assignees[0]
		}
		if r.Milestone != nil {
			c.Milestone, c.MilestoneID = titles[*r.Milestone], *r.Milestone
		}
		st, ok := status[r.Number]
		if !ok {
			c.Flags = append(c.Flags, flag{"info", "new since the last forecast", flagNew})
		}
		if st.Blocked {
			by := make([]string, 0, len(st.BlockedBy))
			for _, n := range st.BlockedBy {
				by = append(by, "#"+strconv.FormatInt(n, 10))
			}
			c.Flags = append(c.Flags, flag{"bad", "blocked by " + strings.Join(by, ", "), flagBlocked})
		}
		if st.Stale {
			c.Flags = append(c.Flags, flag{"warn", "stale", flagStale})
		}
		if st.MissingEstimate {
			c.Flags = append(c.Flags, flag{"warn", "no estimate", flagNoEstimate})
		}
		if st.Unschedulable != "" {
			c.Flags = append(c.Flags, flag{"bad", "unschedulable: " + st.Unschedulable, flagUnschedulable})
		}
		if a, ok := ages[r.Number]; ok && st.State != scheduler.Done {
			c.Age = a.Days
		}
		if st.Aging {
			c.Flags = append(c.Flags, flag{"aging", fmt.Sprintf("aging: past the %d%% SLE of %d days", sle.Percentile, sle.Days), flagAging})
		}
		if st.Discarded {
			c.Flags = append(c.Flags, flag{"info", "discarded", flagDiscarded})
		}
		if hard {
			c.Flags = append(c.Flags, flag{"hard", "deadline/hard", flagHard})
		}
		if f, ok := fc[r.Number]; ok {
			c.P50, c.P80, c.Critical = f.P50, f.P80, f.CriticalFreq
			if c.Assignee == "" && f.Assignee != "" && f.Unassigned {
				c.Flags = append(c.Flags, flag{"info", "likely " + f.Assignee, flagLikely})
			}
		}
		out = append(out, c)
	}
	return out, status, rows, nil
}

func (d *Dashboard) board(ctx context.Context, p store.Project, s *snapshot, r *http.Request) (string, any, error) {
	cards, status, _, err := d.cards(ctx, p, s)
	if err != nil {
		return "", nil, err
	}
	f := boardFilterOf(r)
	data := boardData{Filter: f, Counts: map[string]int{}, Total: len(cards)}
	data.Options = boardOptions(s, cards)
	cols := make([]column, len(columnNames))
	idx := map[scheduler.State]int{}
	for k, c := range columnNames {
		cols[k] = column{State: c.state, Name: c.name}
		idx[c.state] = k
	}
	for _, c := range cards {
		if !f.matches(c) {
			continue
		}
		st := status[c.Number].State
		if st == "" {
			st = scheduler.Diagnosis
		}
		cols[idx[st]].Cards = append(cols[idx[st]].Cards, c)
		data.Shown++
		for _, fl := range c.Flags {
			data.Counts[fl.Kind]++
		}
	}
	for k := range cols {
		slices.SortStableFunc(cols[k].Cards, func(a, b card) int {
			if a.Priority != b.Priority {
				return a.Priority - b.Priority
			}
			return int(a.Number - b.Number)
		})
	}
	// Done, newest first.
	slices.Reverse(cols[idx[scheduler.Done]].Cards)
	data.Columns = cols
	data.Legend = legend
	return "Board", data, nil
}

// runwayRow is one milestone on the runway.
type runwayRow struct {
	scheduler.MilestoneForecast
	Verdict string // ok, risk, late, none
	// Chance is the share of trials on time in words, as the milestone
	// page's headline reads it.
	Chance string
}

type runwayData struct {
	Rows []runwayRow
	SVG  string
}

func verdict(m scheduler.MilestoneForecast) string {
	switch {
	case m.Due.IsZero():
		return "none"
	case m.Open == 0:
		return "ok"
	case !m.P80.After(m.Due):
		return "ok"
	case !m.P50.After(m.Due):
		return "risk"
	}
	return "late"
}

func (d *Dashboard) runway(_ context.Context, _ store.Project, s *snapshot, _ *http.Request) (string, any, error) {
	rows := make([]runwayRow, 0, len(s.Forecast.Milestones))
	for _, m := range s.Forecast.Milestones {
		row := runwayRow{MilestoneForecast: m, Verdict: verdict(m), Chance: "no due date"}
		if !m.Due.IsZero() {
			row.Chance = chance(onTimeShare(m, finishOf(s.Forecast, m.ID)))
		}
		rows = append(rows, row)
	}
	return "Runway", runwayData{Rows: rows, SVG: runwaySVG(rows, s.Forecast.Now)}, nil
}

type milestoneData struct {
	M      runwayRow
	Charts milestoneCharts
	// Chance is the headline: the S-curve's height at the due date, in
	// words (">99%" rather than a rounded 100% when some trial is late).
	Chance string
	// OnTime and Trials count the trials behind it (Trials 0 in a
	// snapshot from before the weekly counts).
	OnTime, Trials int
	Cards          []card
	Done           int
	Blocked        int
	// History is the forecast over the milestone's life (store's
	// milestone_history); Live and Replayed count its points, Watched is
	// the first live one.
	History        string
	Live, Replayed int
	Watched        time.Time
	// Rescue is set for a milestone at risk (rescue.go).
	Rescue *rescueSection
}

func (d *Dashboard) milestone(ctx context.Context, p store.Project, s *snapshot, r *http.Request) (string, any, error) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		return "", nil, fmt.Errorf("milestone %q: %w", chi.URLParam(r, "id"), errNotFound)
	}
	i := slices.IndexFunc(s.Forecast.Milestones, func(m scheduler.MilestoneForecast) bool { return m.ID == id })
	if i < 0 {
		return "", nil, fmt.Errorf("milestone %d: %w", id, errNotFound)
	}
	m := s.Forecast.Milestones[i]
	cards, status, rows, err := d.cards(ctx, p, s)
	if err != nil {
		return "", nil, err
	}
	data := milestoneData{M: runwayRow{MilestoneForecast: m, Verdict: verdict(m)}}
	for k, c := range cards {
		row := rows[k]
		if row.Milestone == nil || *row.Milestone != id {
			continue
		}
		if row.State != "open" {
			data.Done++
			continue
		}
		if status[c.Number].Blocked {
			data.Blocked++
		}
		data.Cards = append(data.Cards, c)
	}
	sort.SliceStable(data.Cards, func(a, b int) bool { return data.Cards[a].P80.After(data.Cards[b].P80) })
	fin := finishOf(s.Forecast, id)
	data.Charts = drawMilestone(m, fin, s.Forecast.Now)
	data.Chance = chance(onTimeShare(m, fin))
	if data.Charts.Cone != "" {
		data.Chance = chance(data.Charts.AtDue)
	}
	if fin != nil {
		data.OnTime, data.Trials = fin.OnTime, fin.Trials
	}
	points, err := store.MilestoneHistory(ctx, d.cfg.Pool, p.ID, id)
	if err != nil {
		return "", nil, err
	}
	data.History = historySVG(points, s.Forecast.Now)
	for _, pt := range points {
		if pt.Source == store.HistoryReplay {
			data.Replayed++
			continue
		}
		if data.Live == 0 {
			data.Watched = pt.At
		}
		data.Live++
	}
	data.Rescue = rescueFor(s, id)
	return m.Title, data, nil
}

type calibrationData struct {
	scheduler.Calibration
	Samples  int
	Backtest *worker.BacktestSummary
	// Coverage rows compare the calibrated forecast with the throughput
	// baseline on the same cut-offs.
	Coverage []coverageRow
	// Live is set when the coverage is the replay of the live model;
	// Milestones and Record then score the milestones closed since, and
	// PeopleLess is the people-less replay's line, for comparison.
	Live           bool
	Cutoffs, Items int // of the coverage shown
	Milestones     []coverageRow
	Record         []milestoneRecordRow
	Kept80         int
	PeopleLess     string
	// Words say what the coverage table means (and MilestoneWords the
	// milestones' table): each side against its target, which is better
	// and why.
	Words, MilestoneWords []string
}

type milestoneRecordRow struct {
	Title, ForecastAt, P80, Completed string
	Open                              int
	Kept                              bool
}

type coverageRow struct {
	Measure, Target, Forecast, Baseline string
}

func (d *Dashboard) calibration(_ context.Context, _ store.Project, s *snapshot, _ *http.Request) (string, any, error) {
	data := calibrationData{Calibration: s.Calibration, Samples: s.Counts.Samples, Backtest: s.Backtest}
	byMult := func(a, b scheduler.Bias) int {
		if a.Multiplier < b.Multiplier {
			return 1
		}
		if a.Multiplier > b.Multiplier {
			return -1
		}
		return strings.Compare(a.Key, b.Key)
	}
	data.ByLabelBias = slices.SortedFunc(slices.Values(data.ByLabelBias), byMult)
	data.ByPersonBias = slices.SortedFunc(slices.Values(data.ByPersonBias), byMult)
	if b := s.Backtest; b != nil {
		pct := func(f float64) string { return strconv.Itoa(int(f*100+0.5)) + "%" }
		rows := func(f, base scheduler.BacktestScore) []coverageRow {
			return []coverageRow{
				{"finished by p50", "50%", pct(f.P50Coverage), pct(base.P50Coverage)},
				{"finished by p80", "80%", pct(f.P80Coverage), pct(base.P80Coverage)},
				{"finished by p90", "90%", pct(f.P90Coverage), pct(base.P90Coverage)},
				{"median width (p90 − p10) / p50", "narrower is sharper", fmt.Sprintf("%.2f", f.MedianRelWidth), fmt.Sprintf("%.2f", base.MedianRelWidth)},
				{"pinball loss, days", "lower is better", fmt.Sprintf("%.1f", f.PinballLoss), fmt.Sprintf("%.1f", base.PinballLoss)},
			}
		}
		data.Coverage = rows(b.BacktestScore, b.Baseline)
		data.Words = backtestWords("single issues", b.BacktestScore, b.Baseline)
		data.Cutoffs, data.Items = b.Cutoffs, b.Items
		if l := b.Live; l != nil && l.Items.Items > 0 {
			data.Live = true
			data.Coverage = rows(l.Items.BacktestScore, l.Items.Baseline)
			data.Words = backtestWords("single issues", l.Items.BacktestScore, l.Items.Baseline)
			data.Cutoffs, data.Items = l.Items.Cutoffs, l.Items.Items
			if l.Milestones.Items > 0 {
				data.Milestones = rows(l.Milestones.BacktestScore, l.Milestones.Baseline)
				data.MilestoneWords = backtestWords("milestones", l.Milestones.BacktestScore, l.Milestones.Baseline)
			}
			for _, r := range l.Record {
				data.Record = append(data.Record, milestoneRecordRow{Title: r.Title, ForecastAt: r.ForecastAt.Format(time.DateOnly), Open: r.Open,
					P80: r.P80.Format(time.DateOnly), Completed: r.Completed.Format(time.DateOnly), Kept: r.P80Kept})
			}
			data.Kept80 = l.P80Kept
			data.PeopleLess = fmt.Sprintf("finished by p80 %s (baseline %s), pinball loss %.1f days (baseline %.1f) over %d issue forecasts",
				pct(b.P80Coverage), pct(b.Baseline.P80Coverage), b.PinballLoss, b.Baseline.PinballLoss, b.Items)
		}
	}
	return "Calibration", data, nil
}
