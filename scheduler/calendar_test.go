package scheduler

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func date(y int, m time.Month, d, h, min int, loc *time.Location) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, loc)
}

func TestCalendarDefaults(t *testing.T) {
	// Tue Dec 1 2026, 10:00 UTC; the default day is 09:00–15:00 Mon–Fri.
	start := date(2026, 12, 1, 10, 0, time.UTC)
	cases := []struct {
		h    float64
		want time.Time
	}{
		{0, start},
		{5, date(2026, 12, 1, 15, 0, time.UTC)}, // ends the day, not the next morning
		{5.5, date(2026, 12, 2, 9, 30, time.UTC)},
		{5 + 6*3 + 1, date(2026, 12, 7, 10, 0, time.UTC)}, // over the weekend
	}
	for _, c := range cases {
		if got := AddWorkingHours(Calendar{}, start, c.h); !got.Equal(c.want) {
			t.Errorf("AddWorkingHours(%v) = %v, want %v", c.h, got, c.want)
		}
		if got := WorkingHoursBetween(Calendar{}, start, c.want); math.Abs(got-c.h) > 1e-9 {
			t.Errorf("WorkingHoursBetween(..%v) = %v, want %v", c.want, got, c.h)
		}
	}
	if d := WorkingDaysBetween(Calendar{}, date(2026, 12, 4, 9, 0, time.UTC), date(2026, 12, 1, 9, 0, time.UTC)); d != -3 {
		t.Errorf("backwards working days %v, want -3", d)
	}
}

func TestCalendarZoneHolidaysTimeOff(t *testing.T) {
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	cal := Calendar{
		HoursPerDay: 4, Location: tokyo,
		Holidays: []time.Time{date(2026, 12, 2, 0, 0, time.UTC)},
		TimeOff:  []DateRange{{From: date(2026, 12, 3, 0, 0, time.UTC), To: date(2026, 12, 4, 0, 0, time.UTC)}},
	}
	// Tue Dec 1 09:00 Tokyo is 00:00 UTC; 4 h a day; Wed is a holiday,
	// Thu-Fri off: 6 h from Tuesday's start ends Monday 11:00 Tokyo.
	got := AddWorkingHours(cal, date(2026, 12, 1, 0, 0, time.UTC), 6)
	if want := date(2026, 12, 7, 11, 0, tokyo); !got.Equal(want) {
		t.Errorf("got %v, want %v", got.In(tokyo), want)
	}
}

// The kernel's precomputed timelines agree with the day-by-day walk.
func TestTimelineMatchesCalendar(t *testing.T) {
	in := genProject(11, genSpec{people: 7})
	r := rand.New(rand.NewPCG(1, 1))
	origin := genNow
	for _, p := range in.People {
		tl := newTimeline(p.Calendar, origin, 400)
		u0 := tl.working(0)
		for range 200 {
			h := r.Float64() * 800
			// Working coordinate → wall clock → back.
			wall := tl.finishAt(u0 + h)
			if got := tl.working(wall); math.Abs(got-(u0+h)) > 1e-6 {
				t.Fatalf("%s: working(finishAt(%v)) = %v", p.Login, u0+h, got)
			}
			want := AddWorkingHours(p.Calendar, origin, h)
			if got := origin.Add(time.Duration(wall * float64(time.Hour))); got.Sub(want).Abs() > time.Second {
				t.Fatalf("%s: %v hours: timeline %v, calendar %v", p.Login, h, got, want)
			}
			if s := tl.startAt(u0 + h); s < wall-1e-9 {
				t.Fatalf("start before finish at the same coordinate")
			}
		}
	}
}

// Past the horizon the timeline extrapolates monotonically.
func TestTimelineBeyondHorizon(t *testing.T) {
	tl := newTimeline(Calendar{}, genNow, 10)
	prev := -1.0
	for u := 0.0; u < 500; u += 0.7 {
		w := tl.finishAt(u)
		if w < prev {
			t.Fatalf("finishAt not monotone at %v", u)
		}
		prev = w
		if got := tl.working(w); math.Abs(got-u) > 1e-6 && u > tl.working(0) {
			t.Fatalf("round trip at %v: %v", u, got)
		}
	}
}

// working's two-step lookup equals the plain scan bit for bit, at random
// hours and exactly on window boundaries, across time zones that change
// their clocks, days of up to 24 hours, holidays and time off.
func TestTimelineWorkingEqualsScan(t *testing.T) {
	in := genProject(12, genSpec{people: 9})
	cals := []Calendar{{}, {HoursPerDay: 24}, {HoursPerDay: 23.5}, {HoursPerDay: 0.3}}
	for _, name := range []string{"America/St_Johns", "Australia/Lord_Howe", "Europe/Berlin", "Asia/Kathmandu"} {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		cals = append(cals, Calendar{Location: loc, HoursPerDay: 7.3}, Calendar{Location: loc, HoursPerDay: 24})
	}
	for _, p := range in.People {
		cals = append(cals, p.Calendar)
	}
	r := rand.New(rand.NewPCG(2, 2))
	for i, c := range cals {
		tl := newTimeline(c, genNow, 800)
		hours := []float64{0, 1e-12}
		for _, e := range tl.ends[:len(tl.starts)] {
			hours = append(hours, e, math.Nextafter(e, 0), math.Nextafter(e, math.Inf(1)))
		}
		for _, s := range tl.starts {
			hours = append(hours, max(0, s), math.Nextafter(max(0, s), math.Inf(1)))
		}
		for range 5000 {
			hours = append(hours, r.Float64()*900*24)
		}
		for _, h := range hours {
			if got, want := tl.working(h), tl.workingScan(h); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("calendar %d: working(%v) = %v, scan %v", i, h, got, want)
			}
		}
	}
}
