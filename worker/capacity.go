package worker

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
)

// Capacity calendar: capacity directives write CommiTea's own calendar
// (store.Capacity), never Gitea. The recompute and the what-if overlay it on
// the configured team: hours per day replace the person's, time off adds to
// theirs, and someone not configured joins on the default calendar.

// withCapacity returns the configured people with the capacity calendar
// laid over them. configured is not modified.
func withCapacity(configured []scheduler.Person, def scheduler.Calendar, caps []store.Capacity) []scheduler.Person {
	if len(caps) == 0 {
		return configured
	}
	people := make([]scheduler.Person, len(configured))
	for i, p := range configured {
		p.Calendar.Holidays = slices.Clone(p.Calendar.Holidays)
		p.Calendar.TimeOff = slices.Clone(p.Calendar.TimeOff)
		people[i] = p
	}
	for _, c := range caps {
		k := slices.IndexFunc(people, func(p scheduler.Person) bool { return strings.EqualFold(p.Login, c.Login) })
		if k < 0 {
			cal := def
			cal.Holidays = slices.Clone(def.Holidays)
			cal.TimeOff = slices.Clone(def.TimeOff)
			people = append(people, scheduler.Person{Login: c.Login, Calendar: cal})
			k = len(people) - 1
		}
		cal := &people[k].Calendar
		if cal.HoursPerDay == 0 {
			// The zero calendar stands for the default; fill it in before
			// changing one part of it.
			*cal = def
			cal.Holidays = slices.Clone(def.Holidays)
			cal.TimeOff = slices.Clone(def.TimeOff)
		}
		if c.HoursPerDay != nil {
			cal.HoursPerDay = *c.HoursPerDay
		}
		if cal.HoursPerDay == 0 {
			// buildModel replaces a calendar without hours by the default
			// one, which would drop the time off just added.
			cal.HoursPerDay = scheduler.DefaultHoursPerDay
		}
		for _, s := range c.TimeOff {
			if r, err := ParseDateSpan(s, cal.Location); err == nil {
				cal.TimeOff = append(cal.TimeOff, r)
			}
		}
	}
	return people
}

// ParseDateSpan reads an inclusive "YYYY-MM-DD" range in loc (UTC when nil).
func ParseDateSpan(s store.DateSpan, loc *time.Location) (scheduler.DateRange, error) {
	if loc == nil {
		loc = time.UTC
	}
	from, err := time.ParseInLocation(time.DateOnly, s.From, loc)
	if err != nil {
		return scheduler.DateRange{}, fmt.Errorf("from %q is not a YYYY-MM-DD date", s.From)
	}
	to, err := time.ParseInLocation(time.DateOnly, s.To, loc)
	if err != nil {
		return scheduler.DateRange{}, fmt.Errorf("to %q is not a YYYY-MM-DD date", s.To)
	}
	if to.Before(from) {
		return scheduler.DateRange{}, fmt.Errorf("to %s is before from %s", s.To, s.From)
	}
	return scheduler.DateRange{From: from, To: to}, nil
}

// TeamCalendars is the configured team with the capacity calendar laid
// over it, as the forecast schedules it: what the dashboard's people page
// shows of each person's week and time off.
func TeamCalendars(configured []scheduler.Person, def scheduler.Calendar, caps []store.Capacity) []scheduler.Person {
	return withCapacity(configured, def, caps)
}
