package scheduler

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// exact is a calibration with next to no spread: every issue takes its
// nominal hours, so the schedule's answers are known.
var exact = Calibration{GlobalMultiplier: 1, Sigma: 1e-9}

func TestDoneByKnownSchedules(t *testing.T) {
	monday := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC) // a Monday, 09:00 UTC
	xs := func(n int64, who string, deps ...int64) Issue {
		return Issue{Number: n, State: Steeping, Estimate: SizeXS, Priority: 2, Assignee: who, DependsOn: deps}
	}
	tuesday := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		people []Person
		issues []Issue
		want   []int // done by the end of each day from Monday
	}{
		{
			// Six 1-hour issues a 6-hour day, Monday to Friday.
			name:   "one person",
			people: []Person{{Login: "a"}},
			issues: func() []Issue {
				var out []Issue
				for n := int64(1); n <= 20; n++ {
					out = append(out, xs(n, "a"))
				}
				return out
			}(),
			want: []int{6, 12, 18, 20, 20, 20, 20, 20},
		},
		{
			name:   "two people in parallel",
			people: []Person{{Login: "a"}, {Login: "b"}},
			issues: []Issue{xs(1, "a"), xs(2, "a"), xs(3, "a"), xs(4, "a"), xs(5, "a"), xs(6, "a"),
				xs(7, "b"), xs(8, "b"), xs(9, "b"), xs(10, "b"), xs(11, "b"), xs(12, "b")},
			want: []int{12, 12, 12},
		},
		{
			// b's work waits for a's last issue, done at 15:00 when b's day
			// is over: b works it on Tuesday.
			name:   "dependencies",
			people: []Person{{Login: "a"}, {Login: "b"}},
			issues: []Issue{xs(1, "a"), xs(2, "a"), xs(3, "a"), xs(4, "a"), xs(5, "a"), xs(6, "a"),
				xs(7, "b", 6), xs(8, "b"), xs(9, "b"), xs(10, "b"), xs(11, "b"), xs(12, "b")},
			want: []int{6, 12, 12},
		},
		{
			// Tuesday is b's holiday.
			name:   "calendars",
			people: []Person{{Login: "a"}, {Login: "b", Calendar: Calendar{Holidays: []time.Time{tuesday}}}},
			issues: []Issue{xs(1, "a"), xs(2, "a"), xs(3, "a"), xs(4, "a"), xs(5, "a"), xs(6, "a"),
				xs(7, "b", 6), xs(8, "b"), xs(9, "b"), xs(10, "b"), xs(11, "b"), xs(12, "b")},
			want: []int{6, 6, 12},
		},
		{
			// An unschedulable issue is never done.
			name:   "unschedulable",
			people: []Person{{Login: "a"}},
			issues: []Issue{xs(1, "a"), xs(2, "a", 99)},
			want:   []int{1, 1},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := Input{Now: monday, People: c.people, Issues: c.issues, Calibration: exact}
			f, d, err := RunDoneBy(in, Options{Trials: 200, Seed: 3}, DoneByOptions{Days: len(c.want)})
			if err != nil {
				t.Fatal(err)
			}
			for _, got := range [][]int{d.AtLeast50, d.AtLeast80, d.AtLeast90} {
				if !slices.Equal(got, c.want) {
					t.Fatalf("done by day: %v, want %v", got, c.want)
				}
			}
			if d.From != "2026-03-02" || d.Open != len(c.issues) || d.Trials != 200 || len(f.Issues) != len(c.issues) {
				t.Fatalf("curve %+v", d)
			}
		})
	}
}

func TestDoneByLocalDays(t *testing.T) {
	// In Auckland, 09:00 UTC on Monday is 22:00: today ends in two hours,
	// when the person (working 09:00-15:00 UTC) has finished two issues;
	// Tuesday there runs to 11:00 UTC on Tuesday.
	auckland, _ := time.LoadLocation("Pacific/Auckland")
	in := Input{Now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), People: []Person{{Login: "a"}}, Calibration: exact}
	for n := int64(1); n <= 8; n++ {
		in.Issues = append(in.Issues, Issue{Number: n, State: Steeping, Estimate: SizeXS, Assignee: "a"})
	}
	_, d, err := RunDoneBy(in, Options{Trials: 64, Seed: 1}, DoneByOptions{Days: 3, Location: auckland})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.AtLeast80, []int{2, 8, 8}) || d.From != "2026-03-02" || d.TimeZone != "Pacific/Auckland" {
		t.Fatalf("Auckland: %+v", d)
	}
	if p, ok := d.On("2026-03-03"); !ok || p.AtLeast80 != 8 {
		t.Fatalf("On: %+v %v", p, ok)
	}
	if _, ok := d.On("2026-03-05"); ok {
		t.Fatal("a date beyond the horizon answered")
	}
	if _, ok := d.On("2026-03-01"); ok {
		t.Fatal("a date before today answered")
	}
	if d.Last() != "2026-03-04" {
		t.Fatalf("last day %s", d.Last())
	}
}

// TestDoneByMatchesTrials reads the curve straight from every trial's
// schedule and compares it with the counted one; the forecast itself is
// the one Run gives.
func TestDoneByMatchesTrials(t *testing.T) {
	in := genProject(11, genSpec{issues: 120, people: 6, milestones: 3, depFrac: 0.4, unassignedFrac: 0.3, missingEstFrac: 0.1, steepingFrac: 0.3})
	loc, _ := time.LoadLocation("America/New_York")
	const trials = 300
	opts := Options{Trials: trials, Seed: 42, Workers: 3}
	do := DoneByOptions{Days: 60, Location: loc}
	f, d, err := RunDoneBy(in, opts, do)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(f)
	b, _ := json.Marshal(mustRun(t, in, opts))
	if !bytes.Equal(a, b) {
		t.Fatal("RunDoneBy's forecast differs from Run's")
	}

	p, err := newPlan(in, Options{Trials: trials, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	days := newDoneByDays(in.Now, do)
	counts := make([][]int, do.Days) // per day, per trial
	for trial := range trials {
		placed := p.traceTrial(trial)
		for k := range do.Days {
			end := time.Date(2026, 12, 1+k+1, 0, 0, 0, 0, loc).Sub(in.Now).Hours()
			if end != days.end[k] {
				t.Fatalf("day %d ends at %v, want %v", k, days.end[k], end)
			}
			n := 0
			for _, it := range placed {
				if it.fin <= end {
					n++
				}
			}
			counts[k] = append(counts[k], n)
		}
	}
	for k := range do.Days {
		c := slices.Clone(counts[k])
		slices.Sort(c)
		// At least 80%: the largest n that 240 of the 300 trials reach is
		// the 61st smallest count.
		want := [3]int{c[trials-150], c[trials-240], c[trials-270]}
		if got := [3]int{d.AtLeast50[k], d.AtLeast80[k], d.AtLeast90[k]}; got != want {
			t.Fatalf("day %d: %v, want %v", k, got, want)
		}
	}
	if d.AtLeast90[do.Days-1] == 0 || d.AtLeast50[do.Days-1] < d.AtLeast90[do.Days-1] {
		t.Fatalf("curve never rises or is out of order: %+v", d)
	}
}

func TestBaselineDoneBy(t *testing.T) {
	// Seven a week, every week: one a day, the j-th exactly j days from now.
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	d, err := BaselineDoneBy([]int{7, 7, 7}, 10, now, DoneByOptions{Days: 14}, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10}
	if !slices.Equal(d.AtLeast50, want) || !slices.Equal(d.AtLeast90, want) {
		t.Fatalf("steady baseline %v / %v, want %v", d.AtLeast50, d.AtLeast90, want)
	}
	// A week of 14 three times in four, else none: by the end of day 6 (6
	// days and 15 hours from now, the 13th of the week's 14 is done at 6.5
	// days) 13 with 75% probability, 0 otherwise.
	d, err = BaselineDoneBy([]int{0, 14, 14, 14}, 100, now, DoneByOptions{Days: 7}, 4000, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d.AtLeast50[6] != 13 || d.AtLeast80[6] != 0 || d.AtLeast90[6] != 0 {
		t.Fatalf("day 6: %d %d %d", d.AtLeast50[6], d.AtLeast80[6], d.AtLeast90[6])
	}
	if _, err := BaselineDoneBy(nil, 10, now, DoneByOptions{}, 100, 1); err == nil {
		t.Fatal("no weeks, no error")
	}
}

// TestDoneByCountsTheFirstTrials: a forecast of more trials counts its
// curve on the first DoneByTrials, the same ones a forecast of exactly
// that many runs.
func TestDoneByCountsTheFirstTrials(t *testing.T) {
	in := genProject(5, genSpec{issues: 40, people: 4, milestones: 2, depFrac: 0.3, unassignedFrac: 0.2})
	do := DoneByOptions{Days: 120}
	_, many, err := RunDoneBy(in, Options{Trials: DoneByTrials + 1000, Seed: 9}, do)
	if err != nil {
		t.Fatal(err)
	}
	_, exactly, err := RunDoneBy(in, Options{Trials: DoneByTrials, Seed: 9, Workers: 1}, do)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(many)
	b, _ := json.Marshal(exactly)
	if !bytes.Equal(a, b) || many.Trials != DoneByTrials {
		t.Fatalf("curves differ:\n%s\n%s", a, b)
	}
}
