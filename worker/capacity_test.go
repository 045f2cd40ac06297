package worker

import (
	"testing"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
)

func TestWithCapacity(t *testing.T) {
	t.Parallel()
	def := scheduler.Calendar{HoursPerDay: 6, WorkingDays: [7]bool{false, true, true, true, true, true, false}}
	configured := []scheduler.Person{{Login: "alice", Calendar: def}, {Login: "bob"}}
	four := 4.0
	caps := []store.Capacity{
		{Login: "Alice", HoursPerDay: &four},
		{Login: "bob", TimeOff: []store.DateSpan{{From: "2026-12-24", To: "2026-12-31"}, {From: "bad", To: "2027-01-01"}}},
		{Login: "dana", HoursPerDay: &four},
	}
	got := withCapacity(configured, scheduler.Calendar{}, caps)
	if len(got) != 3 || got[0].Calendar.HoursPerDay != 4 {
		t.Fatalf("people = %+v", got)
	}
	// Bob had the zero (default) calendar: he keeps default hours and
	// gets the valid time off, which buildModel does not replace.
	if got[1].Calendar.HoursPerDay != scheduler.DefaultHoursPerDay || len(got[1].Calendar.TimeOff) != 1 ||
		!got[1].Calendar.TimeOff[0].From.Equal(time.Date(2026, 12, 24, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("bob = %+v", got[1])
	}
	if got[2].Login != "dana" || got[2].Calendar.HoursPerDay != 4 {
		t.Fatalf("dana = %+v", got[2])
	}
	// The configured people are untouched.
	if configured[0].Calendar.HoursPerDay != 6 || len(configured[1].Calendar.TimeOff) != 0 {
		t.Fatalf("configured changed: %+v", configured)
	}
	if same := withCapacity(configured, def, nil); len(same) != 2 {
		t.Fatalf("no capacity: %+v", same)
	}
	if _, err := ParseDateSpan(store.DateSpan{From: "2027-01-02", To: "2027-01-01"}, nil); err == nil {
		t.Fatal("a backwards span parsed")
	}
}
