package scheduler

import (
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"
)

// lifeT0 is a Tuesday.
var lifeT0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func inferByNumber(t *testing.T, now time.Time, people []Person, opts LifecycleOptions, issues ...IssueFacts) map[int64]IssueStatus {
	t.Helper()
	out := Infer(ProjectFacts{Repo: "acme/app", Issues: issues}, now, people, opts)
	m := make(map[int64]IssueStatus, len(out))
	for _, s := range out {
		m[s.Number] = s
	}
	return m
}

func openIssue(n int64, labels ...string) IssueFacts {
	return IssueFacts{Number: n, Labels: labels, CreatedAt: lifeT0, UpdatedAt: lifeT0, LastActivityAt: lifeT0}
}

func TestInferStates(t *testing.T) {
	closed := func(f IssueFacts) IssueFacts { f.Closed, f.ClosedAt = true, lifeT0.Add(time.Hour); return f }
	assigned := func(f IssueFacts, who ...string) IssueFacts { f.Assignees = who; return f }
	pull := func(n int64, title, body, ref string) IssueFacts {
		return IssueFacts{Number: n, IsPull: true, Title: title, Body: body, Ref: ref, CreatedAt: lifeT0}
	}
	withRef := func(f IssueFacts, ref string) IssueFacts { f.Ref = ref; return f }
	withMilestone := func(f IssueFacts, id int64) IssueFacts { f.Milestone = id; return f }

	cases := []struct {
		name      string
		issues    []IssueFacts
		state     State
		discarded bool
		why       []string
	}{
		{"closed is done", []IssueFacts{closed(openIssue(1, "est/m"))}, Done, false, []string{"closed"}},
		{"closed assigned is done", []IssueFacts{closed(assigned(openIssue(1), "alice"))}, Done, false, []string{"closed"}},
		{"wontfix discards", []IssueFacts{closed(openIssue(1, "wontfix"))}, Done, true, []string{"closed"}},
		{"duplicate discards", []IssueFacts{closed(openIssue(1, "duplicate"))}, Done, true, nil},
		{"invalid discards", []IssueFacts{closed(openIssue(1, "invalid"))}, Done, true, nil},
		{"not-planned discards", []IssueFacts{closed(openIssue(1, "not-planned"))}, Done, true, nil},
		{"discard label any case", []IssueFacts{closed(openIssue(1, "WontFix"))}, Done, true, nil},
		{"scoped discard label", []IssueFacts{closed(openIssue(1, "resolution/wontfix"))}, Done, true, nil},
		{"scoped discard label any case", []IssueFacts{closed(openIssue(1, "Status/Duplicate"))}, Done, true, nil},
		{"nested scoped discard label", []IssueFacts{closed(openIssue(1, "triage/result/invalid"))}, Done, true, nil},
		{"won't fix spelled out", []IssueFacts{closed(openIssue(1, "Won't Fix"))}, Done, true, nil},
		{"not planned with underscore", []IssueFacts{closed(openIssue(1, "kind/not_planned"))}, Done, true, nil},
		{"discard word as scope is not a discard", []IssueFacts{closed(openIssue(1, "wontfix/later"))}, Done, false, nil},
		{"longer word is not a discard", []IssueFacts{closed(openIssue(1, "invalidated"))}, Done, false, nil},
		{"open with a discard label is not done", []IssueFacts{openIssue(1, "wontfix")}, Diagnosis, false, nil},

		{"open pull request closing it", []IssueFacts{openIssue(1), pull(12, "Widget", "Fixes #1", "")}, InReview, false,
			[]string{"pr:#12 closes #1"}},
		{"closing keyword in the title", []IssueFacts{openIssue(1), pull(12, "Resolve #1: widget", "", "")}, InReview, false, nil},
		{"closing keyword upper case", []IssueFacts{openIssue(1), pull(12, "", "CLOSES #1", "")}, InReview, false, nil},
		{"closing ref from the mirror only", []IssueFacts{openIssue(1), {Number: 12, IsPull: true, ClosingRefs: []int64{1}}}, InReview, false, nil},
		{"review wins over assignee", []IssueFacts{assigned(openIssue(1, "est/m"), "alice"), pull(12, "", "fixed #1", "")}, InReview, false, nil},
		{"keyword glued to #N is no reference", []IssueFacts{openIssue(1), pull(12, "", "fixes#1", "")}, Diagnosis, false, nil},
		{"keyword inside a word is no reference", []IssueFacts{openIssue(1), pull(12, "", "prefix #1", "")}, Diagnosis, false, nil},
		{"plain mention is no reference", []IssueFacts{openIssue(1), pull(12, "", "see #1", "")}, Diagnosis, false, nil},
		{"closed pull request does not review", []IssueFacts{assigned(openIssue(1), "alice"), closed(pull(12, "", "fixes #1", ""))}, Steeping, false, nil},
		{"pull request closing another issue", []IssueFacts{openIssue(1), pull(12, "", "fixes #2", "")}, Diagnosis, false, nil},
		{"ref is the head branch", []IssueFacts{withRef(openIssue(1), "feat/widget"), pull(12, "Widget", "", "feat/widget")}, InReview, false,
			[]string{"pr:#12 head branch feat/widget"}},
		{"ref with refs/heads prefix", []IssueFacts{withRef(openIssue(1), "refs/heads/feat/widget"), pull(12, "", "", "feat/widget")}, InReview, false, nil},
		{"ref differs from head branch", []IssueFacts{withRef(openIssue(1), "feat/other"), pull(12, "", "", "feat/widget")}, Diagnosis, false, nil},
		{"empty ref matches no branch", []IssueFacts{openIssue(1), pull(12, "", "", "")}, Diagnosis, false, nil},

		{"assignee steeps", []IssueFacts{assigned(openIssue(1), "alice")}, Steeping, false, []string{"assignee:alice"}},
		{"two assignees", []IssueFacts{assigned(openIssue(1, "est/s"), "alice", "bob")}, Steeping, false, []string{"assignee:alice", "assignee:bob"}},

		{"estimate is triage", []IssueFacts{openIssue(1, "est/m")}, Triage, false, []string{"label:est/m"}},
		{"estimate any case", []IssueFacts{openIssue(1, "EST/M")}, Triage, false, []string{"label:EST/M"}},
		{"estimate above xl is triage", []IssueFacts{openIssue(1, "est/xxl")}, Triage, false, []string{"label:est/xxl"}},
		{"priority is triage", []IssueFacts{openIssue(1, "p/1")}, Triage, false, []string{"label:p/1"}},
		{"priority any case", []IssueFacts{openIssue(1, "P/0")}, Triage, false, nil},
		{"milestone is triage", []IssueFacts{withMilestone(openIssue(1), 3)}, Triage, false, []string{"milestone:3"}},
		{"all three", []IssueFacts{withMilestone(openIssue(1, "bug", "est/M", "p/1"), 3)}, Triage, false,
			[]string{"label:est/M", "label:p/1", "milestone:3"}},

		{"nothing is diagnosis", []IssueFacts{openIssue(1)}, Diagnosis, false, []string{"no assignee, estimate, priority or milestone"}},
		{"other labels are diagnosis", []IssueFacts{openIssue(1, "bug", "deadline/hard")}, Diagnosis, false, nil},
		{"unknown size is diagnosis", []IssueFacts{openIssue(1, "est/medium")}, Diagnosis, false, nil},
		{"unknown priority is diagnosis", []IssueFacts{openIssue(1, "p/7")}, Diagnosis, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := inferByNumber(t, lifeT0, nil, LifecycleOptions{}, c.issues...)[1]
			if got.State != c.state || got.Discarded != c.discarded {
				t.Fatalf("state %s discarded %v, want %s %v (why %+v)", got.State, got.Discarded, c.state, c.discarded, got.Why)
			}
			if c.why != nil && !reflect.DeepEqual(got.Why.State, c.why) {
				t.Errorf("why %q, want %q", got.Why.State, c.why)
			}
			if got.Discarded && len(got.Why.Discarded) == 0 {
				t.Errorf("discarded without provenance")
			}
		})
	}
}

func TestInferSkipsPullRequestsAndSorts(t *testing.T) {
	out := Infer(ProjectFacts{Issues: []IssueFacts{openIssue(3), {Number: 2, IsPull: true}, openIssue(1)}}, lifeT0, nil, LifecycleOptions{})
	var numbers []int64
	for _, s := range out {
		numbers = append(numbers, s.Number)
	}
	if !slices.Equal(numbers, []int64{1, 3}) {
		t.Errorf("numbers %v, want [1 3]", numbers)
	}
}

func TestParseClosingRefs(t *testing.T) {
	cases := []struct {
		text string
		want []int64
	}{
		{"Fixes #5", []int64{5}},
		{"fixes #5", []int64{5}},
		{"FIXES #5", []int64{5}},
		{"fix #5", []int64{5}},
		{"fixed #5", []int64{5}},
		{"close #5", []int64{5}},
		{"closes #5", []int64{5}},
		{"Closed #5", []int64{5}},
		{"resolve #5", []int64{5}},
		{"resolves #5", []int64{5}},
		{"RESOLVED #5", []int64{5}},
		{"Fixes: #5", []int64{5}},
		{"(fixes #5)", []int64{5}},
		{"intro\nCloses #9 at last.", []int64{9}},
		{"fixes #5 and closes #7, resolves #5", []int64{5, 7}},
		{"fixes acme/app#5", []int64{5}},
		{"fixes Acme/App#5", []int64{5}},
		{"fixes other/repo#5", nil},
		{"fixes#5", nil},
		{"prefix #5", nil},
		{"unfixes #5", nil},
		{"fixing #5", nil},
		{"closesd #5", nil},
		{"fixes #5a", nil},
		{"refs #5", nil},
		{"fixes 5", nil},
		{"", nil},
	}
	for _, c := range cases {
		if got := ParseClosingRefs(c.text, "acme/app"); !slices.Equal(got, c.want) {
			t.Errorf("ParseClosingRefs(%q) = %v, want %v", c.text, got, c.want)
		}
	}
	if got := ParseClosingRefs("fixes acme/app#5", ""); got != nil {
		t.Errorf("a repository-qualified reference with no repository known = %v, want none", got)
	}
}

func TestInferStale(t *testing.T) {
	// Thursday 3 December, mid-morning.
	thursday := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	at := func(y, m, d, h int) time.Time { return time.Date(y, time.Month(m), d, h, 0, 0, 0, time.UTC) }
	steeping := func(last time.Time, who ...string) IssueFacts {
		f := openIssue(1, "est/m")
		f.Assignees = who
		f.CreatedAt, f.UpdatedAt, f.LastActivityAt = last.Add(-48*time.Hour), last, last
		return f
	}
	everyDay := Calendar{WorkingDays: [7]bool{true, true, true, true, true, true, true}}
	holidayMonday := Calendar{Holidays: []time.Time{at(2026, 12, 7, 0)}}
	timeOff := Calendar{TimeOff: []DateRange{{From: at(2026, 12, 7, 0), To: at(2026, 12, 8, 0)}}}
	auckland := Calendar{Location: time.FixedZone("NZDT", 13*3600)}

	commentedLater := steeping(thursday.Add(-10*24*time.Hour), "alice")
	commentedLater.LastActivityAt = thursday
	triageOld := openIssue(1, "est/m")

	cases := []struct {
		name   string
		issue  IssueFacts
		now    time.Time
		people []Person
		opts   LifecycleOptions
		stale  bool
	}{
		{"two working days across the weekend", steeping(thursday, "alice"), at(2026, 12, 8, 23), nil, LifecycleOptions{}, false},
		{"three working days across the weekend", steeping(thursday, "alice"), at(2026, 12, 9, 0), nil, LifecycleOptions{}, true},
		{"weekend days do not count", steeping(thursday, "alice"), at(2026, 12, 7, 12), nil, LifecycleOptions{}, false},
		{"a seven-day week counts the weekend", steeping(thursday, "alice"), at(2026, 12, 7, 12),
			[]Person{{Login: "alice", Calendar: everyDay}}, LifecycleOptions{}, true},
		{"a holiday does not count", steeping(thursday, "alice"), at(2026, 12, 9, 12),
			[]Person{{Login: "alice", Calendar: holidayMonday}}, LifecycleOptions{}, false},
		{"stale the day after the holiday week", steeping(thursday, "alice"), at(2026, 12, 10, 12),
			[]Person{{Login: "alice", Calendar: holidayMonday}}, LifecycleOptions{}, true},
		{"time off does not count", steeping(thursday, "alice"), at(2026, 12, 10, 12),
			[]Person{{Login: "alice", Calendar: timeOff}}, LifecycleOptions{}, false},
		{"the first assignee's calendar", steeping(thursday, "alice", "bob"), at(2026, 12, 7, 12),
			[]Person{{Login: "bob", Calendar: everyDay}}, LifecycleOptions{}, false},
		{"an unknown assignee works Monday to Friday", steeping(thursday, "carol"), at(2026, 12, 9, 12),
			[]Person{{Login: "alice", Calendar: everyDay}}, LifecycleOptions{}, true},
		// Thursday 20:00 UTC is Friday 09:00 in Auckland, and Wednesday
		// 00:30 UTC is Wednesday 13:30 there: only Monday and Tuesday lie
		// between, where UTC sees Friday, Monday and Tuesday.
		{"days are counted in the calendar's time zone", steeping(at(2026, 12, 3, 20), "alice"),
			time.Date(2026, 12, 9, 0, 30, 0, 0, time.UTC), []Person{{Login: "alice", Calendar: auckland}}, LifecycleOptions{}, false},
		{"the same instants in UTC", steeping(at(2026, 12, 3, 20), "alice"),
			time.Date(2026, 12, 9, 0, 30, 0, 0, time.UTC), nil, LifecycleOptions{}, true},
		{"a comment is activity", commentedLater, at(2026, 12, 8, 12), nil, LifecycleOptions{}, false},
		{"one working day option", steeping(thursday, "alice"), at(2026, 12, 5, 12), nil, LifecycleOptions{StaleWorkingDays: 1}, true},
		{"only steeping issues go stale", triageOld, lifeT0.AddDate(0, 1, 0), nil, LifecycleOptions{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := inferByNumber(t, c.now, c.people, c.opts, c.issue)[1]
			if got.Stale != c.stale {
				t.Fatalf("stale %v, want %v (state %s, why %q)", got.Stale, c.stale, got.State, got.Why.Stale)
			}
			if got.Stale && len(got.Why.Stale) == 0 {
				t.Errorf("stale without provenance")
			}
		})
	}
}

func TestInferBlocked(t *testing.T) {
	dependsOn := func(f IssueFacts, deps ...DependencyRef) IssueFacts { f.DependsOn = deps; return f }
	closedIssue := openIssue(2)
	closedIssue.Closed = true
	openPull := IssueFacts{Number: 3, IsPull: true}

	cases := []struct {
		name      string
		issues    []IssueFacts
		blocked   bool
		blockedBy []int64
		why       []string
	}{
		{"open dependency blocks", []IssueFacts{dependsOn(openIssue(1), DependencyRef{Number: 2}), openIssue(2)}, true, []int64{2},
			[]string{"depends:#2 open"}},
		{"closed dependency does not", []IssueFacts{dependsOn(openIssue(1), DependencyRef{Number: 2}), closedIssue}, false, nil, nil},
		{"one open of two", []IssueFacts{dependsOn(openIssue(1), DependencyRef{Number: 4}, DependencyRef{Number: 2}), closedIssue, openIssue(4)},
			true, []int64{4}, []string{"depends:#4 open"}},
		{"open pull request blocks", []IssueFacts{dependsOn(openIssue(1), DependencyRef{Number: 3}), openPull}, true, []int64{3}, nil},
		{"this repository by name", []IssueFacts{dependsOn(openIssue(1), DependencyRef{Number: 2, Repo: "Acme/App"}), openIssue(2)}, true, []int64{2}, nil},
		{"another repository is not followed", []IssueFacts{dependsOn(openIssue(1), DependencyRef{Number: 2, Repo: "acme/lib"}), openIssue(2)}, false, nil, nil},
		{"missing dependency does not block", []IssueFacts{dependsOn(openIssue(1), DependencyRef{Number: 99})}, false, nil, nil},
		{"no dependencies", []IssueFacts{openIssue(1)}, false, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := inferByNumber(t, lifeT0, nil, LifecycleOptions{}, c.issues...)[1]
			if got.Blocked != c.blocked || !slices.Equal(got.BlockedBy, c.blockedBy) {
				t.Fatalf("blocked %v by %v, want %v by %v", got.Blocked, got.BlockedBy, c.blocked, c.blockedBy)
			}
			if c.why != nil && !reflect.DeepEqual(got.Why.Blocked, c.why) {
				t.Errorf("why %q, want %q", got.Why.Blocked, c.why)
			}
		})
	}
}

func TestInferDoneIssuesCarryNoFlags(t *testing.T) {
	f := openIssue(1, "est/xxl")
	f.Closed = true
	f.Assignees = []string{"alice"}
	f.DependsOn = []DependencyRef{{Number: 2}, {Number: 99}}
	got := inferByNumber(t, lifeT0.AddDate(1, 0, 0), nil, LifecycleOptions{}, f, openIssue(2))[1]
	if got.Blocked || got.Stale || got.MissingEstimate || got.Unschedulable != "" {
		t.Errorf("done issue has flags: %+v", got)
	}
}

func TestInferEstimateFlags(t *testing.T) {
	cases := []struct {
		labels        []string
		missing       bool
		unschedulable string
		why           []string
		estimate      Size
	}{
		{nil, true, "", nil, ""},
		{[]string{"bug"}, true, "", nil, ""},
		{[]string{"est/m"}, false, "", nil, SizeM},
		{[]string{"Est/XL"}, false, "", nil, SizeXL},
		{[]string{"est/xxl"}, false, UnschedulableTooLarge, []string{"label:est/xxl (above est/xl)"}, ""},
		{[]string{"EST/XXXL"}, false, UnschedulableTooLarge, nil, ""},
		{[]string{"est/2xl"}, false, UnschedulableTooLarge, nil, ""},
		{[]string{"est/10xl"}, false, UnschedulableTooLarge, nil, ""},
		{[]string{"est/1xl"}, true, "", nil, ""},
		{[]string{"est/huge"}, true, "", nil, ""},
		{[]string{"est/"}, true, "", nil, ""},
		{[]string{"est/m", "est/xxl"}, false, "", nil, SizeM}, // a known size wins
	}
	for _, c := range cases {
		got := inferByNumber(t, lifeT0, nil, LifecycleOptions{}, openIssue(1, c.labels...))[1]
		if got.MissingEstimate != c.missing || got.Unschedulable != c.unschedulable {
			t.Errorf("labels %q: missing %v unschedulable %q, want %v %q", c.labels, got.MissingEstimate, got.Unschedulable,
				c.missing, c.unschedulable)
		}
		if got.Estimate != c.estimate {
			t.Errorf("labels %q: estimate %q, want %q", c.labels, got.Estimate, c.estimate)
		}
		if got.MissingEstimate && len(got.Why.MissingEstimate) == 0 {
			t.Errorf("labels %q: missing estimate without provenance", c.labels)
		}
		if c.why != nil && !reflect.DeepEqual(got.Why.Unschedulable, c.why) {
			t.Errorf("labels %q: why %q, want %q", c.labels, got.Why.Unschedulable, c.why)
		}
	}
	if got := inferByNumber(t, lifeT0, nil, LifecycleOptions{}, openIssue(1, "est/huge"))[1].Why.MissingEstimate; !slices.Equal(got, []string{"label:est/huge (unknown size)"}) {
		t.Errorf("unknown size why %q", got)
	}
	if got := inferByNumber(t, lifeT0, nil, LifecycleOptions{}, openIssue(1))[1].Why.MissingEstimate; !slices.Equal(got, []string{"no est/* label"}) {
		t.Errorf("no estimate why %q", got)
	}
}

func TestInferUnschedulable(t *testing.T) {
	dep := func(f IssueFacts, deps ...int64) IssueFacts {
		for _, d := range deps {
			f.DependsOn = append(f.DependsOn, DependencyRef{Number: d})
		}
		return f
	}
	closed := func(f IssueFacts) IssueFacts { f.Closed = true; return f }

	type want struct {
		reason string
		why    []string
	}
	cases := []struct {
		name   string
		issues []IssueFacts
		want   map[int64]want
	}{
		{"two-issue cycle", []IssueFacts{dep(openIssue(1, "est/m"), 2), dep(openIssue(2, "est/m"), 1)}, map[int64]want{
			1: {UnschedulableCycle, []string{"cycle:#1→#2→#1"}},
			2: {UnschedulableCycle, []string{"cycle:#2→#1→#2"}},
		}},
		{"three-issue cycle with a dependent", []IssueFacts{
			dep(openIssue(1, "est/m"), 2), dep(openIssue(2, "est/m"), 3), dep(openIssue(3, "est/m"), 1), dep(openIssue(4, "est/m"), 3),
		}, map[int64]want{
			1: {UnschedulableCycle, []string{"cycle:#1→#2→#3→#1"}},
			3: {UnschedulableCycle, []string{"cycle:#3→#1→#2→#3"}},
			4: {UnschedulableCycle, []string{"depends:#3 (cycle)"}},
		}},
		{"self dependency", []IssueFacts{dep(openIssue(5, "est/m"), 5)}, map[int64]want{5: {UnschedulableCycle, []string{"cycle:#5→#5"}}}},
		{"a closed issue breaks the cycle", []IssueFacts{dep(openIssue(1, "est/m"), 2), closed(dep(openIssue(2, "est/m"), 1))},
			map[int64]want{1: {}, 2: {}}},
		{"a chain is no cycle", []IssueFacts{dep(openIssue(1, "est/m"), 2), dep(openIssue(2, "est/m"), 3), openIssue(3, "est/m")},
			map[int64]want{1: {}, 2: {}, 3: {}}},
		{"missing dependency", []IssueFacts{dep(openIssue(1, "est/m"), 99)}, map[int64]want{
			1: {UnschedulableMissingDependency, []string{"depends:#99 missing"}},
		}},
		{"missing dependency passes on", []IssueFacts{dep(openIssue(1, "est/m"), 99), dep(openIssue(2, "est/m"), 1)}, map[int64]want{
			2: {UnschedulableMissingDependency, []string{"depends:#1 (missing_dependency)"}},
		}},
		{"too large passes on", []IssueFacts{openIssue(1, "est/xxl"), dep(openIssue(2, "est/m"), 1)}, map[int64]want{
			1: {UnschedulableTooLarge, nil},
			2: {UnschedulableTooLarge, []string{"depends:#1 (too_large)"}},
		}},
		{"a cycle outranks too large", []IssueFacts{dep(openIssue(1, "est/xxl"), 2), dep(openIssue(2, "est/m"), 1)}, map[int64]want{
			1: {UnschedulableCycle, nil},
		}},
		{"a missing dependency outranks too large", []IssueFacts{dep(openIssue(1, "est/xxl"), 99)}, map[int64]want{
			1: {UnschedulableMissingDependency, nil},
		}},
		{"own reason outranks an inherited one", []IssueFacts{openIssue(1, "est/xxl"), dep(openIssue(2, "est/m"), 1, 99)}, map[int64]want{
			2: {UnschedulableMissingDependency, []string{"depends:#99 missing"}},
		}},
		{"a done dependency passes nothing on", []IssueFacts{closed(openIssue(1, "est/xxl")), dep(openIssue(2, "est/m"), 1)},
			map[int64]want{2: {}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := inferByNumber(t, lifeT0, nil, LifecycleOptions{}, c.issues...)
			for n, w := range c.want {
				if got[n].Unschedulable != w.reason {
					t.Errorf("#%d unschedulable %q, want %q (why %q)", n, got[n].Unschedulable, w.reason, got[n].Why.Unschedulable)
				}
				if w.why != nil && !reflect.DeepEqual(got[n].Why.Unschedulable, w.why) {
					t.Errorf("#%d why %q, want %q", n, got[n].Why.Unschedulable, w.why)
				}
			}
		})
	}
}

func TestInferIsDeterministic(t *testing.T) {
	issues := []IssueFacts{
		{Number: 9, IsPull: true, Body: "fixes #3"},
		openIssue(3, "est/m"), openIssue(1), openIssue(2, "p/1"),
		{Number: 4, Labels: []string{"est/s"}, DependsOn: []DependencyRef{{Number: 5}, {Number: 1}}}, {Number: 5, DependsOn: []DependencyRef{{Number: 4}}},
	}
	first := Infer(ProjectFacts{Issues: issues}, lifeT0, nil, LifecycleOptions{})
	for range 20 {
		shuffled := slices.Clone(issues)
		slices.Reverse(shuffled)
		if again := Infer(ProjectFacts{Issues: shuffled}, lifeT0, nil, LifecycleOptions{}); !reflect.DeepEqual(first, again) {
			t.Fatalf("Infer differs between runs:\n%+v\n%+v", first, again)
		}
	}
}

// BenchmarkInfer evaluates a generated project of 2,000 issues (30% with
// dependencies, a fifth in review through 400 pull requests) at one instant.
func BenchmarkInfer(b *testing.B) {
	p := ProjectFacts{Repo: "acme/app"}
	sizes := []string{"est/xs", "est/s", "est/m", "est/l", "est/xl", "est/xxl", ""}
	for n := int64(1); n <= 2000; n++ {
		f := openIssue(n, sizes[n%int64(len(sizes))], "p/"+string(rune('0'+n%4)))
		if n%3 == 0 {
			f.Assignees = []string{"dev" + string(rune('a'+n%20))}
		}
		if n%10 < 3 && n > 10 {
			f.DependsOn = []DependencyRef{{Number: n - 7}, {Number: n - 3}}
		}
		if n%17 == 0 {
			f.Closed = true
		}
		p.Issues = append(p.Issues, f)
	}
	for n := int64(2001); n <= 2400; n++ {
		p.Issues = append(p.Issues, IssueFacts{Number: n, IsPull: true, Body: "Fixes #" + strconv.FormatInt(n-2000, 10) + " and resolves #" + strconv.FormatInt(n-1600, 10)})
	}
	now := lifeT0.AddDate(0, 0, 10)
	b.ReportAllocs()
	for b.Loop() {
		Infer(p, now, nil, LifecycleOptions{})
	}
}
