package standup

import (
	"time"

	"github.com/commitea/commitea/scheduler"
)

// Schedule fires at a local time of day on the working days of a calendar,
// skipping its holidays. It is a river.PeriodicSchedule.
type Schedule struct {
	Hour, Minute int
	Location     *time.Location
	// Calendar gives the working weekdays and holidays; its own time zone
	// is not used, the standup's Location is.
	Calendar scheduler.Calendar
}

// Next returns the first standup time strictly after t.
func (s Schedule) Next(t time.Time) time.Time {
	loc := s.Location
	if loc == nil {
		loc = time.UTC
	}
	l := t.In(loc)
	for i := 0; i < 366*2; i++ {
		d := time.Date(l.Year(), l.Month(), l.Day()+i, s.Hour, s.Minute, 0, 0, loc)
		if d.After(t) && IsWorkingDay(s.Calendar, d, loc) {
			return d
		}
	}
	// A calendar that works no day at all: never fire.
	return t.AddDate(100, 0, 0)
}

// IsWorkingDay reports whether the local date of t in loc is a working day
// of cal: one of its weekdays (Monday to Friday when none is set) and not
// one of its holidays.
func IsWorkingDay(cal scheduler.Calendar, t time.Time, loc *time.Location) bool {
	if loc == nil {
		loc = time.UTC
	}
	l := t.In(loc)
	days := cal.WorkingDays
	anySet := false
	for _, d := range days {
		anySet = anySet || d
	}
	if !anySet {
		for d := time.Monday; d <= time.Friday; d++ {
			days[d] = true
		}
	}
	if !days[l.Weekday()] {
		return false
	}
	y, m, d := l.Date()
	for _, h := range cal.Holidays {
		hy, hm, hd := h.Date()
		if hy == y && hm == m && hd == d {
			return false
		}
	}
	return true
}

// DayOf returns the local date of t in loc as midnight UTC, the form a
// Postgres date column round-trips.
func DayOf(t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// PreviousWorkingDay returns the local working day before the one t falls
// on, at the same clock time.
func PreviousWorkingDay(cal scheduler.Calendar, t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	l := t.In(loc)
	for i := 1; i < 366; i++ {
		d := time.Date(l.Year(), l.Month(), l.Day()-i, l.Hour(), l.Minute(), l.Second(), 0, loc)
		if IsWorkingDay(cal, d, loc) {
			return d
		}
	}
	return l.AddDate(0, 0, -1)
}
