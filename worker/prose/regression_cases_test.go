package prose_test

import "time"

// regressionCase is one of the failures issue #18 named, as fixed data: the
// data a text was checked against, the day, and sentences with their truth.
type regressionCase struct {
	name  string
	data  any
	names []string // what else the project calls things
	today time.Time
	loc   *time.Location
	texts []corpusSentence
}

func regressionCases() []regressionCase {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	day := time.Date(2026, 12, 1, 0, 0, 0, 0, berlin) // a Tuesday
	milestones := []any{
		map[string]any{"milestone": 1, "title": "v1.0", "due": "2026-12-10", "p50": "2026-12-21", "p80": "2026-12-30",
			"pDue": 0.05, "slack": -14, "open": 24},
		map[string]any{"milestone": 2, "title": "v1.2", "due": "2027-02-01", "p50": "2027-01-12", "p80": "2027-01-20",
			"pDue": 0.93, "slack": 8, "open": 22},
	}
	plan := []any{
		map[string]any{"login": "bruno", "now": []any{map[string]any{"number": 432, "title": "Checkout flow", "p50": "2026-12-03"}}},
		map[string]any{"login": "amara", "now": []any{map[string]any{"number": 471, "title": "Payment retries", "p50": "2026-12-16"}},
			"next": []any{map[string]any{"number": 433, "title": "Refund emails", "p50": "2026-12-02"}}},
	}
	report := map[string]any{"project": "acme/shop", "day": "2026-12-01", "weekday": "Tuesday", "since": "2026-11-30",
		"milestones": milestones, "drift": []any{}, "plan": plan, "staleBlockers": []any{}}
	// A standup without drift and without milestones in it: only the plan.
	planOnly := map[string]any{"project": "acme/shop", "day": "2026-12-01", "weekday": "Tuesday", "since": "2026-11-30",
		"drift": []any{}, "plan": plan, "staleBlockers": []any{}}
	// query_project's runway view, as Reginald reads it.
	runway := map[string]any{
		"milestones": []any{map[string]any{"id": 1, "title": "v1.0", "due": "2026-12-10", "hard": false, "open": 3,
			"band": map[string]any{"p10": "2026-12-14", "p50": "2026-12-18", "p80": "2026-12-22"}, "slack": -8, "pDue": 0.2, "atRisk": true}},
		"capacity": []any{map[string]any{"login": "bruno", "loadHours": 21, "issues": 3, "freeFromP50": "2026-12-09"}},
		"snapshot": map[string]any{"version": 3, "computedAt": "2026-12-01T08:00:00Z"},
	}
	return []regressionCase{
		{name: "a standup that says nothing", data: report, today: day, loc: berlin, texts: []corpusSentence{
			{text: "All work is on track.", truth: false, why: "v1.0 is at 5%"},
			{text: "v1.0 is late; v1.2 is on track.", truth: true},
		}},
		{name: "tomorrow is another issue's date", data: report, today: day, loc: berlin, texts: []corpusSentence{
			{text: "Bruno finishes #432 tomorrow", truth: false, why: "#432's p50 is 2026-12-03; 2026-12-02 is #433's"},
			{text: "Bruno finishes #432 on Thursday", truth: true},
			{text: "Amara starts on #433, due tomorrow", truth: true},
		}},
		{name: "another milestone's count", data: report, today: day, loc: berlin, texts: []corpusSentence{
			{text: "v1.0 has 22 open issues.", truth: false, why: "v1.0 has 24; 22 is v1.2's"},
			{text: "v1.0 has 24 open issues and v1.2 has 22.", truth: true},
		}},
		{name: "weeks late in an answer", data: runway, today: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), loc: time.UTC, texts: []corpusSentence{
			{text: "v1.0 (due Dec 10) is three weeks late.", truth: false, why: "its p50 is 8 days after the due date"},
			{text: "v1.0 is about one week late: p50 2026-12-18 against a due date of 2026-12-10.", truth: true},
		}},
		{name: "a milestone title in a standup without drift", data: planOnly, names: []string{"v1.0 Launch", "v1.2"},
			today: day, loc: berlin, texts: []corpusSentence{
				{text: "Amara is on #471 for the v1.0 Launch (likely done 2026-12-16).", truth: true},
				{text: "Amara is on #471 for the v1.0 Launch (likely done 2026-12-17).", truth: false, why: "#471's p50 is 2026-12-16"},
			}},
	}
}
