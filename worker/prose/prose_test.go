package prose

import (
	"errors"
	"testing"
	"time"
)

// The forms the scanner reads, against data with no subjects: every value
// belongs to the whole.
func TestCheckFormats(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	data := map[string]any{
		"day":   "2026-12-01",
		"name":  "v1.0",
		"at":    time.Date(2026, 12, 14, 23, 30, 0, 0, time.UTC), // 15 Dec in Berlin
		"moved": 2.46,
		"share": 0.853,
		"refs":  []int64{12, 1500},
		"label": "dev03",
		"clock": "09:00",
	}
	f, err := FactsOf(berlin, data)
	if err != nil {
		t.Fatal(err)
	}
	good := []string{
		"Standup for 2026-12-01: v1.0 moved 2.5 to 2026-12-15.",
		"v1.0 now lands Dec 15, 85%; 12 and 1,500 added.",
		"dev03 works on 1,500. It moved by about 2, on 15 December 2026.",
		"Tuesday's standup at 09:00 says 12/15 or 15/12; +2.46; 12.",
		"Nothing moved.",
	}
	for _, s := range good {
		if err := Check(s, f); err != nil {
			t.Errorf("Check(%q) = %v, want nil", s, err)
		}
	}
	bad := map[string]string{
		"v1.0 now lands 2026-12-18.": "2026-12-18",
		"v1.0 now lands Dec 20.":     "Dec 20",
		// The UTC date of a timestamp is not its date in the standup's
		// time zone.
		"It lands Dec 14.":                       "Dec 14",
		"It moved 3.":                            "3",
		"It is 90% likely.":                      "90%",
		"Issue #13 was added.":                   "#13",
		"Expect it by Friday.":                   "Friday",
		"four issues were added":                 "four",
		"The meeting is at 10:30.":               "10:30",
		"It moved 2.4.":                          "2.4",
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
// date on the next day, "next week" one in the next Monday to Sunday week,
// and so on. Without an anchor they pass.
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
		"It closed last week.":     "last week",
		"It was due last month.":   "last month",
		"It was closed yesterday.": "yesterday",
		"p80 is tomorrow.":         "tomorrow", // tomorrow is the due date, not the p80
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

// report is a small standup: two milestones, two people, a stale blocker
// and a drift with its causes, as the standup package's report carries
// them.
func report() map[string]any {
	return map[string]any{
		"project": "acme/app", "day": "2026-12-01", "weekday": "Tuesday", "since": "2026-11-30",
		"milestones": []any{
			map[string]any{"milestone": 1, "title": "v1.0 Launch", "due": "2026-12-10", "p50": "2026-12-16", "p80": "2026-12-22", "pDue": 0.2, "slack": -8, "open": 12},
			map[string]any{"milestone": 2, "title": "Beta 2", "due": "2027-01-29", "p50": "2027-01-08", "p80": "2027-01-15", "pDue": 0.95, "slack": 10, "open": 5},
		},
		"drift": []any{map[string]any{"milestone": 1, "title": "v1.0 Launch", "due": "2026-12-10",
			"p50Before": "2026-12-14", "p50After": "2026-12-16", "p80Before": "2026-12-21", "p80After": "2026-12-22", "p50Days": 2, "p80Days": 1,
			"causes": []any{
				map[string]any{"kind": "scope_added", "issues": []int64{20, 21}, "hours": 11},
				map[string]any{"kind": "reestimated", "hours": 12, "reestimates": []any{map[string]any{"issue": 11, "from": "s", "to": "l"}}},
				map[string]any{"kind": "no_progress", "workingDays": 2.5},
			}}},
		"plan": []any{
			map[string]any{"login": "bruno", "now": []any{map[string]any{"number": 432, "title": "Checkout flow", "p50": "2026-12-03"}},
				"next": []any{map[string]any{"number": 440, "title": "Refund emails", "p50": "2026-12-08"}}, "moreNow": 2},
			map[string]any{"login": "amara", "now": []any{map[string]any{"number": 471, "title": "Payment retries", "p50": "2026-12-02"}}},
		},
		"staleBlockers": []any{map[string]any{"number": 471, "title": "Payment retries", "assignee": "amara", "state": "steeping",
			"idleDays": 4.5, "blocks": []int64{13, 14}, "blocksCount": 4}},
	}
}

func reportFacts(t *testing.T) *Facts {
	t.Helper()
	f, err := FactsOf(time.UTC, report())
	if err != nil {
		t.Fatal(err)
	}
	f.SetToday(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	return f
}

// Claims are values of the subject they are said of, not of anything in
// the data.
func TestCheckBindsClaimsToSubjects(t *testing.T) {
	f := reportFacts(t)
	good := []string{
		"Bruno finishes #432 on Thursday.",
		"Tomorrow Amara finishes #471.",
		"Bruno is on #432 for the v1.0 Launch (likely done 2026-12-03).",
		"v1.0 Launch has 12 open issues and Beta 2 has 5.",
		"v1.0 Launch (due 2026-12-10): p50 2026-12-14 -> 2026-12-16 (+2 working days), p80 2026-12-21 -> 2026-12-22 (+1 working day)",
		"Since 2026-11-30, v1.0 slipped 2 working days to Dec 16 because #20 and #21 were added (11 h nominal).",
		"v1.0 Launch moved: #11 est/s -> est/l (+12 h nominal). No progress for 2.5 working days.",
		"#471 Payment retries (amara, steeping): idle 4.5 working days, blocks #13, #14 and 2 more",
		"Bruno has 2 more in progress. His next is #440, expected Dec 8.",
		"Amara picked up #471. It should be done tomorrow.",
		"v1.0 Launch is at risk; everything else is on track.",
		"v1.0 Launch is late, at a 20% chance; Beta 2 is ahead of schedule.",
		"v1.0 Launch is about one week late.",
		"There is 1 stale blocker.",
		"v1.0 Launch slipped 2 working days to Dec 16 and its p80 1 working day to Dec 22.",
		"v1.0 Launch has 12 open issues.",
	}
	for _, s := range good {
		if err := Check(s, f); err != nil {
			t.Errorf("Check(%q) = %v, want nil", s, err)
		}
	}
	bad := map[string]string{
		"Bruno finishes #432 tomorrow.":                              "tomorrow",   // #471's date
		"v1.0 Launch has 5 open issues.":                             "5",          // Beta 2's count
		"Beta 2 is at a 20% chance.":                                 "20%",        // v1.0's
		"#440 lands Dec 3.":                                          "Dec 3",      // #432's
		"v1.0 Launch now lands 2026-12-14 at p50.":                   "2026-12-14", // its p50 before the move
		"v1.0 Launch lands 2026-12-22 (p50).":                        "2026-12-22", // its p80
		"#471 has been idle for 2.5 working days.":                   "2.5",        // v1.0's no-progress time
		"Beta 2 slipped 2 working days.":                             "slipped",    // Beta 2 did not move
		"All work is on track.":                                      "on track",
		"Beta 2 is at risk.":                                         "at risk",
		"v1.0 Launch is three weeks late.":                           "three weeks late",
		"v1.0 Launch is not late.":                                   "late",
		"There are 3 stale blockers.":                                "3",
		"#471 blocks #13, #14 and 3 more.":                           "3",
		"Bruno also fixed #999.":                                     "#999",
		"v1.0 Launch is on track. It has 5 open issues.":             "on track",
		"Amara is on #471 for the v1.0 Launch (likely done Dec 16).": "Dec 16", // the Launch's p50, not #471's
	}
	for s, want := range bad {
		err := Check(s, f)
		var ue *UngroundedError
		if !errors.As(err, &ue) {
			t.Errorf("Check(%q) = %v, want %q refused", s, err, want)
			continue
		}
		if ue.Tokens[0] != want {
			t.Errorf("Check(%q) refused %q, want %q first", s, ue.Tokens, want)
		}
	}
}

// Names of the project are names, not claims; a milestone whose title
// starts with a version is also called by it.
func TestCheckNamesAreNotClaims(t *testing.T) {
	f := reportFacts(t)
	f.AddNames(Names{Issues: map[int64]string{77: "Upgrade to Go 1.26"}, Milestones: []string{"2027.03 release"}, People: []string{"dev03"}})
	for _, s := range []string{
		"dev03 picked up Upgrade to Go 1.26 (#77) for the 2027.03 release.",
		"v1.0 is at risk.",
		"Since Nov 30, 2027.03 release has not been planned.",
	} {
		if err := Check(s, f); err != nil {
			t.Errorf("Check(%q) = %v, want nil", s, err)
		}
	}
	if err := Check("2027.03 release lands Dec 16.", f); err == nil {
		t.Error("a date said of a milestone known only by name passed")
	}
}

func TestMissing(t *testing.T) {
	f := reportFacts(t)
	refs := f.Subjects()
	text := "v1.0 Launch slipped; Bruno has #432 and Refund emails; amara is stuck on #471. Beta 2 is fine."
	if miss := f.Missing(text, refs); len(miss) != 0 {
		t.Errorf("Missing = %v, want none (subjects %v)", miss, refs)
	}
	miss := f.Missing("v1.0 Launch slipped.", refs)
	var got []string
	for _, r := range miss {
		got = append(got, r.String())
	}
	want := []string{"Beta 2", "@bruno", "#440", "#432", "@amara", "#471"}
	if len(got) != len(want) {
		t.Fatalf("Missing = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Missing = %v, want %v", got, want)
			break
		}
	}
}

func TestReasons(t *testing.T) {
	f := reportFacts(t)
	for text, want := range map[string]string{
		"Bruno finishes #432 tomorrow.":  ReasonWrongSubject,
		"Bruno finishes #432 on Dec 25.": ReasonUngrounded,
		"Beta 2 is late.":                ReasonStatus,
		"Bruno fixed #999.":              ReasonUnknownIssue,
	} {
		var ue *UngroundedError
		if err := Check(text, f); !errors.As(err, &ue) || ue.Reason() != want {
			t.Errorf("Check(%q) = %v, want reason %s", text, err, want)
		}
	}
}
