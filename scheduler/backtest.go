package scheduler

// Backtest rules (DESIGN.md section 6, "Backtest"):
//
// Cut-offs start BacktestOptions.WarmUp (default 90 days) after the first
// issue was created, once at least MinHistory (default 20) issues are
// resolved, and repeat every Every (default 14 days) until Horizon (default
// 180 days) before the newest resolution: the shared histories only hold
// issues resolved by the time they were exported, so the work open at a
// later cut-off would be only its quick part.
//
// At each cut-off the forecast sees only what was known then: issues
// created by the cut-off, their start when it had happened, and the
// resolutions before it. The work open at the cut-off (created ≤ cut-off <
// resolved) is forecast and scored against when it was actually resolved.
//
// A history has no people, so the team is modelled as k people on the
// default calendar (6 focused hours Monday to Friday, UTC), k = the
// time-weighted mean number of issues in progress (started, not yet
// resolved) over the quarter before the cut-off, at least 1. The histories
// show that a team does not work its open issues in creation order (over
// the shared histories, the median rank correlation between creation and
// resolution of the work open at a cut-off is −0.2 to −0.6: newer issues
// tend to finish first) and that much work is closed without ever being
// "in progress". So the team's hours are modelled as shared among all open
// issues, each getting min(1, k/open) of a person (processor sharing):
//
//   - calibration: a resolved issue's actual effort is its share of the
//     team's working hours from creation to resolution (SharedWorkingHours'
//     rule with k workers over the issues open at each moment), against the
//     nominal hours of its estimate; the issues resolved before the cut-off
//     are the samples (Calibrate's defaults: the last year, at most 1,000);
//   - forecast: Run with one modelled worker per open issue, each with
//     6·min(1, k/open) hours a weekday, every open issue steeping with the
//     shared hours it has had so far as SpentHours, so its effort is drawn
//     conditioned on its age: old issues are expected to take longer still.
//
// Estimates map to the nearest est/* size by nominal hours (story points at
// PriorHoursPerStoryPoint); a missing estimate is left to Run's rule (est/m
// with a wider sigma). Tracked time is not used by the backtest, since it is
// not in the shared-hours currency of the rest of the history.
//
// IssueForecast has p10/p50/p80; p90 extends the p50→p80 spread in log time
// after the cut-off: ln(d90) = ln(d50) + (z90/z80)·(ln(d80) − ln(d50)), with
// z the standard normal quantiles, i.e. the finish delay read as lognormal.
//
// Sets: at each cut-off the issues open then and created within SetWindow
// (default 28 days, a four-week milestone) before it, when there are at
// least MinSetSize (2) of them, form a milestone-shaped set, scored by the
// date the last of them was done. The calibrated forecast gives the set a
// milestone and reads its finish from the milestone's exact 21-point CDF
// (p10, p50, p80, p90 at 10%, 50%, 80%, 90%); the baseline answers how long
// until the team completes that many issues at its resampled throughput.
// BacktestResult.Sets scores them like items (Items counts sets).
//
// Conditioned on the export: a history exported at some date holds only
// what was resolved by then as outcomes (the shared Jira histories hold
// nothing else; a served project's still open issues are not scored), so
// at a cut-off every scored outcome lies within L = export − cut-off days.
// The export is taken as the history's newest resolution (the real date is
// unknown and can only be later, so this is the tightest L the data
// allows). The plain score charges a forecast with mass beyond L for
// outcomes the sample could never contain, which flatters its coverage.
// BacktestResult.Conditioned scores the same forecasts against the same
// outcomes conditioned on finishing within L: quantile p is read at
// p·F(L), F the forecast's own CDF. An issue's F is the lognormal read the
// p90 above uses (ln d piecewise linear in the normal score through p10,
// p50 and p80, extended along the nearest piece); a set's is its exact
// 21-point CDF, linear between points; the baseline's is its own trials
// within L. A forecast that gives no chance by L (or, for an issue, has
// p50 ≥ p80 or p10 > p50: no CDF to read) is scored as forecast. On a
// history cut at an export, the conditioned score gives back the full
// history's coverage where the plain one is inflated
// (TestBacktestConditionedOnTheExport).
//
// Scores, over every (cut-off, open issue) pair: coverage of pXX is the
// share of issues resolved on or before their pXX date; the relative width
// of a range is (p90 − p10) / (p50 − cut-off), reported as the median; the
// pinball loss is the mean over p50/p80/p90 of the quantile loss in days,
// max(q·(y−f), (q−1)·(y−f)), y and f in days after the cut-off.
//
// Effort in this replay is the queue-share stand-in (EffortQueueShare), so
// the spread rule (SpreadSigma) does not take a narrow sigma of it as
// earned. QueueFloor (default none) can keep the share an issue gets when
// the open queue shrinks far below its quarter's mean to what a queue of
// QueueFloor × that mean would give it; cross-validation did not choose it.
//
// Parameters are chosen by leave-one-history-out cross-validation over the
// eight shared histories (TestRealDataCV, crossval_test.go; the package doc
// has the held-out table and the choices it dropped).

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"
)

// Forecaster runs one forecast; Run is the real one.
type Forecaster func(Input, Options) (Forecast, error)

// BacktestOptions tunes Backtest. The zero value means the documented
// defaults.
type BacktestOptions struct {
	Every      time.Duration // between cut-offs; default 14 days
	WarmUp     time.Duration // first cut-off after the first creation; default 90 days
	Horizon    time.Duration // last cut-off before the newest resolution; default 180 days
	MinHistory int           // resolved issues needed before a cut-off counts; default 20
	Trials     int           // per forecast; default 1,000
	Seed       uint64        // 0: 1
	// Forecaster is the calibrated forecast; nil means Run. Cut-offs run
	// concurrently, so it must be safe for concurrent use.
	Forecaster Forecaster
	// Calibration tunes the per-cut-off fit.
	Calibration CalibrationOptions
	// SetWindow and MinSetSize shape the milestone-like sets scored at each
	// cut-off: the open issues created within SetWindow before it (default
	// 28 days), when there are at least MinSetSize (default 2) of them.
	SetWindow  time.Duration
	MinSetSize int
	// QueueFloor bounds each open issue's share of the team when the open
	// queue has shrunk: the forecast shares the team among at least
	// QueueFloor × the quarter's mean open issues (teamAt.share). Default
	// 0, no floor: cross-validation chose none (see the package doc).
	QueueFloor float64
}

func (o BacktestOptions) withDefaults() BacktestOptions {
	day := 24 * time.Hour
	if o.Every <= 0 {
		o.Every = 14 * day
	}
	if o.WarmUp <= 0 {
		o.WarmUp = 90 * day
	}
	if o.Horizon <= 0 {
		o.Horizon = 180 * day
	}
	if o.MinHistory <= 0 {
		o.MinHistory = 20
	}
	if o.Trials <= 0 {
		o.Trials = 1000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Forecaster == nil {
		o.Forecaster = defaultForecaster
	}
	if o.SetWindow <= 0 {
		o.SetWindow = 28 * day
	}
	if o.MinSetSize <= 0 {
		o.MinSetSize = 2
	}
	o.QueueFloor = max(o.QueueFloor, 0)
	return o
}

// BacktestScore is one forecaster's score over all cut-offs.
type BacktestScore struct {
	Cutoffs        int     `json:"cutoffs"`
	Items          int     `json:"items"` // scored (cut-off, issue) pairs
	P50Coverage    float64 `json:"p50Coverage"`
	P80Coverage    float64 `json:"p80Coverage"`
	P90Coverage    float64 `json:"p90Coverage"`
	MedianRelWidth float64 `json:"medianRelWidth"`
	PinballLoss    float64 `json:"pinballLoss"` // days

	hits      [3]int
	relWidths []float64
	lossSum   float64
}

// BacktestResult is the calibrated forecast's score with the throughput-only
// baseline's on the same cut-offs, for single issues and for sets.
type BacktestResult struct {
	BacktestScore
	Baseline BacktestScore `json:"baseline"`
	// Sets scores milestone-shaped sets of issues by the date the last one
	// was done; its Items counts sets. Zero when no cut-off had one.
	Sets BacktestComparison `json:"sets,omitzero"`
	// Conditioned scores the same forecasts conditioned on finishing by the
	// export (the newest resolution; see the rules at the top of this
	// file). Zero where the result was not made by Backtest.
	Conditioned BacktestConditioned `json:"conditioned,omitzero"`
}

// BacktestComparison is the calibrated forecast's and the baseline's score
// on the same outcomes.
type BacktestComparison struct {
	BacktestScore
	Baseline BacktestScore `json:"baseline"`
}

// BacktestConditioned is the score of items and sets, each forecast
// conditioned on the outcome falling by the export.
type BacktestConditioned struct {
	Items BacktestComparison `json:"items"`
	Sets  BacktestComparison `json:"sets,omitzero"`
}

// itemQuantiles is one issue's forecast at one cut-off, in days after it.
type itemQuantiles struct{ p10, p50, p80, p90 float64 }

func (s *BacktestScore) add(q itemQuantiles, actualDays float64) {
	s.Items++
	for i, p := range []float64{q.p50, q.p80, q.p90} {
		if actualDays <= p {
			s.hits[i]++
		}
	}
	if q.p50 > 0 {
		s.relWidths = append(s.relWidths, (q.p90-q.p10)/q.p50)
	}
	loss := 0.0
	for _, qp := range []struct{ q, f float64 }{{0.5, q.p50}, {0.8, q.p80}, {0.9, q.p90}} {
		d := actualDays - qp.f
		loss += math.Max(qp.q*d, (qp.q-1)*d)
	}
	s.lossSum += loss / 3
}

func (s *BacktestScore) finish() {
	if s.Items == 0 {
		return
	}
	n := float64(s.Items)
	s.P50Coverage = float64(s.hits[0]) / n
	s.P80Coverage = float64(s.hits[1]) / n
	s.P90Coverage = float64(s.hits[2]) / n
	s.MedianRelWidth = median(s.relWidths)
	s.PinballLoss = s.lossSum / n
}

func (s *BacktestScore) merge(o BacktestScore) {
	s.Cutoffs += o.Cutoffs
	s.Items += o.Items
	for i := range s.hits {
		s.hits[i] += o.hits[i]
	}
	s.relWidths = append(s.relWidths, o.relWidths...)
	s.lossSum += o.lossSum
}

// PoolBacktests pools several histories' results as if they were one: every
// scored issue counts once.
func PoolBacktests(results []BacktestResult) BacktestResult {
	var out BacktestResult
	for _, r := range results {
		out.merge(r)
	}
	out.finish()
	return out
}

func (r *BacktestResult) merge(o BacktestResult) {
	r.BacktestScore.merge(o.BacktestScore)
	r.Baseline.merge(o.Baseline)
	r.Sets.merge(o.Sets)
	r.Conditioned.Items.merge(o.Conditioned.Items)
	r.Conditioned.Sets.merge(o.Conditioned.Sets)
}

func (r *BacktestResult) finish() {
	r.BacktestScore.finish()
	r.Baseline.finish()
	r.Sets.finish()
	r.Conditioned.Items.finish()
	r.Conditioned.Sets.finish()
}

func (c *BacktestComparison) merge(o BacktestComparison) {
	c.BacktestScore.merge(o.BacktestScore)
	c.Baseline.merge(o.Baseline)
}

func (c *BacktestComparison) finish() {
	c.BacktestScore.finish()
	c.Baseline.finish()
}

// BacktestCutoffs lists the cut-off dates Backtest would use on items.
func BacktestCutoffs(items []HistoryItem, opts BacktestOptions) []time.Time {
	opts = opts.withDefaults()
	if len(items) == 0 {
		return nil
	}
	first, last := items[0].Created, time.Time{}
	var resolved []time.Time
	for _, it := range items {
		if it.Created.Before(first) {
			first = it.Created
		}
		if !it.Resolved.IsZero() {
			resolved = append(resolved, it.Resolved)
			if it.Resolved.After(last) {
				last = it.Resolved
			}
		}
	}
	slices.SortFunc(resolved, func(a, b time.Time) int { return a.Compare(b) })
	var out []time.Time
	end := last.Add(-opts.Horizon)
	for c := first.Add(opts.WarmUp); !c.After(end); c = c.Add(opts.Every) {
		n := sort.Search(len(resolved), func(i int) bool { return !resolved[i].Before(c) })
		if n < opts.MinHistory {
			continue
		}
		open := false
		for _, it := range items {
			if isOpenAt(it, c) && !it.Resolved.IsZero() {
				open = true
				break
			}
		}
		if open {
			out = append(out, c)
		}
	}
	return out
}

func isOpenAt(it HistoryItem, c time.Time) bool {
	return !it.Created.After(c) && (it.Resolved.IsZero() || it.Resolved.After(c))
}

// ErrHistoryTooShort is Backtest's answer for a history without a single
// cut-off: nothing to score yet, which callers do not treat as a failure.
var ErrHistoryTooShort = errors.New("backtest: the history is too short for any cut-off")

// Backtest replays items (see the rules at the top of this file) and scores
// the calibrated forecast and the throughput-only baseline on the same
// cut-offs.
func Backtest(items []HistoryItem, opts BacktestOptions) (BacktestResult, error) {
	opts = opts.withDefaults()
	var res BacktestResult
	cutoffs := BacktestCutoffs(items, opts)
	if len(cutoffs) == 0 {
		return res, ErrHistoryTooShort
	}
	scores, err := backtestCutoffs(items, cutoffs, opts)
	if err != nil {
		return res, err
	}
	for _, sc := range scores {
		res.merge(sc)
	}
	res.finish()
	return res, nil
}

// backtestCutoffs scores every cut-off on its own, unfinished, in cut-off
// order. Cut-offs are independent: they run on every core, and the result
// does not depend on scheduling.
func backtestCutoffs(items []HistoryItem, cutoffs []time.Time, opts BacktestOptions) ([]BacktestResult, error) {
	export := newestResolution(items)
	scores := make([]BacktestResult, len(cutoffs))
	errs := make([]error, len(cutoffs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(cutoffs)) {
		wg.Go(func() {
			for ci := range next {
				scores[ci], errs[ci] = backtestCutoff(items, cutoffs[ci], ci, export, opts)
			}
		})
	}
	for ci := range cutoffs {
		next <- ci
	}
	close(next)
	wg.Wait()
	for ci, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("backtest cut-off %s: %w", cutoffs[ci].Format(time.DateOnly), err)
		}
	}
	return scores, nil
}

// setAt is the milestone-shaped set scored at c: the issues open at c,
// created within window before it and resolved since (an issue never
// resolved leaves the set without an outcome, so there is none); nil when
// fewer than minSize.
func setAt(items []HistoryItem, c time.Time, window time.Duration, minSize int) []int64 {
	var set []int64
	for _, it := range items {
		if isOpenAt(it, c) && it.Created.After(c.Add(-window)) {
			if it.Resolved.IsZero() {
				return nil
			}
			set = append(set, it.Number)
		}
	}
	if len(set) < minSize {
		return nil
	}
	return set
}

// backtestCutoff forecasts and scores the work open at one cut-off, and
// its set (setAt) by the date its last issue was done: as forecast, and
// conditioned on finishing by export.
func backtestCutoff(items []HistoryItem, c time.Time, ci int, export time.Time, opts BacktestOptions) (BacktestResult, error) {
	var res BacktestResult
	seed := opts.Seed*1_000_003 + uint64(ci)
	cal, team := calibrateAt(items, c, opts.Calibration)
	set := setAt(items, c, opts.SetWindow, opts.MinSetSize)
	fc, setCDF, err := forecastAt(items, c, cal, team, team.share(opts.QueueFloor), set, opts.Forecaster, opts.Trials, seed)
	if err != nil {
		return res, err
	}
	bl, counts := baselineDrawsAt(items, c, opts.Trials, seed)
	days := func(t time.Time) float64 { return t.Sub(c).Hours() / 24 }
	within := days(export)
	cond := &res.Conditioned
	res.Cutoffs, res.Baseline.Cutoffs = 1, 1
	cond.Items.Cutoffs, cond.Items.Baseline.Cutoffs = 1, 1
	for _, it := range items {
		if !isOpenAt(it, c) || it.Resolved.IsZero() {
			continue
		}
		actual := days(it.Resolved)
		if d, ok := fc[it.Number]; ok {
			res.add(d.quantiles(), actual)
			cond.Items.add(d.within(within), actual)
		}
		if d, ok := bl[it.Number]; ok {
			res.Baseline.add(sortedQuantiles(d), actual)
			cond.Items.Baseline.add(sortedQuantilesWithin(d, within), actual)
		}
	}
	if set != nil && setCDF != nil {
		last := 0.0
		for _, it := range items {
			if slices.Contains(set, it.Number) {
				last = math.Max(last, days(it.Resolved))
			}
		}
		base := baselineCountDraws(counts, len(set), opts.Trials, seed)
		res.Sets.Cutoffs, res.Sets.Baseline.Cutoffs = 1, 1
		res.Sets.add(setCDF.quantiles(), last)
		res.Sets.Baseline.add(sortedQuantiles(base), last)
		cond.Sets.Cutoffs, cond.Sets.Baseline.Cutoffs = 1, 1
		cond.Sets.add(setCDF.within(within), last)
		cond.Sets.Baseline.add(sortedQuantilesWithin(base, within), last)
	}
	return res, nil
}

// teamAt is the modelled team at a cut-off: k people whose hours are
// shared among the open issues, and for every open issue the hours it has
// had so far.
type teamAt struct {
	k     int
	open  int
	spent map[int64]float64
	// usualOpen is the time-weighted mean number of open issues over the
	// quarter before the cut-off.
	usualOpen float64
}

// knownStart is an item's start as known at c (zero when not yet known).
func knownStart(it HistoryItem, c time.Time) time.Time {
	if it.Started.IsZero() || it.Started.After(c) {
		return time.Time{}
	}
	return it.Started
}

// calibrationLookback bounds the history calibrateAt reads: the samples'
// year plus the longest time an issue usually stays open before it.
const calibrationLookback = 3 * 365 * 24 * time.Hour

// calibrateAt fits the team size and the calibration from what was known at c.
func calibrateAt(items []HistoryItem, c time.Time, copts CalibrationOptions) (Calibration, teamAt) {
	samples, team := samplesAt(items, c)
	return Calibrate(samples, copts), team
}

// BacktestCalibration is the calibration the people-less replay fits at
// c, with the samples it fits it on: Calibrate's, the live forecast's own
// rules for samples and spread, on the queue-share stand-in for effort.
func BacktestCalibration(items []HistoryItem, c time.Time, opts CalibrationOptions) (Calibration, []Sample) {
	samples, _ := samplesAt(items, c)
	return Calibrate(samples, opts), samples
}

// samplesAt is the modelled team at c and the samples resolved by then.
func samplesAt(items []HistoryItem, c time.Time) ([]Sample, teamAt) {
	from := c.Add(-91 * 24 * time.Hour)
	oldest := c.Add(-calibrationLookback)
	var open, hist []WorkInterval
	busy, queued := 0.0, 0.0
	for _, it := range items {
		if it.Created.After(c) || (!it.Resolved.IsZero() && it.Resolved.Before(oldest)) {
			continue
		}
		to := it.Resolved
		if to.IsZero() || to.After(c) {
			to = c
		}
		iv := WorkInterval{Number: it.Number, From: it.Created, To: to}
		hist = append(hist, iv)
		if to.Equal(c) {
			open = append(open, iv)
		}
		if s := maxTime(it.Created, from); to.After(s) {
			queued += to.Sub(s).Hours()
		}
		// k: time-weighted mean work in progress over the quarter before c.
		if s := knownStart(it, c); !s.IsZero() {
			if s.Before(from) {
				s = from
			}
			if to.After(s) {
				busy += to.Sub(s).Hours()
			}
		}
	}
	k := max(1, int(math.Round(busy/c.Sub(from).Hours())))

	shared := make(map[int64]float64, len(hist))
	for i, h := range sharedHours(hist, float64(k), Calendar{}) {
		shared[hist[i].Number] += h
	}
	var samples []Sample
	team := teamAt{k: k, open: len(open), spent: map[int64]float64{}, usualOpen: queued / c.Sub(from).Hours()}
	for _, it := range items {
		h, ok := shared[it.Number]
		if !ok {
			continue
		}
		if !it.Resolved.IsZero() && !it.Resolved.After(c) {
			if historySize(it) == "" {
				continue // no estimate: not a sample
			}
			samples = append(samples, Sample{
				Number:       it.Number,
				NominalHours: historySize(it).NominalHours(),
				ActualHours:  h,
				Effort:       EffortQueueShare,
				Labels:       it.Labels,
				Person:       it.Assignee,
				FinishedAt:   it.Resolved,
			})
		} else {
			team.spent[it.Number] = h
		}
	}
	return samples, team
}

// share is the part of a person each open issue gets in the forecast:
// min(1, k/open), but when the queue has shrunk below floor × its usual
// size, only what an issue got in a queue of that size: the team that
// worked a long queue does not turn its whole attention to the few issues
// left, it has moved on to work the history does not show.
func (t teamAt) share(floor float64) float64 {
	open := math.Max(float64(max(1, t.open)), floor*t.usualOpen)
	return math.Min(1, float64(t.k)/open)
}

// historySize maps an item's estimate to the nearest size by nominal hours
// in log scale; "" when it has none.
func historySize(it HistoryItem) Size {
	if it.Size.Valid() {
		return it.Size
	}
	h := it.NominalHours(0)
	if h <= 0 {
		return ""
	}
	best, bestD := SizeM, math.Inf(1)
	for _, s := range []Size{SizeXS, SizeS, SizeM, SizeL, SizeXL} {
		if d := math.Abs(math.Log(h / s.NominalHours())); d < bestD {
			best, bestD = s, d
		}
	}
	return best
}

// setMilestone is the milestone id forecastAt gives a cut-off's set.
const setMilestone = 1

// forecastAt runs the calibrated forecast of the work open at c, and of
// set's last finish (nil when set is empty), in days after c.
func forecastAt(items []HistoryItem, c time.Time, cal Calibration, team teamAt, share float64, set []int64, run Forecaster, trials int, seed uint64) (map[int64]issueDelay, *setDelay, error) {
	in := Input{Now: c, Calibration: cal}
	// Processor sharing: one modelled worker per open issue, each with
	// its share of the team's hours.
	workerCal := Calendar{HoursPerDay: 6 * share, WorkingDays: [7]bool{false, true, true, true, true, true, false}, Location: time.UTC}
	for p := range max(1, team.open) {
		in.People = append(in.People, Person{Login: fmt.Sprintf("share%04d", p+1), Calendar: workerCal})
	}
	if len(set) > 0 {
		in.Milestones = []Milestone{{ID: setMilestone, Title: "set"}}
	}
	for _, it := range items {
		if !isOpenAt(it, c) {
			continue
		}
		// Every open issue is being worked, at its share: steeping, with
		// the shared hours it has had so far spent.
		iss := Issue{Number: it.Number, Title: it.ID, State: Steeping, Estimate: historySize(it), Priority: DefaultPriority, Labels: it.Labels}
		iss.SpentHours = team.spent[it.Number]
		if slices.Contains(set, it.Number) {
			iss.Milestone = setMilestone
		}
		in.Issues = append(in.Issues, iss)
	}
	fc, err := run(in, Options{Trials: trials, Seed: seed, Workers: 1})
	if err != nil {
		return nil, nil, err
	}
	days := func(t time.Time) float64 { return t.Sub(c).Hours() / 24 }
	out := make(map[int64]issueDelay, len(fc.Issues))
	for _, f := range fc.Issues {
		if f.Unschedulable != "" || f.P50.IsZero() {
			continue
		}
		out[f.Number] = issueDelay{days(f.P10), days(f.P50), days(f.P80)}
	}
	var setCDF *setDelay
	for _, m := range fc.Milestones {
		// The set's quantiles are exact: its CDF holds every 5%.
		if m.ID == setMilestone && !m.Quantiles[18].IsZero() {
			setCDF = new(setDelay)
			for i, q := range m.Quantiles {
				setCDF[i] = days(q)
			}
		}
	}
	return out, setCDF, nil
}

// newestResolution is the latest resolution in items: where an exported
// history ends, as far as the data can tell.
func newestResolution(items []HistoryItem) time.Time {
	var end time.Time
	for _, it := range items {
		if it.Resolved.After(end) {
			end = it.Resolved
		}
	}
	return end
}

// issueDelay is one issue's forecast finish in days after the cut-off:
// p10, p50 and p80, read as a delay that is lognormal piecewise between
// them (ln d linear in the normal score) and beyond them along the nearest
// piece, so that its p90 is extendToP90's.
type issueDelay [3]float64

// issueDelayScores are the normal scores of p10, p50 and p80.
var issueDelayScores = [3]float64{-1.2815515655446004, 0, 0.8416212335729143}

// lnAt is ln d at normal score z.
func (d issueDelay) lnAt(z float64) float64 {
	k := 0
	if z > 0 {
		k = 1
	}
	l0, l1 := math.Log(d[k]), math.Log(d[k+1])
	return l0 + (l1-l0)*(z-issueDelayScores[k])/(issueDelayScores[k+1]-issueDelayScores[k])
}

// quantiles is the forecast's p10/p50/p80/p90 as scored.
func (d issueDelay) quantiles() itemQuantiles {
	return itemQuantiles{p10: d[0], p50: d[1], p80: d[2], p90: extendToP90(d[1], d[2])}
}

// within is the forecast conditioned on the finish falling within L days
// of the cut-off: each quantile p is the unconditioned one at p·F(L).
func (d issueDelay) within(L float64) itemQuantiles {
	q := d.quantiles()
	if !(L > 0) || math.IsInf(L, 1) || !(d[0] > 0 && d[0] <= d[1] && d[1] < d[2]) {
		return q
	}
	// F(L) at the score whose delay is L: lnAt is linear on each side of
	// p50, so it inverts directly on L's side. Below p50 the piece may be
	// flat (p10 = p50), and then no delay under p50 has any chance.
	lnL := math.Log(L)
	k := 1
	if lnL < math.Log(d[1]) {
		k = 0
	}
	l0, l1 := math.Log(d[k]), math.Log(d[k+1])
	if l1 == l0 {
		return q
	}
	z := issueDelayScores[k] + (lnL-l0)*(issueDelayScores[k+1]-issueDelayScores[k])/(l1-l0)
	if z < -8 || z >= 8 {
		// No chance by then, or all of it (to 1e-15): as forecast.
		return q
	}
	f := normalCDF(z)
	at := func(p float64) float64 { return math.Exp(d.lnAt(normalQuantile(p * f))) }
	return itemQuantiles{p10: at(0.1), p50: at(0.5), p80: at(0.8), p90: at(0.9)}
}

// setDelay is a set's exact finish CDF in days after the cut-off: the
// finish at probability 0, 5%, …, 100%, linear between them.
type setDelay [MilestoneQuantiles]float64

// at is the finish at probability p.
func (s *setDelay) at(p float64) float64 {
	x := p * (MilestoneQuantiles - 1)
	i := min(int(x), MilestoneQuantiles-2)
	return s[i] + (s[i+1]-s[i])*(x-float64(i))
}

// quantiles is the set's p10/p50/p80/p90 as scored: exact points of its CDF.
func (s *setDelay) quantiles() itemQuantiles {
	return itemQuantiles{p10: s[2], p50: s[10], p80: s[16], p90: s[18]}
}

// within is the set's p10/p50/p80/p90 conditioned on its finish falling
// within L days of the cut-off.
func (s *setDelay) within(L float64) itemQuantiles {
	if !(L >= s[0]) || L >= s[MilestoneQuantiles-1] {
		// No chance by then, or all of it: as forecast.
		return s.quantiles()
	}
	i := 0
	for s[i+1] <= L {
		i++
	}
	f := (float64(i) + (L-s[i])/(s[i+1]-s[i])) / (MilestoneQuantiles - 1)
	return itemQuantiles{p10: s.at(0.1 * f), p50: s.at(0.5 * f), p80: s.at(0.8 * f), p90: s.at(0.9 * f)}
}

// extendToP90 reads the delay after the cut-off as lognormal through p50
// and p80 and returns its 90th percentile.
func extendToP90(d50, d80 float64) float64 {
	const z80, z90 = 0.8416212335729143, 1.2815515655446004
	if d50 <= 0 || d80 <= d50 {
		return math.Max(d80, d50)
	}
	return math.Exp(math.Log(d50) + z90/z80*(math.Log(d80)-math.Log(d50)))
}

// defaultForecaster is the forecast Backtest uses when none is given.
var defaultForecaster Forecaster = Run
