package prose

import (
	"errors"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	data := map[string]any{
		"day":       "2026-12-01",
		"milestone": "v1.0",
		"p50":       time.Date(2026, 12, 14, 23, 30, 0, 0, time.UTC), // 15 Dec in Berlin
		"moved":     2.46,
		"pDue":      0.853,
		"issues":    []int64{12, 1500},
		"who":       "dev03",
		"clock":     "09:00",
	}
	f, err := FactsOf(berlin, data)
	if err != nil {
		t.Fatal(err)
	}
	good := []string{
		"Standup for 2026-12-01: v1.0 slipped 2.5 working days to 2026-12-15.",
		"v1.0 now lands Dec 14 (p50), 85% likely on time; #12 and #1500 added.",
		"dev03 works on #1,500. It moved by about 2 days, on 15 December 2026.",
		"Tuesday's standup at 09:00 says 12/15 or 14/12; +2.46 days; 12.",
		"Nothing moved.",
	}
	for _, s := range good {
		if err := Check(s, f); err != nil {
			t.Errorf("Check(%q) = %v, want nil", s, err)
		}
	}
	bad := map[string]string{
		"v1.0 now lands 2026-12-18.":             "2026-12-18",
		"v1.0 now lands Dec 20.":                 "Dec 20",
		"It slipped 3 working days.":             "3",
		"It is 90% likely.":                      "90%",
		"Issue #13 was added.":                   "13",
		"Expect it by Friday.":                   "Friday",
		"four issues were added":                 "four",
		"The meeting is at 10:30.":               "10:30",
		"It slipped 2.4 days.":                   "2.4",
		"Due 1/3/2027.":                          "1/3/2027",
		"It lands on the 20th of December 2026.": "20th of December 2026",
	}
	for s, want := range bad {
		err := Check(s, f)
		var ue *UngroundedError
		if !errors.As(err, &ue) {
			t.Errorf("Check(%q) = %v, want an UngroundedError", s, err)
			continue
		}
		if len(ue.Tokens) != 1 || ue.Tokens[0] != want {
			t.Errorf("Check(%q) flagged %q, want [%q]", s, ue.Tokens, want)
		}
	}
}

// Relative dates are read from the day SetToday gives: "tomorrow" needs a
// date of the data on the next day, "next week" one in the next Monday to
// Sunday week, and so on. Without an anchor they pass as before.
func TestCheckRelativeDates(t *testing.T) {
	data := map[string]any{
		"due":   "2026-12-02", // Wednesday, the day after today
		"p80":   "2026-12-09", // the next week
		"later": "2027-01-05", // next month
	}
	f, err := FactsOf(nil, data)
	if err != nil {
		t.Fatal(err)
	}
	unanchored := []string{"It lands tomorrow.", "Due last month."}
	for _, s := range unanchored {
		if err := Check(s, f); err != nil {
			t.Errorf("without SetToday, Check(%q) = %v, want nil", s, err)
		}
	}
	f.SetToday(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)) // a Tuesday
	good := []string{
		"It is due tomorrow, and p80 is next week.",
		"This week holds the due date.",
		"Today nothing moved; the last piece lands next month.",
		"This month has the due date.",
		"Tomorrow.",
	}
	for _, s := range good {
		if err := Check(s, f); err != nil {
			t.Errorf("Check(%q) = %v, want nil", s, err)
		}
	}
	bad := map[string]string{
		"It slipped last week.":    "last week",
		"It was due last month.":   "last month",
		"It was closed yesterday.": "yesterday",
	}
	for s, want := range bad {
		var ue *UngroundedError
		if err := Check(s, f); !errors.As(err, &ue) || ue.Tokens[0] != want {
			t.Errorf("Check(%q) = %v, want %q ungrounded", s, err, want)
		}
	}
	// Across a year end: 2026-12-31's next month is January 2027.
	g, _ := FactsOf(nil, map[string]any{"d": "2027-01-20"})
	g.SetToday(time.Date(2026, 12, 31, 12, 0, 0, 0, time.UTC))
	if err := Check("It lands next month, not tomorrow.", g); err == nil {
		t.Error("tomorrow (2027-01-01) is not in the data, want an error")
	}
	if err := Check("It lands next month.", g); err != nil {
		t.Errorf("next month from 2026-12-31: %v", err)
	}
}
