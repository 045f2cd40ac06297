package scheduler

// "How many by when": for every local day of a horizon, how many of the
// open issues are done by its end, as quantile curves over the trials of
// the same Monte Carlo schedule Run computes (so dependencies, calendars,
// estimates and who does what all count), said the way flow tools say it:
// "at least N with 80% probability" is the largest N that at least 80% of
// the trials reach. RunDoneBy counts it while the trials run; Run itself
// does none of this work. BaselineDoneBy is the throughput-only answer of
// the backtest's baseline, for comparison.
//
// Counting: per block of trials, each schedulable issue's finish is binned
// by the local day it falls on (see dayOf), a running sum over the days
// gives each trial's count done by each day, and a histogram per day over
// 0..issues keeps how many trials reached each count. Histograms are
// summed across workers, so the result does not depend on who ran which
// trials. Unschedulable issues are never done.
//
// Cost: binning is a scattered increment per issue and trial, which costs
// about half of what scheduling that trial costs (measured: binning inside
// the kernel's loop, while the block's rows are in cache, was no cheaper,
// nor were trial-major rows or 8-bit counts). So the curve is counted on
// the first DoneByTrials trials only (all of them at the default 2,000):
// the share of trials reaching a count then has a standard error under one
// percentage point, and a 10,000-trial forecast pays a fifth of the cost.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// DoneBy defaults and bounds.
const (
	DefaultDoneByDays = 90
	MaxDoneByDays     = 3660
	// DoneByTrials is how many trials (the first ones) a curve counts.
	DoneByTrials = 32 * blockTrials
)

// DoneByLevels are the probabilities DoneBy answers at.
var DoneByLevels = [3]float64{0.5, 0.8, 0.9}

// DoneByOptions asks for a "how many by when" curve: Days local days from
// today (day 0) in Location's calendar.
type DoneByOptions struct {
	Days     int            // default DefaultDoneByDays, at most MaxDoneByDays
	Location *time.Location // nil: UTC
}

func (o DoneByOptions) normalized() DoneByOptions {
	if o.Days <= 0 {
		o.Days = DefaultDoneByDays
	}
	o.Days = min(o.Days, MaxDoneByDays)
	if o.Location == nil {
		o.Location = time.UTC
	}
	return o
}

// DoneBy is a "how many by when" curve: AtLeast50[k], AtLeast80[k] and
// AtLeast90[k] are the numbers of open issues done by the end of day k
// (day 0 is From, today) with at least 50%, 80% and 90% probability.
type DoneBy struct {
	From     string `json:"from"`
	TimeZone string `json:"timeZone"`
	// Open is how many issues were open; Schedulable how many of them the
	// schedule could place (the rest are never counted done).
	Open        int `json:"open"`
	Schedulable int `json:"schedulable"`
	// Trials is how many trials the curve counts (at most DoneByTrials).
	Trials    int   `json:"trials"`
	AtLeast50 []int `json:"atLeast50"`
	AtLeast80 []int `json:"atLeast80"`
	AtLeast90 []int `json:"atLeast90"`
}

// DoneByPoint is a DoneBy curve read on one day.
type DoneByPoint struct {
	Day       string `json:"day"`
	AtLeast50 int    `json:"atLeast50"`
	AtLeast80 int    `json:"atLeast80"`
	AtLeast90 int    `json:"atLeast90"`
}

// On reads the curve on a local date (YYYY-MM-DD); false when the date lies
// before today or beyond the horizon.
func (d DoneBy) On(date string) (DoneByPoint, bool) {
	from, err1 := time.Parse(time.DateOnly, d.From)
	on, err2 := time.Parse(time.DateOnly, date)
	if err1 != nil || err2 != nil {
		return DoneByPoint{}, false
	}
	k := int(on.Sub(from).Hours()+0.5) / 24
	if on.Before(from) || k >= len(d.AtLeast50) || k >= len(d.AtLeast80) || k >= len(d.AtLeast90) {
		return DoneByPoint{}, false
	}
	return DoneByPoint{Day: date, AtLeast50: d.AtLeast50[k], AtLeast80: d.AtLeast80[k], AtLeast90: d.AtLeast90[k]}, true
}

// Last is the horizon's last local date.
func (d DoneBy) Last() string {
	from, err := time.Parse(time.DateOnly, d.From)
	if err != nil || len(d.AtLeast50) == 0 {
		return d.From
	}
	return from.AddDate(0, 0, len(d.AtLeast50)-1).Format(time.DateOnly)
}

// doneByDays maps hours after the origin to local days.
type doneByDays struct {
	days int
	// end[k] is the end of local day k (the next local midnight), in hours
	// after the origin.
	end  []float64
	from string
	loc  *time.Location
}

func newDoneByDays(origin time.Time, o DoneByOptions) *doneByDays {
	o = o.normalized()
	local := origin.In(o.Location)
	y, m, d := local.Date()
	s := &doneByDays{days: o.Days, end: make([]float64, o.Days), loc: o.Location,
		from: time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)}
	for k := range o.Days {
		s.end[k] = time.Date(y, m, d+k+1, 0, 0, 0, 0, o.Location).Sub(origin).Hours()
	}
	return s
}

// dayOf is the local day (0..days) a finish f hours after the origin falls
// on: the first whose end is at or after f; days means beyond the horizon.
// Local days are 24 hours long but where daylight saving moves a midnight
// by an hour or two, so a guess from 24-hour days is off by at most one,
// and only the small end table is read (a table per hour measured slower).
func (s *doneByDays) dayOf(f float64) int {
	end := s.end
	if f > end[len(end)-1] {
		return s.days
	}
	k := 0
	if f > end[0] {
		k = min(int((f-end[0])*(1.0/24))+1, len(end)-1)
	}
	if k > 0 && f <= end[k-1] {
		k--
	} else if f > end[k] {
		k++
	}
	return k
}

// doneByAcc is one worker's "how many by when" counts.
type doneByAcc struct {
	// hist holds, per day, how many trials had v issues done by its end,
	// v = 0..items: days × (items+1).
	hist []uint32
	// perDay is a block's scratch: per day (and one beyond the horizon),
	// the issues finishing on it in each trial.
	perDay [][blockTrials]uint16
}

// maxDoneByItems is the most schedulable issues a curve is counted for:
// the per-day counts of a block are 16 bits, half the cache of 32.
const maxDoneByItems = math.MaxUint16

func (p *plan) newDoneByAcc() *doneByAcc {
	if p.doneBy == nil {
		return nil
	}
	return &doneByAcc{
		hist:   make([]uint32, p.doneBy.days*(len(p.items)+1)),
		perDay: make([][blockTrials]uint16, p.doneBy.days+1),
	}
}

// countDoneBy adds the first nb trials of a scheduled block starting at
// trial t0 to a, when it is among the DoneByTrials counted.
func (p *plan) countDoneBy(t0, nb int, s *blockState, a *doneByAcc) {
	if t0 >= DoneByTrials {
		return
	}
	days := p.doneBy
	perDay := a.perDay
	clear(perDay)
	// Every lane of the block, used or not (a fixed-size loop has no
	// bounds checks; lanes past nb are never read).
	for pos := range p.items {
		fin := &s.fin[pos]
		for t := range blockTrials {
			perDay[days.dayOf(fin[t])][t]++
		}
	}
	stride := len(p.items) + 1
	var done [blockTrials]uint32
	for k := range days.days {
		row := &perDay[k]
		h := a.hist[k*stride : (k+1)*stride]
		for t := range nb {
			done[t] += uint32(row[t])
			h[done[t]]++
		}
	}
}

// doneByCurve reads the merged counts.
func (p *plan) doneByCurve(hist []uint32) DoneBy {
	days := p.doneBy
	d := DoneBy{
		From: days.from, TimeZone: days.loc.String(), Open: len(p.openIdx), Schedulable: len(p.items),
		Trials: min(p.trials, DoneByTrials),
	}
	d.read(hist, len(p.items)+1, days.days)
	return d
}

// read fills the curve from per-day histograms of stride counts each.
func (d *DoneBy) read(hist []uint32, stride, days int) {
	for k := range days {
		h := hist[k*stride : (k+1)*stride]
		d.AtLeast50 = append(d.AtLeast50, atLeast(h, d.Trials, DoneByLevels[0]))
		d.AtLeast80 = append(d.AtLeast80, atLeast(h, d.Trials, DoneByLevels[1]))
		d.AtLeast90 = append(d.AtLeast90, atLeast(h, d.Trials, DoneByLevels[2]))
	}
}

// atLeast is the largest count v that at least share q of the trials
// reach, from h[v] = trials with exactly v.
func atLeast(h []uint32, trials int, q float64) int {
	need := uint64(math.Ceil(q*float64(trials) - 1e-9))
	var reached uint64
	for v := len(h) - 1; v >= 0; v-- {
		reached += uint64(h[v])
		if reached >= need {
			return v
		}
	}
	return 0
}

// RunDoneBy is Run that also counts, for every day of the horizon, how many
// open issues each trial has done by its end. Its Forecast equals Run's for
// the same input and options. Above 65,535 schedulable issues the curve is
// left empty.
func RunDoneBy(in Input, opts Options, do DoneByOptions) (Forecast, DoneBy, error) {
	p, err := newPlan(in, opts)
	if err != nil {
		return Forecast{}, DoneBy{}, err
	}
	if len(p.items) > maxDoneByItems {
		return p.run(), DoneBy{}, nil
	}
	p.doneBy = newDoneByDays(p.origin, do)
	f := p.run()
	return f, p.doneByCurve(p.doneByHist), nil
}

// BaselineDoneBy is the throughput-only answer to "how many by when": the
// backtest baseline's weekly resampling (see baseline.go) of the given
// weekly throughputs, over open issues, counted by the end of each local
// day of the horizon from now, in at most DoneByTrials trials like the
// schedule's curve. It fails without any week to resample.
func BaselineDoneBy(weekly []int, open int, now time.Time, do DoneByOptions, trials int, seed uint64) (DoneBy, error) {
	if len(weekly) == 0 {
		return DoneBy{}, fmt.Errorf("baseline: no complete week of throughput")
	}
	if trials <= 0 {
		trials = DefaultTrials
	}
	trials = min(trials, DoneByTrials)
	days := newDoneByDays(now, do)
	stride := open + 1
	hist := make([]uint32, days.days*stride)
	perDay := make([]uint32, days.days+1)
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	for range trials {
		clear(perDay)
		resampleWeeks(weekly, rng, open, func(_ int, d float64) bool {
			k := days.dayOf(d * 24)
			perDay[k]++
			return k < days.days
		})
		done := 0
		for k := range days.days {
			done += int(perDay[k])
			hist[k*stride+done]++
		}
	}
	out := DoneBy{From: days.from, TimeZone: days.loc.String(), Open: open, Schedulable: open, Trials: trials}
	out.read(hist, stride, days.days)
	return out, nil
}
