package scheduler

import (
	"reflect"
	"testing"
	"time"
)

func TestDiff(t *testing.T) {
	at := lifeT0.Add(time.Hour)
	prev := []IssueStatus{{Number: 1, State: Diagnosis}, {Number: 2, State: Triage}, {Number: 4, State: Steeping}, {Number: 5, State: Done}}
	next := []IssueStatus{
		{Number: 3, State: Diagnosis},
		{Number: 2, State: Triage, Stale: true, MissingEstimate: true}, // flags alone make no transition
		{Number: 1, State: Steeping},
		{Number: 5, State: Done, Discarded: true},
		// #4 is gone (deleted or moved): not reported.
	}
	got := Diff(prev, next, at, "delivery:42")
	want := []Transition{
		{Issue: 1, From: Diagnosis, To: Steeping, At: at, Cause: "delivery:42"},
		{Issue: 3, From: "", To: Diagnosis, At: at, Cause: "delivery:42"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Diff =\n%+v\nwant\n%+v", got, want)
	}
	if got := Diff(next, next, at, "delivery:43"); got != nil {
		t.Errorf("Diff of equal statuses = %+v, want none", got)
	}
	if got := Diff(nil, []IssueStatus{{Number: 7, State: Triage}}, at, "reconcile"); len(got) != 1 || got[0].From != "" || got[0].To != Triage {
		t.Errorf("Diff from nothing = %+v", got)
	}
}

// replayFixture is issue #5's life: created bare, estimated, taken by
// alice, put in review by pull request #12, closed by its merge.
type replayFixture struct {
	t0, t1, t2, t3, t4 time.Time
	issue              IssueFacts
	pull               IssueFacts
	events             []TimelineEvent
}

func newReplayFixture() replayFixture {
	f := replayFixture{t0: lifeT0}
	f.t1 = f.t0.Add(2 * time.Hour)
	f.t2 = f.t0.Add(26 * time.Hour)
	f.t3 = f.t0.Add(50 * time.Hour)
	f.t4 = f.t0.Add(70 * time.Hour)
	f.issue = IssueFacts{Number: 5, Title: "Widget breaks", Closed: true, ClosedAt: f.t4, Labels: []string{"est/m"},
		Assignees: []string{"alice"}, CreatedAt: f.t0, UpdatedAt: f.t4, LastActivityAt: f.t4}
	f.pull = IssueFacts{Number: 12, IsPull: true, Title: "Fix the widget", Body: "Fixes #5", Ref: "fix-widget",
		Closed: true, ClosedAt: f.t4, Merged: true, CreatedAt: f.t3, UpdatedAt: f.t4}
	f.events = []TimelineEvent{
		{ID: 101, Kind: "label", CreatedAt: f.t1, Label: "est/m"},
		{ID: 102, Kind: "assignees", CreatedAt: f.t2, Assignee: "alice"},
		{ID: 103, Kind: "pull_ref", CreatedAt: f.t3, RefIssue: 12},
		{ID: 104, Kind: "comment", CreatedAt: f.t3.Add(time.Hour)},
		{ID: 105, Kind: "close", CreatedAt: f.t4},
	}
	return f
}

func TestReplayWholeLife(t *testing.T) {
	f := newReplayFixture()
	got := Replay(f.issue, f.events, []IssueFacts{f.pull}, "acme/app", f.t4.Add(24*time.Hour))
	want := []Transition{
		{Issue: 5, From: "", To: Diagnosis, At: f.t0, Cause: "created"},
		{Issue: 5, From: Diagnosis, To: Triage, At: f.t1, Cause: "timeline:101"},
		{Issue: 5, From: Triage, To: Steeping, At: f.t2, Cause: "timeline:102"},
		{Issue: 5, From: Steeping, To: InReview, At: f.t3, Cause: "timeline:103"},
		{Issue: 5, From: InReview, To: Done, At: f.t4, Cause: "timeline:105"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Replay =\n%s\nwant\n%s", transitionsText(got), transitionsText(want))
	}
}

func TestReplayCases(t *testing.T) {
	now := lifeT0.Add(30 * 24 * time.Hour)
	type tr struct {
		from, to State
		at       time.Duration // after lifeT0
		cause    string
	}
	cases := []struct {
		name   string
		edit   func(f *replayFixture)
		want   []tr
		nowArg time.Time
	}{
		{"close lands a little after the merge", func(f *replayFixture) {
			f.events[4].CreatedAt = f.t4.Add(30 * time.Second)
			f.issue.ClosedAt = f.events[4].CreatedAt
		}, []tr{{"", Diagnosis, 0, "created"}, {Diagnosis, Triage, 2 * time.Hour, "timeline:101"},
			{Triage, Steeping, 26 * time.Hour, "timeline:102"}, {Steeping, InReview, 50 * time.Hour, "timeline:103"},
			{InReview, Done, 70*time.Hour + 30*time.Second, "timeline:105"}}, time.Time{}},
		{"pull request closed unmerged, issue still open", func(f *replayFixture) {
			f.events = f.events[:4]
			f.issue.Closed, f.issue.ClosedAt = false, time.Time{}
			f.pull.Merged = false
		}, []tr{{"", Diagnosis, 0, "created"}, {Diagnosis, Triage, 2 * time.Hour, "timeline:101"},
			{Triage, Steeping, 26 * time.Hour, "timeline:102"}, {Steeping, InReview, 50 * time.Hour, "timeline:103"},
			{InReview, Steeping, 70 * time.Hour, "pull:#12 closed"}}, time.Time{}},
		{"no pull_ref event: the pull request counts from its creation", func(f *replayFixture) {
			f.events = append(f.events[:2], f.events[3:]...)
		}, []tr{{"", Diagnosis, 0, "created"}, {Diagnosis, Triage, 2 * time.Hour, "timeline:101"},
			{Triage, Steeping, 26 * time.Hour, "timeline:102"}, {Steeping, InReview, 50 * time.Hour, "pull:#12 opened"},
			{InReview, Done, 70 * time.Hour, "timeline:105"}}, time.Time{}},
		{"head branch link counts from the pull request's creation", func(f *replayFixture) {
			f.pull.Body = "widget work"
			f.issue.Ref = "refs/heads/fix-widget"
			f.events = append(f.events[:2], f.events[3:]...)
		}, []tr{{"", Diagnosis, 0, "created"}, {Diagnosis, Triage, 2 * time.Hour, "timeline:101"},
			{Triage, Steeping, 26 * time.Hour, "timeline:102"}, {Steeping, InReview, 50 * time.Hour, "pull:#12 opened"},
			{InReview, Done, 70 * time.Hour, "timeline:105"}}, time.Time{}},
		{"pull request still open", func(f *replayFixture) {
			f.events = f.events[:4]
			f.issue.Closed, f.issue.ClosedAt = false, time.Time{}
			f.pull.Closed, f.pull.ClosedAt, f.pull.Merged = false, time.Time{}, false
		}, []tr{{"", Diagnosis, 0, "created"}, {Diagnosis, Triage, 2 * time.Hour, "timeline:101"},
			{Triage, Steeping, 26 * time.Hour, "timeline:102"}, {Steeping, InReview, 50 * time.Hour, "timeline:103"}}, time.Time{}},
		{"labels set at creation fold into the first state", func(f *replayFixture) {
			f.events[0].CreatedAt = f.t0
		}, []tr{{"", Triage, 0, "created"}, {Triage, Steeping, 26 * time.Hour, "timeline:102"},
			{Steeping, InReview, 50 * time.Hour, "timeline:103"}, {InReview, Done, 70 * time.Hour, "timeline:105"}}, time.Time{}},
		{"values with no event were there from the start", func(f *replayFixture) {
			f.events = f.events[1:]
		}, []tr{{"", Triage, 0, "created"}, {Triage, Steeping, 26 * time.Hour, "timeline:102"},
			{Steeping, InReview, 50 * time.Hour, "timeline:103"}, {InReview, Done, 70 * time.Hour, "timeline:105"}}, time.Time{}},
		{"a label removed later was there at first", func(f *replayFixture) {
			f.pull = IssueFacts{Number: 12, IsPull: true, CreatedAt: f.t0} // unrelated
			f.issue = IssueFacts{Number: 5, CreatedAt: f.t0}
			f.events = []TimelineEvent{{ID: 201, Kind: "label", CreatedAt: f.t1, Label: "EST/M", Removed: true}}
		}, []tr{{"", Triage, 0, "created"}, {Triage, Diagnosis, 2 * time.Hour, "timeline:201"}}, time.Time{}},
		{"same instant: one transition, caused by the last change", func(f *replayFixture) {
			f.pull = IssueFacts{Number: 12, IsPull: true, CreatedAt: f.t0} // unrelated
			f.issue = IssueFacts{Number: 5, CreatedAt: f.t0, Labels: []string{"est/s"}, Assignees: []string{"bob"}}
			f.events = []TimelineEvent{
				{ID: 301, Kind: "label", CreatedAt: f.t1, Label: "est/s"},
				{ID: 302, Kind: "assignees", CreatedAt: f.t1, Assignee: "bob"},
			}
		}, []tr{{"", Diagnosis, 0, "created"}, {Diagnosis, Steeping, 2 * time.Hour, "timeline:302"}}, time.Time{}},
		{"changes that cancel out in one instant make no transition", func(f *replayFixture) {
			f.pull = IssueFacts{Number: 12, IsPull: true, CreatedAt: f.t0} // unrelated
			f.issue = IssueFacts{Number: 5, CreatedAt: f.t0}
			f.events = []TimelineEvent{
				{ID: 401, Kind: "assignees", CreatedAt: f.t1, Assignee: "bob"},
				{ID: 402, Kind: "assignees", CreatedAt: f.t1, Assignee: "bob", Removed: true},
			}
		}, []tr{{"", Diagnosis, 0, "created"}}, time.Time{}},
		{"close, reopen, unassign", func(f *replayFixture) {
			f.pull = IssueFacts{Number: 12, IsPull: true, CreatedAt: f.t0} // unrelated
			f.issue = IssueFacts{Number: 5, CreatedAt: f.t0}
			f.events = []TimelineEvent{
				{ID: 501, Kind: "assignees", CreatedAt: f.t1, Assignee: "bob"},
				{ID: 502, Kind: "close", CreatedAt: f.t2},
				{ID: 503, Kind: "reopen", CreatedAt: f.t3},
				{ID: 504, Kind: "assignees", CreatedAt: f.t4, Assignee: "bob", Removed: true},
			}
		}, []tr{{"", Diagnosis, 0, "created"}, {Diagnosis, Steeping, 2 * time.Hour, "timeline:501"},
			{Steeping, Done, 26 * time.Hour, "timeline:502"}, {Done, Steeping, 50 * time.Hour, "timeline:503"},
			{Steeping, Diagnosis, 70 * time.Hour, "timeline:504"}}, time.Time{}},
		{"milestone set and removed", func(f *replayFixture) {
			f.pull = IssueFacts{Number: 12, IsPull: true, CreatedAt: f.t0} // unrelated
			f.issue = IssueFacts{Number: 5, CreatedAt: f.t0}
			f.events = []TimelineEvent{
				{ID: 601, Kind: "milestone", CreatedAt: f.t1, Milestone: 7},
				{ID: 602, Kind: "milestone", CreatedAt: f.t2, Milestone: 8},
				{ID: 603, Kind: "milestone", CreatedAt: f.t3, Removed: true},
			}
		}, []tr{{"", Diagnosis, 0, "created"}, {Diagnosis, Triage, 2 * time.Hour, "timeline:601"},
			{Triage, Diagnosis, 50 * time.Hour, "timeline:603"}}, time.Time{}},
		{"a first milestone event that removes one", func(f *replayFixture) {
			f.pull = IssueFacts{Number: 12, IsPull: true, CreatedAt: f.t0} // unrelated
			f.issue = IssueFacts{Number: 5, CreatedAt: f.t0}
			f.events = []TimelineEvent{{ID: 701, Kind: "milestone", CreatedAt: f.t1, Removed: true}}
		}, []tr{{"", Triage, 0, "created"}, {Triage, Diagnosis, 2 * time.Hour, "timeline:701"}}, time.Time{}},
		{"a close the timeline does not show", func(f *replayFixture) {
			f.events = f.events[:4]
		}, []tr{{"", Diagnosis, 0, "created"}, {Diagnosis, Triage, 2 * time.Hour, "timeline:101"},
			{Triage, Steeping, 26 * time.Hour, "timeline:102"}, {Steeping, InReview, 50 * time.Hour, "timeline:103"},
			{InReview, Done, 70 * time.Hour, "reconcile"}}, time.Time{}},
		{"a close the timeline does not show, away from any merge", func(f *replayFixture) {
			f.pull = IssueFacts{Number: 12, IsPull: true, CreatedAt: f.t0} // unrelated
			f.events = f.events[:2]
			f.issue.ClosedAt = f.t4.Add(24 * time.Hour)
		}, []tr{{"", Diagnosis, 0, "created"}, {Diagnosis, Triage, 2 * time.Hour, "timeline:101"},
			{Triage, Steeping, 26 * time.Hour, "timeline:102"}, {Steeping, Done, 94 * time.Hour, "reconcile"}}, time.Time{}},
		{"closed, reopened, closed again without an event", func(f *replayFixture) {
			f.pull = IssueFacts{Number: 12, IsPull: true, CreatedAt: f.t0} // unrelated
			f.events = []TimelineEvent{{ID: 111, Kind: "close", CreatedAt: f.t1}, {ID: 112, Kind: "reopen", CreatedAt: f.t2}}
			f.issue = IssueFacts{Number: 5, CreatedAt: f.t0, Closed: true, ClosedAt: f.t3}
		}, []tr{{"", Diagnosis, 0, "created"}, {Diagnosis, Done, 2 * time.Hour, "timeline:111"},
			{Done, Diagnosis, 26 * time.Hour, "timeline:112"}, {Diagnosis, Done, 50 * time.Hour, "reconcile"}}, time.Time{}},
		{"events of other issues are ignored", func(f *replayFixture) {
			f.events = append(f.events, TimelineEvent{ID: 900, Issue: 6, Kind: "reopen", CreatedAt: f.t4.Add(time.Hour)})
			f.events[0].Issue = 5
		}, []tr{{"", Diagnosis, 0, "created"}, {Diagnosis, Triage, 2 * time.Hour, "timeline:101"},
			{Triage, Steeping, 26 * time.Hour, "timeline:102"}, {Steeping, InReview, 50 * time.Hour, "timeline:103"},
			{InReview, Done, 70 * time.Hour, "timeline:105"}}, time.Time{}},
		{"events after now are left out", func(f *replayFixture) {
			f.issue.Closed, f.issue.ClosedAt = false, time.Time{}
			f.events = f.events[:2]
			f.pull.Closed, f.pull.ClosedAt, f.pull.Merged = false, time.Time{}, false
			f.pull.CreatedAt = f.t4.Add(time.Hour)
			f.events = append(f.events, TimelineEvent{ID: 801, Kind: "label", CreatedAt: f.t4.Add(48 * time.Hour), Label: "p/1"})
			f.issue.Labels = append(f.issue.Labels, "p/1")
		}, []tr{{"", Diagnosis, 0, "created"}, {Diagnosis, Triage, 2 * time.Hour, "timeline:101"},
			{Triage, Steeping, 26 * time.Hour, "timeline:102"}, {Steeping, InReview, 71 * time.Hour, "pull:#12 opened"}},
			lifeT0.Add(100 * time.Hour)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newReplayFixture()
			c.edit(&f)
			n := now
			if !c.nowArg.IsZero() {
				n = c.nowArg
			}
			got := Replay(f.issue, f.events, []IssueFacts{f.pull}, "acme/app", n)
			var want []Transition
			for _, w := range c.want {
				want = append(want, Transition{Issue: 5, From: w.from, To: w.to, At: lifeT0.Add(w.at), Cause: w.cause})
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Replay =\n%s\nwant\n%s", transitionsText(got), transitionsText(want))
			}
		})
	}
}

// TestReplayEndsWhereInferStands: whatever the timeline, the last replayed
// state is the one Infer gives the same facts, since both apply one rule.
func TestReplayEndsWhereInferStands(t *testing.T) {
	f := newReplayFixture()
	variants := []func(f *replayFixture){
		func(*replayFixture) {},
		func(f *replayFixture) { f.events = f.events[:4] },
		func(f *replayFixture) {
			f.events = f.events[:3]
			f.issue.Closed, f.issue.ClosedAt = false, time.Time{}
			f.pull.Closed, f.pull.ClosedAt = false, time.Time{}
		},
		func(f *replayFixture) {
			f.issue.Closed, f.issue.ClosedAt, f.issue.Assignees = false, time.Time{}, nil
			f.events = f.events[:1]
			f.pull.Body = ""
		},
	}
	for i, edit := range variants {
		g := f
		g.events = append([]TimelineEvent(nil), f.events...)
		edit(&g)
		now := g.t4.Add(time.Hour)
		ts := Replay(g.issue, g.events, []IssueFacts{g.pull}, "acme/app", now)
		st := Infer(ProjectFacts{Repo: "acme/app", Issues: []IssueFacts{g.issue, g.pull}}, now, nil, LifecycleOptions{})
		if last := ts[len(ts)-1].To; last != st[0].State {
			t.Errorf("variant %d: replay ends in %s, Infer says %s\n%s", i, last, st[0].State, transitionsText(ts))
		}
	}
}

func transitionsText(ts []Transition) string {
	s := ""
	for _, t := range ts {
		s += "  " + string(t.From) + " → " + string(t.To) + " at " + t.At.Format(time.RFC3339) + " (" + t.Cause + ")\n"
	}
	return s
}
