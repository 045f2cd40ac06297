package dashboard

import (
	"context"
	"encoding/json"
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
	Number    int64
	Title     string
	Assignee  string
	Estimate  string
	Priority  int
	Milestone string
	Flags     []flag
	// Keys are the card's flags as the design names them (boardFlags),
	// for the board's flag filter.
	Keys     []string
	P50, P80 time.Time
	Critical float64
	// Age is started, open work's age in calendar days since it first
	// started (the flow figures' work item age), 0 for other work.
	Age int
}

// flag is a badge on a card; Kind picks its colour.
type flag struct{ Kind, Text string }

// boardFlags are the flags the board filters by (?flag=), in the
// design's order, with what the filter link says.
var boardFlags = []struct{ Key, Name string }{
	{"blocked", "blocked"}, {"stale", "stale"}, {"missing_estimate", "unestimated"},
	{"unschedulable", "unschedulable"}, {"aging", "aging"},
}

// flagFilter is one of boardFlags with the number of open cards carrying
// it.
type flagFilter struct {
	Key, Name string
	Count     int
}

type column struct {
	State scheduler.State
	Name  string
	Cards []card
}

type boardData struct {
	Columns []column
	Counts  map[string]int
	// Filters are the flag filters; Flag the one applied ("" for none),
	// FlagError why the asked one was not.
	Filters   []flagFilter
	Flag      string
	FlagError string
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
		c := card{Number: r.Number, Title: r.Title, Estimate: string(size), Priority: prio}
		if len(r.Assignees) > 0 {
			c.Assignee = r.Assignees[0]
		}
		if r.Milestone != nil {
			c.Milestone = titles[*r.Milestone]
		}
		st, ok := status[r.Number]
		if !ok {
			c.Flags = append(c.Flags, flag{"info", "new since the last forecast"})
		}
		if st.Blocked {
			by := make([]string, 0, len(st.BlockedBy))
			for _, n := range st.BlockedBy {
				by = append(by, "#"+strconv.FormatInt(n, 10))
			}
			c.Flags = append(c.Flags, flag{"bad", "blocked by " + strings.Join(by, ", ")})
			c.Keys = append(c.Keys, "blocked")
		}
		if st.Stale {
			c.Flags = append(c.Flags, flag{"warn", "stale"})
			c.Keys = append(c.Keys, "stale")
		}
		if st.MissingEstimate {
			c.Flags = append(c.Flags, flag{"warn", "no estimate"})
			c.Keys = append(c.Keys, "missing_estimate")
		}
		if st.Unschedulable != "" {
			c.Flags = append(c.Flags, flag{"bad", "unschedulable: " + st.Unschedulable})
			c.Keys = append(c.Keys, "unschedulable")
		}
		if a, ok := ages[r.Number]; ok && st.State != scheduler.Done {
			c.Age = a.Days
		}
		if st.Aging {
			c.Flags = append(c.Flags, flag{"aging", fmt.Sprintf("aging: past the %d%% SLE of %d days", sle.Percentile, sle.Days)})
			c.Keys = append(c.Keys, "aging")
		}
		if st.Discarded {
			c.Flags = append(c.Flags, flag{"info", "discarded"})
		}
		if hard {
			c.Flags = append(c.Flags, flag{"hard", "deadline/hard"})
		}
		if f, ok := fc[r.Number]; ok {
			c.P50, c.P80, c.Critical = f.P50, f.P80, f.CriticalFreq
			if c.Assignee == "" && f.Assignee != "" && f.Unassigned {
				c.Flags = append(c.Flags, flag{"info", "likely " + f.Assignee})
			}
		}
		out = append(out, c)
	}
	return out, status, rows, nil
}

func (d *Dashboard) board(ctx context.Context, p store.Project, s *snapshot, r *http.Request) (string, any, error) {
	all, status, _, err := d.cards(ctx, p, s)
	if err != nil {
		return "", nil, err
	}
	// The flag filter: the counts are of every open card, the columns
	// hold only the cards with the asked flag.
	data := boardData{Flag: r.URL.Query().Get("flag")}
	known := data.Flag == ""
	for _, f := range boardFlags {
		ff := flagFilter{Key: f.Key, Name: f.Name}
		for _, c := range all {
			if slices.Contains(c.Keys, f.Key) && status[c.Number].State != scheduler.Done {
				ff.Count++
			}
		}
		data.Filters = append(data.Filters, ff)
		known = known || f.Key == data.Flag
	}
	cards := all
	if !known {
		data.FlagError = fmt.Sprintf("%q is not a flag the board filters by; showing every card.", data.Flag)
		data.Flag = ""
	} else if data.Flag != "" {
		cards = nil
		for _, c := range all {
			if slices.Contains(c.Keys, data.Flag) {
				cards = append(cards, c)
			}
		}
	}
	cols := make([]column, len(columnNames))
	idx := map[scheduler.State]int{}
	for k, c := range columnNames {
		cols[k] = column{State: c.state, Name: c.name}
		idx[c.state] = k
	}
	counts := map[string]int{}
	for _, c := range cards {
		st := status[c.Number].State
		if st == "" {
			st = scheduler.Diagnosis
		}
		cols[idx[st]].Cards = append(cols[idx[st]].Cards, c)
		for _, f := range c.Flags {
			counts[f.Kind]++
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
	data.Columns, data.Counts = cols, counts
	return "Board", data, nil
}

// runwayRow is one milestone on the runway.
type runwayRow struct {
	scheduler.MilestoneForecast
	Verdict string // ok, risk, late, none
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
		rows = append(rows, runwayRow{MilestoneForecast: m, Verdict: verdict(m)})
	}
	return "Runway", runwayData{Rows: rows, SVG: runwaySVG(rows, s.Forecast.Now)}, nil
}

type milestoneData struct {
	M       runwayRow
	SVG     string
	Cards   []card
	Done    int
	Curve   string // "quantiles" or "three points"
	Blocked int
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
	svg, curve := coneSVG(m, s.Forecast.Now)
	data.SVG, data.Curve = svg, curve
	return m.Title, data, nil
}

type calibrationData struct {
	scheduler.Calibration
	Samples  int
	Backtest *worker.BacktestSummary
	// Coverage rows compare the calibrated forecast with the throughput
	// baseline on the same cut-offs.
	Coverage []coverageRow
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
		f, base := b.BacktestScore, b.Baseline
		data.Coverage = []coverageRow{
			{"finished by p50", "50%", pct(f.P50Coverage), pct(base.P50Coverage)},
			{"finished by p80", "80%", pct(f.P80Coverage), pct(base.P80Coverage)},
			{"finished by p90", "90%", pct(f.P90Coverage), pct(base.P90Coverage)},
			{"median width (p90 − p10) / p50", "narrower is sharper", fmt.Sprintf("%.2f", f.MedianRelWidth), fmt.Sprintf("%.2f", base.MedianRelWidth)},
			{"pinball loss, days", "lower is better", fmt.Sprintf("%.1f", f.PinballLoss), fmt.Sprintf("%.1f", base.PinballLoss)},
		}
	}
	return "Calibration", data, nil
}

type kv struct{ Key, Value string }

// record is one ledger or standup row, with its fields in a fixed order.
type record struct {
	Fields []kv
	Text   string
}

type recordsData struct {
	Exists  bool
	Records []record
}

func recordFields(r store.Record, keys []string) []kv {
	var out []kv
	for _, k := range keys {
		v, ok := r[k]
		if !ok || v == nil {
			continue
		}
		var s string
		switch x := v.(type) {
		case string:
			s = x
		default:
			b, _ := json.Marshal(x)
			s = string(b)
		}
		if s == "" || s == "{}" || s == "[]" {
			continue
		}
		out = append(out, kv{k, s})
	}
	return out
}

func (d *Dashboard) directives(ctx context.Context, p store.Project, _ *snapshot, _ *http.Request) (string, any, error) {
	recs, exists, err := store.LatestRecords(ctx, d.cfg.Pool, "directives", "created_at DESC, id DESC", p.ID, 100)
	if err != nil {
		return "", nil, err
	}
	data := recordsData{Exists: exists}
	for _, r := range recs {
		data.Records = append(data.Records, record{Fields: recordFields(r, []string{"created_at", "kind", "quote", "target", "params", "summary", "status", "caller", "applied_at"})})
	}
	return "Directives", data, nil
}

func (d *Dashboard) standup(ctx context.Context, p store.Project, _ *snapshot, _ *http.Request) (string, any, error) {
	recs, exists, err := store.LatestRecords(ctx, d.cfg.Pool, "standups", "day DESC, id DESC", p.ID, 1)
	if err != nil {
		return "", nil, err
	}
	data := recordsData{Exists: exists}
	for _, r := range recs {
		text, _ := r["text"].(string)
		keys := []string{"day", "created_at", "snapshot_version"}
		if text == "" {
			keys = append(keys, "content")
		}
		data.Records = append(data.Records, record{Fields: recordFields(r, keys), Text: text})
	}
	return "Latest standup", data, nil
}
