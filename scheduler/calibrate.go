package scheduler

// Calibration rules (DESIGN.md section 5):
//
// A sample is a done, non-discarded issue that carried an estimate when work
// started. Its actual effort is the tracked time when there is any, otherwise
// the working hours it spent steeping or in review on its assignee's
// calendar, shared equally among the issues that person had steeping at the
// same moment (SharedWorkingHours).
//
// The model is ln(actual/nominal) = mu + bias[label] + bias[person] + e.
// Calibrate fits it robustly over the most recent samples: those finished
// within CalibrationOptions.MaxAge (default 365 days) of the newest one, at
// most MaxSamples (default 1,000; a year rather than the last few hundred
// issues, because on the shared histories a shorter window gave ranges that
// were too narrow on the busiest projects: p80 coverage 0.70 instead of 0.79
// on MESOS): mu is the median log ratio, sigma is
// 1.4826 × the median absolute deviation (the MAD estimate of a normal
// standard deviation, which one wild sample cannot move). A sigma wider than
// the prior's is pooled towards it as a variance, the prior counting as
// SigmaPriorWeight (default 400, chosen by cross-validation over 100)
// samples; a narrower one only as far as its samples are the queue-share
// stand-in (SpreadSigma). On the shared histories the first cut-offs of a
// backtest (20 to 50 resolved issues, bulk closures mixed with real work)
// measured sigma 3 to 4, a p80 twenty times the p50, and those few cut-offs
// made most of the pinball loss: pooling (then as 100 samples) took DAEMON's
// from 466 to 112 days and APSTUD's from 290 to 119; as 400 it moves a
// history of 1,000 samples of sigma 2.5 by under 10%.
// A group's bias
// (a label outside the est/ and p/ namespaces, or a person) is the median of
// its samples' residuals shrunk towards zero by n/(n+k), k = 5 by default:
// a label seen five times moves the forecast half as far as its residuals
// say, one seen fifty times nearly all the way. Labels then persons are fitted
// in turn on what the earlier terms leave, so a slow person is not read as a
// slow label. Groups with fewer than 2 samples get no bias.
//
// Work closed too fast to have been work is not a sample (PlausibleSample):
// an issue whose actual effort is under MinEffortMinutes (default 5) of
// working time, or under MinEffortShare (default 1/64, about the prior's
// 2.5 sigma below its centre) of its nominal hours, was closed on sight, in
// bulk or by an import, and says nothing about how fast the team works. Such
// samples are dropped before the window and the fit and counted in
// Calibration.Implausible. What is left still cannot make the team
// arbitrarily fast or slow: the multiplier stays within MultiplierBound(n)
// of the prior (a factor of 4 at 10 samples, widening as √(n/10): 8 at 40,
// about 40 at 1,000), so a history that is mostly noise moves the forecast
// a bounded way and a long, consistent one says what it measured.
//
// With fewer than MinSamples (default 10) samples the calibration is a cold
// start: the priors below, derived from public estimate-versus-actual data
// (see priorGlobalMultiplier), stand in for mu and sigma; samples already
// there still move mu by partial pooling, n/(n+k).

import (
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Cold-start priors, derived by TestRealDataPriors (realdata_test.go) from
// ../shared/data:
//
//   - jira-estimates/clean_data_v2.csv, all 2,480 issues have timeestimate
//     and timespent > 0: ln(timespent/timeestimate) has median 0.000 (×1.00)
//     and MAD-sigma 1.63; the median of the 90 per-project medians (projects
//     with ≥ 5 issues) is −0.32 (×0.73). timeestimate can be the remaining
//     estimate, which only shrinks as work is logged, so the ratio is if
//     anything biased upwards; the pooled centre, 1.0, is the prior.
//   - jira-history/*.csv, the 6,594 issues with story points and in-progress
//     time: the median in-progress working hours (6 h a weekday) per story
//     point is 1.42, MAD-sigma of its log 2.77 (in-progress time includes
//     waiting, so that spread is an upper bound).
//
// So a new project forecasts from its labels as written (multiplier 1.0)
// with the wide spread of real hour estimates (sigma 1.63) until ten
// samples say otherwise, and a story point is worth 1.42 nominal hours.
const (
	priorGlobalMultiplier = 1.0
	priorSigma            = 1.63
	// PriorHoursPerStoryPoint converts story points to nominal hours when a
	// history gives points rather than est/* sizes.
	PriorHoursPerStoryPoint = 1.42
)

// Sample is one done issue's estimate against its actual effort.
type Sample struct {
	Number       int64
	NominalHours float64 // Size.NominalHours() of the estimate when work started
	ActualHours  float64 // tracked time, or SharedWorkingHours
	// Effort says where ActualHours comes from; the spread rule
	// (SpreadSigma) trusts a narrow spread only from measured effort.
	Effort     EffortSource
	Labels     []string
	Person     string
	FinishedAt time.Time
}

// EffortSource is where a sample's actual effort was read from.
type EffortSource uint8

const (
	// EffortWorked is a person's working hours on the issue while it was
	// steeping or in review, shared among what they had open then
	// (SharedWorkingHours): what the live calibration reads when no time
	// was tracked.
	EffortWorked EffortSource = iota
	// EffortTracked is time tracked on the issue.
	EffortTracked
	// EffortQueueShare is the people-less replay's stand-in: the issue's
	// share of a modelled team's hours over the whole time it was open
	// (Backtest). It is not a measurement of anyone's work: every issue open
	// at the same time gets the same hours whatever its size, so its spread
	// says how long issues stayed open, not how well the team estimates.
	EffortQueueShare
)

// CalibrationOptions tunes Calibrate. The zero value means the documented
// defaults.
type CalibrationOptions struct {
	MaxSamples int           // most recent samples used; default 1,000
	MaxAge     time.Duration // samples finished this long before the newest are dropped; default 365 days
	MinSamples int           // fewer samples than this is a cold start; default 10
	PoolingK   float64       // shrinkage n/(n+k); default 5
	// SigmaPriorWeight is how many samples the prior sigma counts as when
	// a wider measured sigma is pooled towards it; default 400.
	SigmaPriorWeight float64
	// NarrowSigmaPriorWeight is how many samples the prior counts as when
	// a narrower sigma is pooled towards it, scaled by the share of
	// samples whose effort is the queue-share stand-in (SpreadSigma);
	// default 100. Negative means 0.
	NarrowSigmaPriorWeight float64
	// DriftPeriod is the length of the periods whose median residuals
	// measure the team's drift (SharedSpread); default 28 days.
	DriftPeriod time.Duration
	// SharedScale scales the measured drift (SharedSpread); default 8
	// (chosen by cross-validation, see the package doc), negative means
	// independent efforts.
	SharedScale float64
	// MinEffortMinutes and MinEffortShare set the least effort a sample
	// must show to count as work (see PlausibleSample); defaults 5 minutes
	// and 1/64 of the nominal hours.
	MinEffortMinutes float64
	MinEffortShare   float64
}

func (o CalibrationOptions) withDefaults() CalibrationOptions {
	if o.MaxSamples <= 0 {
		o.MaxSamples = 1000
	}
	if o.MaxAge <= 0 {
		o.MaxAge = 365 * 24 * time.Hour
	}
	if o.MinSamples <= 0 {
		o.MinSamples = 10
	}
	if o.PoolingK <= 0 {
		o.PoolingK = 5
	}
	if o.SigmaPriorWeight <= 0 {
		o.SigmaPriorWeight = 400
	}
	if o.DriftPeriod <= 0 {
		o.DriftPeriod = 28 * 24 * time.Hour
	}
	switch {
	case o.SharedScale == 0:
		o.SharedScale = 8
	case o.SharedScale < 0:
		o.SharedScale = 0
	}
	switch {
	case o.NarrowSigmaPriorWeight == 0:
		o.NarrowSigmaPriorWeight = 100
	case o.NarrowSigmaPriorWeight < 0:
		o.NarrowSigmaPriorWeight = 0
	}
	if o.MinEffortMinutes <= 0 {
		o.MinEffortMinutes = 5
	}
	if o.MinEffortShare <= 0 {
		o.MinEffortShare = 1.0 / 64
	}
	return o
}

// Calibrate fits the effort model to samples; see the rules at the top of
// this file. Samples with a non-positive nominal or actual are ignored.
func Calibrate(samples []Sample, opts CalibrationOptions) Calibration {
	opts = opts.withDefaults()
	usable := make([]Sample, 0, len(samples))
	implausible := 0
	for _, s := range samples {
		switch {
		case !(s.NominalHours > 0) || math.IsInf(s.NominalHours, 0) || math.IsNaN(s.ActualHours) || math.IsInf(s.ActualHours, 0):
		case !PlausibleSample(s, opts):
			implausible++
		default:
			usable = append(usable, s)
		}
	}
	// Newest first, ties by number, so the fit does not depend on input order.
	sort.SliceStable(usable, func(i, j int) bool {
		if !usable[i].FinishedAt.Equal(usable[j].FinishedAt) {
			return usable[i].FinishedAt.After(usable[j].FinishedAt)
		}
		return usable[i].Number < usable[j].Number
	})
	if len(usable) > 0 {
		oldest := usable[0].FinishedAt.Add(-opts.MaxAge)
		n := 0
		for n < len(usable) && n < opts.MaxSamples && !usable[n].FinishedAt.Before(oldest) {
			n++
		}
		usable = usable[:n]
	}

	cal := Calibration{N: len(usable), Implausible: implausible, ByLabelBias: []Bias{}, ByPersonBias: []Bias{}}
	logs := make([]float64, len(usable))
	for i, s := range usable {
		logs[i] = math.Log(s.ActualHours / s.NominalHours)
	}
	if len(usable) < opts.MinSamples {
		cal.ColdStart = true
		mu := math.Log(priorGlobalMultiplier)
		if len(logs) > 0 {
			w := float64(len(logs)) / (float64(len(logs)) + opts.PoolingK)
			mu += w * (median(logs) - mu)
		}
		cal.GlobalMultiplier = math.Exp(mu)
		cal.Sigma = priorSigma
		return cal
	}
	mu := median(logs)
	if b := math.Log(MultiplierBound(len(logs))); math.Abs(mu-math.Log(priorGlobalMultiplier)) > b {
		mu = math.Log(priorGlobalMultiplier) + math.Copysign(b, mu-math.Log(priorGlobalMultiplier))
	}
	resid := make([]float64, len(logs))
	for i := range logs {
		resid[i] = logs[i] - mu
	}
	cal.ByLabelBias = fitGroupBias(usable, resid, opts.PoolingK, func(s Sample) []string {
		var keys []string
		for _, l := range s.Labels {
			if l = strings.ToLower(strings.TrimSpace(l)); calibratedLabel(l) && !slices.Contains(keys, l) {
				keys = append(keys, l)
			}
		}
		return keys
	})
	cal.ByPersonBias = fitGroupBias(usable, resid, opts.PoolingK, func(s Sample) []string {
		if s.Person == "" {
			return nil
		}
		return []string{s.Person}
	})
	cal.GlobalMultiplier = math.Exp(mu)
	standIn := 0
	for _, s := range usable {
		if s.Effort == EffortQueueShare {
			standIn++
		}
	}
	measured := 1.4826 * mad(resid)
	cal.Sigma = SpreadSigma(measured, len(resid), standIn, opts)
	if opts.SharedScale > 0 {
		cal.SharedSigma = math.Min(SharedSpread(usable, resid, measured, opts.DriftPeriod, opts.SharedScale), 0.8*cal.Sigma)
	}
	return cal
}

// SharedSpread is the spread of what the issues of one stretch of time
// share, measured on the samples (newest first) and their residuals: the
// drift, the standard deviation of the median residual between periods of
// the given length less what sampling alone would give (1.2533²·s²/n for a
// median of n), times scale, and the uncertainty of the fitted centre
// itself (1.2533·s/√N over all N), added as variances. The scale stands
// for what 28-day medians of finished work cannot see: Jira teams close
// work in batches (at a release), so the issues of one stretch finish
// together far more than the drift of monthly medians says; it is chosen
// by cross-validation, and a steady team (no drift) gets none of it.
// A team's pace drifts (a release crunch, a holiday, a hard quarter), and
// a forecast's issues all fall in the same future stretch, so they share
// that drift: without it the last finish of many issues, the maximum of
// independent draws, comes out late and narrow. Periods with fewer than 5
// samples are left out; fewer than 3 periods measure no drift.
func SharedSpread(samples []Sample, resid []float64, sigma float64, period time.Duration, scale float64) float64 {
	if len(samples) == 0 || len(samples) != len(resid) || period <= 0 {
		return 0
	}
	const medianEff = 1.2533 // a median's standard error is 1.2533·s/√n
	newest := samples[0].FinishedAt
	byPeriod := map[int64][]float64{}
	for i, s := range samples {
		k := int64(newest.Sub(s.FinishedAt) / period)
		byPeriod[k] = append(byPeriod[k], resid[i])
	}
	// In period order: a sum in map order would differ in its last bits
	// from run to run, and the forecast's seed hashes the result.
	keys := make([]int64, 0, len(byPeriod))
	for k := range byPeriod {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var meds []float64
	noise := 0.0
	for _, k := range keys {
		rs := byPeriod[k]
		if len(rs) < 5 {
			continue
		}
		meds = append(meds, median(rs))
		noise += medianEff * medianEff * sigma * sigma / float64(len(rs))
	}
	centre := medianEff * medianEff * sigma * sigma / float64(len(samples))
	if len(meds) < 3 {
		return math.Sqrt(centre)
	}
	mean := 0.0
	for _, m := range meds {
		mean += m
	}
	mean /= float64(len(meds))
	between := 0.0
	for _, m := range meds {
		between += (m - mean) * (m - mean)
	}
	between /= float64(len(meds) - 1)
	drift := math.Max(0, between-noise/float64(len(meds)))
	return math.Sqrt(scale*scale*drift + centre)
}

// SpreadSigma is the one spread rule: the sigma every forecast draws from,
// given the measured one (1.4826·MAD of the residuals) over n samples, of
// which standIn have the queue-share stand-in for effort. Both directions
// pool towards the prior's sigma as variances, (n·s² + w·prior²)/(n + w):
// a wider sigma with w = SigmaPriorWeight (a wide spread from few issues is
// more often a mixture, a bulk import or a mass closing, than the team's
// real uncertainty, and it is what makes ranges absurd); a narrower one
// with w = NarrowSigmaPriorWeight × standIn/n, so a narrow spread of
// measured effort (tracked time, a person's working hours) stands as
// earned while one of the stand-in, which hands every issue open at the
// same time the same hours, is read as the artefact it is. Never below
// 0.05: a perfectly regular history still leaves some doubt about the next
// issue.
func SpreadSigma(measured float64, n, standIn int, opts CalibrationOptions) float64 {
	opts = opts.withDefaults()
	w := opts.SigmaPriorWeight
	if measured < priorSigma {
		w = 0
		if n > 0 {
			w = opts.NarrowSigmaPriorWeight * float64(standIn) / float64(n)
		}
	}
	return math.Max(0.05, pooledSigma(measured, n, w))
}

// PlausibleSample reports whether a done issue's effort is plausibly work:
// at least opts.MinEffortMinutes of working time and opts.MinEffortShare of
// its nominal hours (defaults when zero). The live calibration and both
// backtests reach it through Calibrate, so one rule decides what is a
// sample everywhere.
func PlausibleSample(s Sample, opts CalibrationOptions) bool {
	opts = opts.withDefaults()
	return s.ActualHours >= opts.MinEffortMinutes/60 && s.ActualHours >= opts.MinEffortShare*s.NominalHours
}

// MultiplierBound is how far, as a factor either way, n samples may move
// the global multiplier from the prior's: 4·√(n/10), at least 4.
func MultiplierBound(n int) float64 {
	return 4 * math.Sqrt(math.Max(1, float64(n)/10))
}

// pooledSigma pools a measured sigma towards the prior's as variances,
// the prior counting as w samples: (n·s² + w·prior²)/(n + w).
func pooledSigma(measured float64, n int, w float64) float64 {
	nf := float64(n)
	if nf+w <= 0 {
		return measured
	}
	return math.Sqrt((nf*measured*measured + w*priorSigma*priorSigma) / (nf + w))
}

// calibratedLabel reports whether a label's namespace can bias effort: the
// estimate and priority labels are the model's inputs, not its groups.
func calibratedLabel(l string) bool {
	return l != "" && !strings.HasPrefix(l, "est/") && !strings.HasPrefix(l, "p/")
}

// fitGroupBias computes each group's shrunk median residual and removes it
// from resid in place, so the next group kind is fitted on what is left.
func fitGroupBias(samples []Sample, resid []float64, k float64, keys func(Sample) []string) []Bias {
	byKey := map[string][]int{}
	for i, s := range samples {
		for _, key := range keys(s) {
			byKey[key] = append(byKey[key], i)
		}
	}
	names := make([]string, 0, len(byKey))
	for key, idx := range byKey {
		if len(idx) >= 2 {
			names = append(names, key)
		}
	}
	sort.Strings(names)
	out := make([]Bias, 0, len(names))
	shift := make([]float64, len(resid))
	for _, key := range names {
		idx := byKey[key]
		vals := make([]float64, len(idx))
		for j, i := range idx {
			vals[j] = resid[i]
		}
		n := float64(len(idx))
		b := median(vals) * n / (n + k)
		out = append(out, Bias{Key: key, Multiplier: math.Exp(b), N: len(idx)})
		for _, i := range idx {
			shift[i] += b
		}
	}
	for i := range resid {
		resid[i] -= shift[i]
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

func mad(xs []float64) float64 {
	m := median(xs)
	d := make([]float64, len(xs))
	for i, x := range xs {
		d[i] = math.Abs(x - m)
	}
	return median(d)
}

// WorkInterval is one stretch of an issue being worked (steeping or in
// review) by one person.
type WorkInterval struct {
	Number int64
	Person string
	From   time.Time
	To     time.Time
}

// SharedWorkingHours is each issue's actual effort when no time was tracked:
// the working hours of its intervals on the person's calendar, where every
// working hour is shared equally among the issues that person had open
// intervals on at that moment. calendars maps a person to their calendar;
// a missing person gets the default calendar.
func SharedWorkingHours(intervals []WorkInterval, calendars map[string]Calendar) map[int64]float64 {
	out := map[int64]float64{}
	byPerson := map[string][]WorkInterval{}
	for _, iv := range intervals {
		if iv.To.After(iv.From) {
			byPerson[iv.Person] = append(byPerson[iv.Person], iv)
		} else if _, ok := out[iv.Number]; !ok {
			out[iv.Number] = 0
		}
	}
	for person, ivs := range byPerson {
		for i, h := range sharedHours(ivs, 1, calendars[person]) {
			out[ivs[i].Number] += h
		}
	}
	return out
}

// sharedHours returns, for every interval of ivs, the working hours of cal
// it got when capacity workers share their time equally among the open
// intervals, at most one worker each: min(1, capacity/open) of every hour.
// The share is the same for every interval open at a moment, so each
// interval's total is a difference of one running sum.
func sharedHours(ivs []WorkInterval, capacity float64, cal Calendar) []float64 {
	type edge struct {
		at   time.Time
		open bool
		i    int
	}
	edges := make([]edge, 0, 2*len(ivs))
	for i, iv := range ivs {
		if iv.To.After(iv.From) {
			edges = append(edges, edge{iv.From, true, i}, edge{iv.To, false, i})
		}
	}
	sort.Slice(edges, func(a, b int) bool {
		if !edges[a].at.Equal(edges[b].at) {
			return edges[a].at.Before(edges[b].at)
		}
		return !edges[a].open && edges[b].open // close before open at the same instant
	})
	out := make([]float64, len(ivs))
	open, total := 0, 0.0
	for e, ed := range edges {
		if e > 0 && open > 0 {
			total += math.Min(1, capacity/float64(open)) * calendarWorkingHours(cal, edges[e-1].at, ed.at)
		}
		if ed.open {
			open++
			out[ed.i] = -total
		} else {
			open--
			out[ed.i] += total
		}
	}
	return out
}

// calendarDefaults fills the zero Calendar's documented default.
func calendarDefaults(c Calendar) Calendar {
	if c.HoursPerDay <= 0 {
		c.HoursPerDay = 6
	}
	if c.WorkingDays == [7]bool{} {
		c.WorkingDays = [7]bool{false, true, true, true, true, true, false}
	}
	if c.Location == nil {
		c.Location = time.UTC
	}
	return c
}

// calendarWorksOn reports whether the local date of day is worked.
func calendarWorksOn(c Calendar, day time.Time) bool {
	if !c.WorkingDays[day.Weekday()] {
		return false
	}
	y, m, d := day.Date()
	for _, h := range c.Holidays {
		if hy, hm, hd := h.Date(); hy == y && hm == m && hd == d {
			return false
		}
	}
	date := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	for _, r := range c.TimeOff {
		fy, fm, fd := r.From.Date()
		ty, tm, td := r.To.Date()
		if !date.Before(time.Date(fy, fm, fd, 0, 0, 0, 0, time.UTC)) && !date.After(time.Date(ty, tm, td, 0, 0, 0, 0, time.UTC)) {
			return false
		}
	}
	return true
}

// calendarWorkingHours counts the working hours between from and to on c.
// A worked day's hours are spread evenly over its 24 local hours: a history
// records when things happened, not when people sat down, so the share of a
// day that passed is the share of its work that could have been done.
func calendarWorkingHours(c Calendar, from, to time.Time) float64 {
	if !to.After(from) {
		return 0
	}
	c = calendarDefaults(c)
	if isPlainWeekCalendar(c) {
		return c.HoursPerDay * (plainWeekdaysUntil(to) - plainWeekdaysUntil(from))
	}
	from, to = from.In(c.Location), to.In(c.Location)
	total := 0.0
	day := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, c.Location)
	for day.Before(to) {
		next := day.AddDate(0, 0, 1)
		if calendarWorksOn(c, day) {
			a, b := day, next
			if from.After(a) {
				a = from
			}
			if to.Before(b) {
				b = to
			}
			total += c.HoursPerDay * b.Sub(a).Hours() / next.Sub(day).Hours()
		}
		day = next
	}
	return total
}

// calendarAddWorkingHours is the moment h working hours after from on c,
// with calendarWorkingHours' even spread of a day's hours over the day.
func calendarAddWorkingHours(c Calendar, from time.Time, h float64) time.Time {
	c = calendarDefaults(c)
	t := from.In(c.Location)
	for guard := 0; h > 0 && guard < 100000; guard++ {
		day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, c.Location)
		next := day.AddDate(0, 0, 1)
		if !calendarWorksOn(c, day) {
			t = next
			continue
		}
		dayLen := next.Sub(day)
		avail := c.HoursPerDay * next.Sub(t).Hours() / dayLen.Hours()
		if h <= avail {
			return t.Add(time.Duration(h / c.HoursPerDay * float64(dayLen)))
		}
		h -= avail
		t = next
	}
	return t
}

// isPlainWeekCalendar reports whether c is Monday to Friday in UTC with no
// days off, whose working time has a closed form.
func isPlainWeekCalendar(c Calendar) bool {
	return c.Location == time.UTC && len(c.Holidays) == 0 && len(c.TimeOff) == 0 &&
		c.WorkingDays == [7]bool{false, true, true, true, true, true, false}
}

// plainWeekdaysUntil is the number of weekdays (fractional on the last one)
// from Monday 1970-01-05 UTC to t.
func plainWeekdaysUntil(t time.Time) float64 {
	const week = 7 * 24 * 3600
	sec := float64(t.Unix()-4*24*3600) + float64(t.Nanosecond())/1e9
	weeks := math.Floor(sec / week)
	rest := (sec - weeks*week) / (24 * 3600) // days into the week, Monday = 0
	return weeks*5 + math.Min(rest, 5)
}
