package standup

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/worker/prose"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// at is a working-day time in UTC: Tuesday 2026-12-01 plus d days, 09:00.
func at(d int) time.Time { return time.Date(2026, 12, 1+d, 9, 0, 0, 0, time.UTC) }

// twoDays returns the inputs of a standup on Wednesday 2026-12-02 whose
// previous standup was on Tuesday: milestone 1 gained #20 (est/xl), lost
// #12 to another milestone, #11 went from est/s to est/l, #10 was done by
// ann, and the calibration multiplier rose; milestone 2 did not move.
func twoDays() Input {
	prev := &Baseline{At: at(0), SnapshotVersion: 7, Multiplier: 1.2, Sigma: 0.5, CalibrationCount: 30,
		Milestones: []BaselineMilestone{
			{ID: 1, P50: at(10), P80: at(14), Open: []BaselineIssue{{10, "m"}, {11, "s"}, {12, "m"}}},
			{ID: 2, P50: at(20), P80: at(24), Open: []BaselineIssue{{30, "m"}}},
		}}
	statuses := []scheduler.IssueStatus{
		{Number: 10, State: scheduler.Done, Estimate: "m"},
		{Number: 11, State: scheduler.Steeping, Estimate: "l"},
		{Number: 12, State: scheduler.Triage, Estimate: "m"},
		{Number: 20, State: scheduler.Triage, Estimate: "xl", Blocked: true, BlockedBy: []int64{40}},
		{Number: 21, State: scheduler.Triage, Estimate: "s"},
		{Number: 30, State: scheduler.Triage, Estimate: "m"},
		{Number: 40, State: scheduler.Steeping, Estimate: "m", Stale: true},
	}
	return Input{
		Project: "acme/app", Day: at(1), Location: time.UTC, Now: at(1),
		Snapshot: Snapshot{Version: 9, ComputedAt: at(1), Statuses: statuses,
			Calibration: scheduler.Calibration{N: 31, GlobalMultiplier: 1.3, Sigma: 0.5},
			Forecast: scheduler.Forecast{
				Milestones: []scheduler.MilestoneForecast{
					{ID: 1, Title: "v1.0", Due: at(15), P50: at(14), P80: at(17)},
					{ID: 2, Title: "v2.0", P50: at(20), P80: at(24).Add(time.Hour)},
				},
				Issues: []scheduler.IssueForecast{
					{Number: 11, P50: at(3)}, {Number: 12, P50: at(8)}, {Number: 20, P50: at(12)},
					{Number: 21, P50: at(5), Assignee: "bob"}, {Number: 30, P50: at(18), Assignee: "bob"},
					{Number: 40, P50: at(2)},
				},
			}},
		Issues: []Issue{
			{Number: 10, Title: "Login form", Milestone: 1, Assignee: "ann"},
			{Number: 11, Title: "Session store", Milestone: 1, Assignee: "ann"},
			{Number: 12, Title: "Audit log", Milestone: 2},
			{Number: 20, Title: "SSO", Milestone: 1, Assignee: "ann"},
			{Number: 21, Title: "Docs"},
			{Number: 30, Title: "Reports", Milestone: 2},
			{Number: 40, Title: "Schema", Assignee: "cid", LastActivity: at(-7)},
		},
		Previous:    prev,
		Transitions: []Transition{{Issue: 10, From: "steeping", To: "done", At: at(0).Add(3 * time.Hour)}},
	}
}

func kinds(cs []Cause) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Kind)
	}
	return out
}

func TestBuildDriftCauses(t *testing.T) {
	r := Build(twoDays())
	if len(r.Drift) != 1 {
		t.Fatalf("drift = %+v, want milestone 1 only", r.Drift)
	}
	d := r.Drift[0]
	if d.Milestone != 1 || d.P50Before != "2026-12-11" || d.P50After != "2026-12-15" || d.P50Days != 2 || d.P80Days != 3 {
		t.Errorf("drift = %+v", d)
	}
	want := []string{CauseScopeAdded, CauseScopeRemoved, CauseReestimated, CauseCalibration, CauseProgress}
	if !slices.Equal(kinds(d.Causes), want) {
		t.Fatalf("causes = %v, want %v", kinds(d.Causes), want)
	}
	if c := d.Causes[0]; !slices.Equal(c.Issues, []int64{20}) || c.Hours != 40 {
		t.Errorf("scope added = %+v", c)
	}
	if c := d.Causes[1]; !slices.Equal(c.Issues, []int64{12}) || c.Hours != 8 {
		t.Errorf("scope removed = %+v", c)
	}
	if c := d.Causes[2]; len(c.Reestimates) != 1 || c.Reestimates[0] != (Reestimate{11, "s", "l"}) || c.Hours != 17 {
		t.Errorf("reestimated = %+v", c)
	}
	if c := d.Causes[3]; c.MultiplierBefore != 1.2 || c.MultiplierAfter != 1.3 {
		t.Errorf("calibration = %+v", c)
	}
	if c := d.Causes[4]; !slices.Equal(c.Issues, []int64{10}) {
		t.Errorf("progress = %+v", c)
	}
}

func TestBuildNoProgress(t *testing.T) {
	in := twoDays()
	// Same scope, same estimates, same calibration, nothing moved forward:
	// only time passed.
	in.Previous.Milestones[0].Open = []BaselineIssue{{11, "l"}, {20, "xl"}}
	in.Previous.Multiplier = 1.3
	in.Transitions = nil
	in.Snapshot.Statuses[0].State = scheduler.Triage // #10 not done
	in.Issues[0].Milestone = 0
	in.Snapshot.Forecast.Milestones[0].P50 = at(11) // Friday to Saturday: 1 working day
	in.Snapshot.Forecast.Milestones[0].P80 = at(16) // Tuesday to Thursday: 2
	r := Build(in)
	if len(r.Drift) != 1 || !slices.Equal(kinds(r.Drift[0].Causes), []string{CauseNoProgress}) {
		t.Fatalf("drift = %+v", r.Drift)
	}
	if got := r.Drift[0].Causes[0].WorkingDays; got != 1 {
		t.Errorf("working days passed = %v, want 1", got)
	}
	// A move much larger than the time that passed, with nothing of the
	// milestone's own changed, is put down to shared work as well.
	in.Snapshot.Forecast.Milestones[0].P80 = at(21)
	r = Build(in)
	if len(r.Drift) != 1 || !slices.Equal(kinds(r.Drift[0].Causes), []string{CauseNoProgress, CauseElsewhere}) {
		t.Fatalf("drift = %+v", r.Drift)
	}
}

func TestBuildPlanAndStaleBlockers(t *testing.T) {
	r := Build(twoDays())
	byLogin := map[string]PersonPlan{}
	for _, p := range r.Plan {
		byLogin[p.Login] = p
	}
	numbers := func(items []Item) []int64 {
		var out []int64
		for _, it := range items {
			out = append(out, it.Number)
		}
		return out
	}
	ann := byLogin["ann"]
	if !slices.Equal(numbers(ann.Done), []int64{10}) || !slices.Equal(numbers(ann.Now), []int64{11}) ||
		!slices.Equal(numbers(ann.Blocked), []int64{20}) || len(ann.Next) != 0 {
		t.Errorf("ann = %+v", ann)
	}
	if bob := byLogin["bob"]; !slices.Equal(numbers(bob.Next), []int64{21, 30}) {
		t.Errorf("bob = %+v, want next #21 then #30 (scheduled to him)", bob)
	}
	if cid := byLogin["cid"]; !slices.Equal(numbers(cid.Now), []int64{40}) {
		t.Errorf("cid = %+v", cid)
	}
	if len(r.StaleBlockers) != 1 {
		t.Fatalf("stale blockers = %+v", r.StaleBlockers)
	}
	sb := r.StaleBlockers[0]
	if sb.Number != 40 || !slices.Equal(sb.Blocks, []int64{20}) || sb.Assignee != "cid" || sb.IdleDays != 6 {
		t.Errorf("stale blocker = %+v (idle from Tue 24 Nov 09:00 to Wed 2 Dec 09:00 is 6 working days)", sb)
	}
}

func TestTemplatePassesTheCheck(t *testing.T) {
	r := Build(twoDays())
	text := Template(r)
	for _, want := range []string{"v1.0 (due 2026-12-16): p50 2026-12-11 -> 2026-12-15 (+2 working days)",
		"scope added: #20 (40 h nominal)", "#11 est/s -> est/l", "multiplier 1.2 -> 1.3", "#40 Schema (cid, steeping): idle 6 working days, blocks #20"} {
		if !strings.Contains(text, want) {
			t.Errorf("template lacks %q:\n%s", want, text)
		}
	}
	facts, err := Facts(r, Known{}, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if err := prose.Check(text, facts); err != nil {
		t.Errorf("the template does not pass its own check: %v\n%s", err, text)
	}
}

type phraser struct {
	text string
	err  error
	req  PhraseRequest
}

func (p *phraser) Phrase(_ context.Context, req PhraseRequest) (string, error) {
	p.req = req
	return p.text, p.err
}

func TestTextChecksProse(t *testing.T) {
	r := Build(twoDays())
	tmpl := Template(r)
	good := "Morning! v1.0 slipped 2 working days to 2026-12-15 because #20 joined (40 h) and #11 grew to est/l. " +
		"ann finished #10 and is on #11; #20 waits for #40. bob has #21 and #30 next. cid's #40 has been idle 6 working days and blocks #20."
	cases := []struct {
		name string
		p    Phraser
		want string
		src  string
	}{
		{"no model", nil, tmpl, SourceTemplate},
		{"grounded prose", &phraser{text: good}, good, SourceModel},
		{"invented date", &phraser{text: good + " We expect v1.0 on 2026-12-21."}, tmpl, SourceTemplate},
		{"invented number", &phraser{text: "v1.0 slipped 5 working days."}, tmpl, SourceTemplate},
		{"invented relative date", &phraser{text: good + " #40 was due last week."}, tmpl, SourceTemplate},
		{"grounded relative date", &phraser{text: good + " v1.0 now lands in two weeks' time."}, good + " v1.0 now lands in two weeks' time.", SourceModel},
		{"a date of another subject", &phraser{text: good + " bob finishes #21 on 2026-12-19."}, tmpl, SourceTemplate},
		{"incomplete", &phraser{text: "v1.0 slipped 2 working days to 2026-12-15; cid's #40 blocks #20."}, tmpl, SourceTemplate},
		{"says nothing", &phraser{text: "All work is on track."}, tmpl, SourceTemplate},
		{"model error", &phraser{err: errors.New("BUDGET_EXHAUSTED")}, tmpl, SourceTemplate},
		{"empty answer", &phraser{text: "  "}, tmpl, SourceTemplate},
	}
	for _, c := range cases {
		text, src := Text(context.Background(), r, Phrasing{Phraser: c.p, Location: time.UTC, Log: quiet})
		if text != c.want || src != c.src {
			t.Errorf("%s: got %s text %q, want %s", c.name, src, text, c.src)
		}
	}
	p := &phraser{text: good}
	Text(context.Background(), r, Phrasing{Phraser: p, Location: time.UTC, Log: quiet})
	if p.req.Draft != tmpl || p.req.Instructions == "" {
		t.Errorf("request = %+v, want the template as the draft", p.req)
	}
}

func TestScheduleSkipsWeekendsAndHolidays(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	cal := scheduler.Calendar{Holidays: []time.Time{time.Date(2026, 12, 7, 0, 0, 0, 0, berlin)}}
	s := Schedule{Hour: 9, Minute: 0, Location: berlin, Calendar: cal}
	cases := []struct{ from, want time.Time }{
		// Thursday before nine: Thursday at nine.
		{time.Date(2026, 12, 3, 7, 0, 0, 0, berlin), time.Date(2026, 12, 3, 9, 0, 0, 0, berlin)},
		// Friday after nine: not Saturday, Sunday or the Monday holiday.
		{time.Date(2026, 12, 4, 9, 0, 0, 0, berlin), time.Date(2026, 12, 8, 9, 0, 0, 0, berlin)},
		// Saturday: Tuesday.
		{time.Date(2026, 12, 5, 12, 0, 0, 0, berlin), time.Date(2026, 12, 8, 9, 0, 0, 0, berlin)},
	}
	for _, c := range cases {
		if got := s.Next(c.from); !got.Equal(c.want) {
			t.Errorf("Next(%s) = %s, want %s", c.from, got, c.want)
		}
	}
	for d, want := range map[int]bool{4: true, 5: false, 6: false, 7: false, 8: true} {
		if got := IsWorkingDay(cal, time.Date(2026, 12, d, 12, 0, 0, 0, berlin), berlin); got != want {
			t.Errorf("IsWorkingDay(2026-12-%02d) = %v, want %v", d, got, want)
		}
	}
}

func TestBaselineRoundTrip(t *testing.T) {
	b := twoDays().Previous
	b.Milestones[0].Open = append(b.Milestones[0].Open, BaselineIssue{N: 13})
	raw, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"open":[10,11,12,13],"sizes":"msm-"`) {
		t.Errorf("encoded: %s", raw)
	}
	var back Baseline
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, b) {
		t.Errorf("round trip: %+v, want %+v", back, *b)
	}
}
