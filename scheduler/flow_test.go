package scheduler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// flowNow is a Wednesday; its 90-day window (2026-01-16 .. 2026-04-15)
// crosses the change to summer time in Europe and America.
var flowNow = time.Date(2026, 4, 15, 12, 0, 0, 0, time.UTC)

// day is local midnight of a date plus hours, in loc.
func day(loc *time.Location, date string, hour float64) time.Time {
	d, err := time.ParseInLocation(time.DateOnly, date, loc)
	if err != nil {
		panic(err)
	}
	return d.Add(time.Duration(hour * float64(time.Hour)))
}

// history builds an issue's transitions from (state, time) pairs.
func history(issue int64, steps ...any) []Transition {
	var out []Transition
	var from State
	for k := 0; k < len(steps); k += 2 {
		to, at := steps[k].(State), steps[k+1].(time.Time)
		out = append(out, Transition{Issue: issue, From: from, To: to, At: at})
		from = to
	}
	return out
}

func TestFlowCycleTimePercentiles(t *testing.T) {
	// Issue k (1..20) starts on day k-1 before 2026-04-10 and is done on
	// 2026-04-10: a cycle time of exactly k days. Nearest rank over 1..20.
	loc := time.UTC
	var ts []Transition
	done := day(loc, "2026-04-10", 16)
	for k := 1; k <= 20; k++ {
		start := done.AddDate(0, 0, -(k - 1)).Add(-6 * time.Hour)
		ts = append(ts, history(int64(k), Triage, start.AddDate(0, 0, -3), Steeping, start, InReview, start.Add(time.Hour), Done, done)...)
	}
	m := Flow(FlowInput{Now: flowNow, Transitions: ts}, FlowOptions{})
	want := Percentiles{P50: 10, P70: 14, P85: 17, P95: 19}
	if m.CycleTime.N != 20 || m.CycleTime.Percentiles != want {
		t.Fatalf("cycle times: n %d, %+v; want 20, %+v", m.CycleTime.N, m.CycleTime.Percentiles, want)
	}
	if m.SLE != (SLE{Percentile: 85, Days: 17, N: 20}) {
		t.Fatalf("SLE %+v", m.SLE)
	}
	m = Flow(FlowInput{Now: flowNow, Transitions: ts}, FlowOptions{SLEPercentile: 50})
	if m.SLE.Days != 10 {
		t.Fatalf("SLE at the 50th percentile: %+v", m.SLE)
	}
	if got := m.CycleTime.Items[0]; got.Number != 1 || got.Days != 1 || got.DoneDay != "2026-04-10" {
		t.Fatalf("first scatter point %+v", got)
	}
}

func TestFlowCycleTimeRules(t *testing.T) {
	loc := time.UTC
	cases := []struct {
		name      string
		ts        []Transition
		discarded bool
		want      []int // cycle times
		unstarted int
		through   int // done in the window
	}{
		{
			name: "same day is one day",
			ts:   history(1, Triage, day(loc, "2026-04-01", 9), Steeping, day(loc, "2026-04-01", 10), Done, day(loc, "2026-04-01", 17)),
			want: []int{1}, through: 1,
		},
		{
			name: "the first start counts, even after going back to triage",
			ts: history(1, Triage, day(loc, "2026-03-01", 9), Steeping, day(loc, "2026-03-02", 10), Triage, day(loc, "2026-03-05", 10),
				Steeping, day(loc, "2026-03-20", 10), Done, day(loc, "2026-03-21", 10)),
			want: []int{20}, through: 1,
		},
		{
			name: "in review without steeping starts the clock",
			ts:   history(1, Triage, day(loc, "2026-03-01", 9), InReview, day(loc, "2026-03-03", 10), Done, day(loc, "2026-03-04", 10)),
			want: []int{2}, through: 1,
		},
		{
			name: "a reopened issue's clock runs on to the final done",
			ts: history(1, Steeping, day(loc, "2026-03-01", 9), Done, day(loc, "2026-03-02", 10), Triage, day(loc, "2026-03-10", 10),
				Steeping, day(loc, "2026-03-11", 10), Done, day(loc, "2026-03-15", 10)),
			want: []int{15}, through: 1,
		},
		{
			name: "reopened and still open has no cycle time",
			ts:   history(1, Steeping, day(loc, "2026-03-01", 9), Done, day(loc, "2026-03-02", 10), Steeping, day(loc, "2026-03-10", 10)),
		},
		{
			name:      "discarded is left out",
			ts:        history(1, Steeping, day(loc, "2026-03-01", 9), Done, day(loc, "2026-03-02", 10)),
			discarded: true,
		},
		{
			name:      "done without starting counts in throughput only",
			ts:        history(1, Diagnosis, day(loc, "2026-03-01", 9), Done, day(loc, "2026-03-02", 10)),
			unstarted: 1, through: 1,
		},
		{
			name: "done before the window is left out",
			ts:   history(1, Steeping, day(loc, "2025-12-01", 9), Done, day(loc, "2026-01-15", 23.9)),
		},
		{
			name: "done on the window's first day counts",
			ts:   history(1, Steeping, day(loc, "2025-12-01", 9), Done, day(loc, "2026-01-16", 0)),
			want: []int{47}, through: 1,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// An old issue keeps the window at its full 90 days.
			ts := append(history(99, Diagnosis, day(loc, "2025-06-01", 9)), c.ts...)
			in := FlowInput{Now: flowNow, Transitions: ts}
			if c.discarded {
				in.Discarded = map[int64]bool{1: true}
			}
			m := Flow(in, FlowOptions{})
			var got []int
			for _, it := range m.CycleTime.Items {
				got = append(got, it.Days)
			}
			if !slices.Equal(got, c.want) || m.CycleTime.Unstarted != c.unstarted {
				t.Fatalf("cycle times %v unstarted %d; want %v, %d", got, m.CycleTime.Unstarted, c.want, c.unstarted)
			}
			through := 0
			for _, w := range m.Throughput.Weeks {
				through += w.Count
			}
			if through != c.through {
				t.Fatalf("throughput %d, want %d", through, c.through)
			}
			if m.From != "2026-01-16" || m.To != "2026-04-15" {
				t.Fatalf("window %s..%s", m.From, m.To)
			}
		})
	}
}

func TestFlowCountsLocalDays(t *testing.T) {
	// 00:30 in Berlin is the previous day in UTC; 23:30 in Los Angeles is
	// the next day in UTC. Calendar days are the project's.
	for _, c := range []struct {
		zone        string
		start, done time.Time
		want        int
		doneDay     string
	}{
		{"Europe/Berlin", time.Date(2026, 3, 1, 23, 30, 0, 0, time.UTC), time.Date(2026, 3, 3, 10, 0, 0, 0, time.UTC), 2, "2026-03-03"},
		{"UTC", time.Date(2026, 3, 1, 23, 30, 0, 0, time.UTC), time.Date(2026, 3, 3, 10, 0, 0, 0, time.UTC), 3, "2026-03-03"},
		{"America/Los_Angeles", time.Date(2026, 3, 2, 7, 30, 0, 0, time.UTC), time.Date(2026, 3, 4, 7, 30, 0, 0, time.UTC), 3, "2026-03-03"},
		// Across the change to summer time (29 March in Berlin): still days.
		// 00:30 CET to 23:30 CEST is 22 hours on one 23-hour day.
		{"Europe/Berlin", time.Date(2026, 3, 28, 23, 30, 0, 0, time.UTC), time.Date(2026, 3, 29, 21, 30, 0, 0, time.UTC), 1, "2026-03-29"},
	} {
		loc, err := time.LoadLocation(c.zone)
		if err != nil {
			t.Fatal(err)
		}
		m := Flow(FlowInput{Now: flowNow, Transitions: history(1, Steeping, c.start, Done, c.done)}, FlowOptions{Location: loc})
		if len(m.CycleTime.Items) != 1 || m.CycleTime.Items[0].Days != c.want || m.CycleTime.Items[0].DoneDay != c.doneDay {
			t.Errorf("%s: %+v, want %d days done %s", c.zone, m.CycleTime.Items, c.want, c.doneDay)
		}
		if m.TimeZone != c.zone {
			t.Errorf("time zone %q", m.TimeZone)
		}
	}
}

func TestFlowThroughputWeeks(t *testing.T) {
	// Monday weeks: the window 2026-01-16 (a Friday) .. 2026-04-15 (a
	// Wednesday) holds the partial week of Monday 12 January (3 days), 12
	// complete weeks from 19 January to 6 April, and the current week of 13
	// April (3 days so far). In the k-th complete week (k = 0..11) the team
	// finishes k issues on its Sunday at 23:00 local time (Berlin), which is
	// still that week although it is Monday in some zones (and on 29 March
	// 23:00 falls on a 23-hour day).
	loc, _ := time.LoadLocation("Europe/Berlin")
	var ts []Transition
	n := int64(1)
	ts = append(ts, history(1000, Diagnosis, day(loc, "2025-06-01", 9))...)
	monday := day(loc, "2026-01-19", 0)
	for k := range 12 {
		sunday := time.Date(2026, 1, 19+7*k+6, 23, 0, 0, 0, loc) // wall clock, whatever the day's length
		for range k {
			ts = append(ts, history(n, Steeping, sunday.AddDate(0, 0, -2), Done, sunday)...)
			n++
		}
	}
	// Two in the partial first week, one on the current Tuesday.
	ts = append(ts, history(n, Steeping, day(loc, "2026-01-10", 9), Done, day(loc, "2026-01-16", 9))...)
	ts = append(ts, history(n+1, Steeping, day(loc, "2026-01-10", 9), Done, day(loc, "2026-01-18", 23.5))...)
	ts = append(ts, history(n+2, Steeping, day(loc, "2026-04-10", 9), Done, day(loc, "2026-04-14", 9))...)
	m := Flow(FlowInput{Now: flowNow, Transitions: ts}, FlowOptions{Location: loc})
	weeks := m.Throughput.Weeks
	if len(weeks) != 14 {
		t.Fatalf("%d weeks: %+v", len(weeks), weeks)
	}
	if weeks[0] != (WeekCount{Start: "2026-01-12", Count: 2, Days: 3}) || weeks[13] != (WeekCount{Start: "2026-04-13", Count: 1, Days: 3}) {
		t.Fatalf("partial weeks %+v %+v", weeks[0], weeks[13])
	}
	for k, w := range weeks[1:13] {
		if w.Count != k || w.Days != 7 || w.Start != dayDate(localDay(monday, loc)+7*k) {
			t.Fatalf("week %d: %+v", k, w)
		}
	}
	// Complete weeks 0..11: nearest rank p10 = 2nd = 1, p50 = 6th = 5,
	// p90 = 11th = 10.
	want := Predictability{Weeks: 12, P10: 1, P50: 5, P90: 10, Ratio: 10}
	if m.Throughput.Predictability != want {
		t.Fatalf("predictability %+v, want %+v", m.Throughput.Predictability, want)
	}
}

func TestFlowPredictabilityWithEmptyWeeks(t *testing.T) {
	// Steady weeks give a ratio of 1; a project with weeks of nothing gets
	// no ratio.
	loc := time.UTC
	steady := history(1000, Diagnosis, day(loc, "2025-06-01", 9))
	sparse := slices.Clone(steady)
	monday := day(loc, "2026-01-19", 10)
	n := int64(1)
	for k := range 12 {
		for range 3 {
			steady = append(steady, history(n, Steeping, monday.AddDate(0, 0, 7*k), Done, monday.AddDate(0, 0, 7*k+1))...)
			n++
		}
		if k%2 == 0 {
			sparse = append(sparse, history(n, Steeping, monday.AddDate(0, 0, 7*k), Done, monday.AddDate(0, 0, 7*k+1))...)
			n++
		}
	}
	if p := Flow(FlowInput{Now: flowNow, Transitions: steady}, FlowOptions{}).Throughput.Predictability; p != (Predictability{Weeks: 12, P10: 3, P50: 3, P90: 3, Ratio: 1}) {
		t.Fatalf("steady: %+v", p)
	}
	if p := Flow(FlowInput{Now: flowNow, Transitions: sparse}, FlowOptions{}).Throughput.Predictability; p != (Predictability{Weeks: 12, P10: 0, P50: 0, P90: 1, Ratio: 0}) {
		t.Fatalf("sparse: %+v", p)
	}
}

func TestFlowWIPAndCFD(t *testing.T) {
	// Ten issues are filed on 2026-04-01 (diagnosis), triaged on 04-02;
	// issue k (1..10) starts on 04-03, goes to review on 04-(3+k/2) and is
	// done on 04-(4+k) if k <= 8. The window is the project's age: it begins
	// on its first day. A state's count on a day is read at the day's end.
	loc := time.UTC
	var ts []Transition
	for k := 1; k <= 10; k++ {
		steps := []any{Diagnosis, day(loc, "2026-04-01", 9), Triage, day(loc, "2026-04-02", 9), Steeping, day(loc, "2026-04-03", 9)}
		steps = append(steps, InReview, day(loc, "2026-04-03", 10).AddDate(0, 0, k/2))
		if k <= 8 {
			steps = append(steps, Done, day(loc, "2026-04-04", 15).AddDate(0, 0, k))
		}
		ts = append(ts, history(int64(k), steps...)...)
	}
	m := Flow(FlowInput{Now: flowNow, Transitions: ts}, FlowOptions{})
	if m.From != "2026-04-01" || len(m.CFD) != 15 || len(m.WIP) != 15 {
		t.Fatalf("window %s, %d CFD days, %d WIP days", m.From, len(m.CFD), len(m.WIP))
	}
	for i, c := range m.CFD {
		d := i + 1 // 1 April is day 1
		var want CFDDay
		want.Day = fmt.Sprintf("2026-04-%02d", d)
		for k := 1; k <= 10; k++ {
			switch {
			case d == 1:
				want.Diagnosis++
			case d == 2:
				want.Triage++
			case k <= 8 && d >= 4+k:
				want.Done++
			case d >= 3+k/2:
				want.InReview++
			default:
				want.Steeping++
			}
		}
		if c != want {
			t.Fatalf("CFD %s: %+v, want %+v", c.Day, c, want)
		}
		if m.WIP[i] != (DayCount{Day: want.Day, Count: want.Steeping + want.InReview}) {
			t.Fatalf("WIP %+v", m.WIP[i])
		}
	}
	if last := m.WIP[len(m.WIP)-1]; last.Count != 2 {
		t.Fatalf("WIP today %+v", last)
	}
}

func TestFlowAgeAndAging(t *testing.T) {
	// Twenty finished issues of 1..20 days (p50 10, p70 14, p85 17, p95 19)
	// and open work started k days ago, today counted as day one.
	loc := time.UTC
	var ts []Transition
	done := day(loc, "2026-04-10", 16)
	for k := 1; k <= 20; k++ {
		ts = append(ts, history(int64(k), Steeping, done.AddDate(0, 0, -(k-1)).Add(-6*time.Hour), Done, done)...)
	}
	open := []struct {
		number int64
		state  State
		age    int
		past   int
		aging  bool
	}{{101, Steeping, 1, 0, false}, {102, InReview, 10, 0, false}, {103, Steeping, 11, 50, false},
		{104, Steeping, 17, 70, false}, {105, InReview, 18, 85, true}, {106, Steeping, 40, 95, true}}
	for _, o := range open {
		start := day(loc, "2026-04-15", 8).AddDate(0, 0, -(o.age - 1))
		steps := []any{Triage, start.AddDate(0, 0, -1), Steeping, start}
		if o.state == InReview {
			steps = append(steps, InReview, start.Add(time.Hour))
		}
		ts = append(ts, history(o.number, steps...)...)
	}
	// Not started, or started and back in triage: no age.
	ts = append(ts, history(107, Triage, day(loc, "2026-01-01", 9))...)
	ts = append(ts, history(108, Steeping, day(loc, "2026-01-01", 9), Triage, day(loc, "2026-01-05", 9))...)
	m := Flow(FlowInput{Now: flowNow, Transitions: ts}, FlowOptions{})
	if len(m.Age) != len(open) {
		t.Fatalf("ages %+v", m.Age)
	}
	for k, o := range open { // m.Age is oldest first
		a := m.Age[len(open)-1-k]
		if a.Number != o.number || a.State != o.state || a.Days != o.age || a.Past != o.past || a.Aging != o.aging {
			t.Errorf("age %+v, want %+v", a, o)
		}
	}
	statuses := []IssueStatus{{Number: 104, State: Steeping}, {Number: 105, State: InReview}, {Number: 106, State: Steeping}, {Number: 3, State: Done}}
	MarkAging(statuses, m)
	if statuses[0].Aging || !statuses[1].Aging || !statuses[2].Aging || statuses[3].Aging {
		t.Fatalf("aging flags %+v", statuses)
	}
	if got := statuses[2].Why.Aging; !slices.Equal(got, []string{"age:40d since 2026-03-07", "sle:p85=17d of 20"}) {
		t.Fatalf("aging provenance %q", got)
	}

	// Too few finished issues: no SLE, nothing aging, ages still shown.
	few := append(history(1, Steeping, day(loc, "2026-04-01", 9), Done, day(loc, "2026-04-02", 9)), history(2, Steeping, day(loc, "2026-01-01", 9))...)
	m = Flow(FlowInput{Now: flowNow, Transitions: few}, FlowOptions{})
	if m.SLE.Days != 0 || len(m.Age) != 1 || m.Age[0].Aging || m.Age[0].Past != 95 {
		t.Fatalf("few samples: SLE %+v, age %+v", m.SLE, m.Age)
	}
}

// TestFlowAgreesWithDirectReading checks the metrics of random histories
// against a plain reading of every issue's transitions, day by day.
func TestFlowAgreesWithDirectReading(t *testing.T) {
	loc, _ := time.LoadLocation("America/New_York")
	states := []State{Diagnosis, Triage, Steeping, InReview, Done}
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 7))
		var ts []Transition
		discarded := map[int64]bool{}
		for n := int64(1); n <= 60; n++ {
			at := flowNow.Add(-time.Duration(r.IntN(200*24)) * time.Hour)
			var from State
			for range 1 + r.IntN(6) {
				if at.After(flowNow) {
					break
				}
				to := states[r.IntN(len(states))]
				if to == from {
					continue
				}
				ts = append(ts, Transition{Issue: n, From: from, To: to, At: at})
				from = to
				at = at.Add(time.Duration(1+r.IntN(20*24*60)) * time.Minute)
			}
			if from == Done && r.IntN(8) == 0 {
				discarded[n] = true
			}
		}
		r.Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
		m := Flow(FlowInput{Now: flowNow, Transitions: ts, Discarded: discarded}, FlowOptions{Location: loc, WindowDays: 60})

		endOf := func(date string) time.Time { return day(loc, date, 24) }
		stateAt := func(n int64, end time.Time) (State, bool) {
			var last Transition
			for _, t := range ts {
				if t.Issue == n && t.At.Before(end) && (last.At.IsZero() || !t.At.Before(last.At)) {
					last = t
				}
			}
			return last.To, !last.At.IsZero()
		}
		for _, c := range m.CFD {
			var want CFDDay
			want.Day = c.Day
			for n := int64(1); n <= 60; n++ {
				if s, ok := stateAt(n, endOf(c.Day)); ok && !discarded[n] {
					want.add(s, 1)
				}
			}
			if c != want {
				t.Fatalf("seed %d: CFD %+v, want %+v", seed, c, want)
			}
		}
		total := 0
		for _, w := range m.Throughput.Weeks {
			total += w.Count
		}
		if total != len(m.CycleTime.Items)+m.CycleTime.Unstarted {
			t.Fatalf("seed %d: throughput %d, cycle items %d + unstarted %d", seed, total, len(m.CycleTime.Items), m.CycleTime.Unstarted)
		}
	}
}
