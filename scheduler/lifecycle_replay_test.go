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
	next[2].Estimate = SizeS // #1
	got := Diff(prev, next, at, "delivery:42")
	want := []Transition{
		{Issue: 1, From: Diagnosis, To: Steeping, At: at, Cause: "delivery:42", Estimate: SizeS},
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
		{Issue: 5, From: Diagnosis, To: Triage, At: f.t1, Cause: "timeline:101", Estimate: SizeM},
		{Issue: 5, From: Triage, To: Steeping, At: f.t2, Cause: "timeline:102", Estimate: SizeM},
		{Issue: 5, From: Steeping, To: InReview, At: f.t3, Cause: "timeline:103", Estimate: SizeM},
		{Issue: 5, From: InReview, To: Done, At: f.t4, Cause: "timeline:105", Estimate: SizeM},
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
		{"the close nearest the merge is the one that goes with it", func(f *replayFixture) {
			// A close and reopen a minute before the merge's own close.
			f.events = append(f.events[:4],
				TimelineEvent{ID: 106, Kind: "close", CreatedAt: f.t4.Add(-time.Minute)},
				TimelineEvent{ID: 107, Kind: "reopen", CreatedAt: f.t4.Add(-time.Minute + time.Second)},
				TimelineEvent{ID: 108, Kind: "close", CreatedAt: f.t4.Add(time.Second)})
			f.issue.ClosedAt = f.t4.Add(time.Second)
		}, []tr{{"", Diagnosis, 0, "created"}, {Diagnosis, Triage, 2 * time.Hour, "timeline:101"},
			{Triage, Steeping, 26 * time.Hour, "timeline:102"}, {Steeping, InReview, 50 * time.Hour, "timeline:103"},
			{InReview, Done, 70*time.Hour - time.Minute, "timeline:106"}, {Done, InReview, 70*time.Hour - time.Minute + time.Second, "timeline:107"},
			{InReview, Done, 70*time.Hour + time.Second, "timeline:108"}}, time.Time{}},
		{"a close before the review started is not the merge's", func(f *replayFixture) {
			f.events = append(f.events[:2],
				TimelineEvent{ID: 106, Kind: "close", CreatedAt: f.t3.Add(-time.Minute)},
				TimelineEvent{ID: 107, Kind: "reopen", CreatedAt: f.t3.Add(-30 * time.Second)},
				f.events[2], f.events[3])
			f.issue.Closed, f.issue.ClosedAt = false, time.Time{}
			f.pull.ClosedAt = f.t3.Add(time.Minute)
		}, []tr{{"", Diagnosis, 0, "created"}, {Diagnosis, Triage, 2 * time.Hour, "timeline:101"},
			{Triage, Steeping, 26 * time.Hour, "timeline:102"}, {Steeping, Done, 50*time.Hour - time.Minute, "timeline:106"},
			{Done, Steeping, 50*time.Hour - 30*time.Second, "timeline:107"}, {Steeping, InReview, 50 * time.Hour, "timeline:103"},
			{InReview, Steeping, 50*time.Hour + time.Minute, "pull:#12 merged"}}, time.Time{}},
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
			for i := range got {
				got[i].Estimate = "" // TestReplayWholeLife and TestReplayRecordedSequence check it
			}
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
		s += "  " + string(t.From) + " → " + string(t.To) + " at " + t.At.Format(time.RFC3339) + " (" + t.Cause + ") est " + string(t.Estimate) + "\n"
	}
	return s
}

// TestReplayRecordedSequence replays, written out by hand, the timeline of
// issue #1 in the recorded Forgejo session (labels churned, milestone set,
// removed and set again, assignees added and removed, a close and reopen,
// then pull request #4 "Fixes #1" merged).
func TestReplayRecordedSequence(t *testing.T) {
	at := func(m, s int) time.Time { return time.Date(2026, 11, 29, 21, m, s, 0, time.UTC) }
	one := int64(1)
	evs := []TimelineEvent{
		{ID: 1, Kind: "change_title", CreatedAt: at(21, 38)},
		{ID: 2, Kind: "label", CreatedAt: at(21, 43), Label: "deadline/hard"},
		{ID: 3, Kind: "label", CreatedAt: at(21, 43), Label: "est/S"},
		{ID: 4, Kind: "label", CreatedAt: at(21, 45), Label: "est/S", Removed: true},
		{ID: 5, Kind: "label", CreatedAt: at(21, 45), Label: "est/M"},
		{ID: 6, Kind: "label", CreatedAt: at(21, 47), Label: "p/1"},
		{ID: 7, Kind: "label", CreatedAt: at(21, 50), Label: "deadline/hard", Removed: true},
		{ID: 8, Kind: "label", CreatedAt: at(21, 52), Label: "est/M", Removed: true},
		{ID: 9, Kind: "label", CreatedAt: at(21, 52), Label: "est/S"},
		{ID: 10, Kind: "label", CreatedAt: at(21, 52), Label: "p/1", Removed: true},
		{ID: 11, Kind: "label", CreatedAt: at(21, 54), Label: "est/S", Removed: true},
		{ID: 12, Kind: "milestone", CreatedAt: at(21, 57), Milestone: one},
		{ID: 13, Kind: "milestone", CreatedAt: at(21, 59), Removed: true},
		{ID: 14, Kind: "milestone", CreatedAt: at(22, 1), Milestone: one},
		{ID: 15, Kind: "assignees", CreatedAt: at(22, 3), Assignee: "ceo"},
		{ID: 16, Kind: "assignees", CreatedAt: at(22, 3), Assignee: "dev"},
		{ID: 17, Kind: "assignees", CreatedAt: at(22, 6), Assignee: "dev", Removed: true},
		{ID: 18, Kind: "assignees", CreatedAt: at(22, 8), Assignee: "ceo", Removed: true},
		{ID: 19, Kind: "added_deadline", CreatedAt: at(22, 10)},
		{ID: 20, Kind: "removed_deadline", CreatedAt: at(22, 12)},
		{ID: 21, Kind: "comment", CreatedAt: at(22, 14)},
		{ID: 23, Kind: "close", CreatedAt: at(22, 24)},
		{ID: 24, Kind: "reopen", CreatedAt: at(22, 26)},
		{ID: 25, Kind: "label", CreatedAt: at(22, 28), Label: "deadline/hard"},
		{ID: 26, Kind: "label", CreatedAt: at(22, 28), Label: "est/S"},
		{ID: 27, Kind: "label", CreatedAt: at(22, 28), Label: "p/1"},
		{ID: 29, Kind: "add_dependency", CreatedAt: at(22, 33), RefIssue: 2},
		{ID: 36, Kind: "add_time_manual", CreatedAt: at(22, 43)},
		{ID: 39, Kind: "pull_ref", CreatedAt: at(22, 52), RefIssue: 4},
		{ID: 49, Kind: "close", CreatedAt: at(23, 13)},
	}
	issue := IssueFacts{Number: 1, Closed: true, ClosedAt: at(23, 13), Labels: []string{"deadline/hard", "est/S", "p/1"},
		Milestone: 1, CreatedAt: at(21, 36)}
	pull := IssueFacts{Number: 4, IsPull: true, Title: "Fix widget on Tuesdays", Body: "Fixes #1", Closed: true,
		ClosedAt: at(23, 13), Merged: true, CreatedAt: at(22, 52)}
	got := Replay(issue, evs, []IssueFacts{pull}, "ceo/demo", at(59, 0))
	want := []Transition{
		{1, "", Diagnosis, at(21, 36), "created", ""},
		{1, Diagnosis, Triage, at(21, 43), "timeline:3", "s"},
		{1, Triage, Diagnosis, at(21, 54), "timeline:11", ""},
		{1, Diagnosis, Triage, at(21, 57), "timeline:12", ""},
		{1, Triage, Diagnosis, at(21, 59), "timeline:13", ""},
		{1, Diagnosis, Triage, at(22, 1), "timeline:14", ""},
		{1, Triage, Steeping, at(22, 3), "timeline:15", ""},
		{1, Steeping, Triage, at(22, 8), "timeline:18", ""},
		{1, Triage, Done, at(22, 24), "timeline:23", ""},
		{1, Done, Triage, at(22, 26), "timeline:24", ""},
		{1, Triage, InReview, at(22, 52), "timeline:39", "s"},
		{1, InReview, Done, at(23, 13), "timeline:49", "s"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Replay =\n%s\nwant\n%s", transitionsText(got), transitionsText(want))
	}
}
