package scheduler

// Lifecycle transitions. Live ingest compares the statuses before and after
// a delivery with Diff. Backfill rebuilds an issue's transitions with
// Replay, which walks the issue's timeline and applies lifeStateRule, the
// same rule Infer uses, after every step.
//
// How Replay reads a timeline:
//   - It starts from the issue's current labels, assignees and milestone
//     and undoes the timeline backwards to find what the issue was created
//     with, so values set at creation (which leave no event) and the
//     replay's end agree with the mirror. A milestone event keeps only the
//     new milestone, so before the first one the issue is taken to have had
//     none, or an unknown one when that first event removes it.
//   - An issue is created open; "close" and "reopen" events move it.
//   - A pull request that closes the issue (by keyword, judged on the pull
//     request as it is now) counts from its "pull_ref" event on the issue's
//     timeline, or from its creation when there is none; one linked by head
//     branch counts from its creation. It stops counting when it closed. A
//     merge usually closes the issue in the same second, but the two can
//     land a little apart: a pull request end within two minutes of a
//     "close" event is moved onto it, so a merge reads in_review → done and
//     not in_review → steeping → done.
//   - Steps at the same instant are applied together and make at most one
//     transition, caused by the last step that changed the state along the
//     way. Steps at the creation instant fold into the first transition.
//   - Causes: "created" for the first transition ("" → state),
//     "timeline:<event id>" for a timeline event, "pull:#N opened" and
//     "pull:#N closed" or "pull:#N merged" for a pull request's own times,
//     and "reconcile" when the timeline does not explain the issue's current
//     state. A closed issue whose timeline does not end in a close is
//     closed at its ClosedAt; any other difference from the current state
//     is put right at now.

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Transition is one change of an issue's lifecycle state. From is empty
// for an issue's first state.
type Transition struct {
	Issue int64     `json:"issue"`
	From  State     `json:"from"`
	To    State     `json:"to"`
	At    time.Time `json:"at"`
	Cause string    `json:"cause"`
	// Estimate is the issue's known est/* size right after the transition,
	// so calibration can tell what the issue was estimated at when work
	// started even if the label changed later.
	Estimate Size `json:"estimate,omitempty"`
}

// TimelineEvent is one entry of an issue's Gitea timeline, as the mirror
// keeps it. Kind is Gitea's type name: "label", "assignees", "milestone",
// "close", "reopen", "pull_ref", "comment", "add_dependency", ...
type TimelineEvent struct {
	ID        int64
	Issue     int64 // the issue it belongs to; 0 means the replayed one
	Kind      string
	CreatedAt time.Time
	Label     string // label events
	Assignee  string // assignees events
	Removed   bool   // a label, assignee or milestone removed rather than added
	Milestone int64  // milestone events: the new milestone id, 0 when none
	RefIssue  int64  // pull_ref and dependency events: the other issue
}

// Diff returns a transition, at the given time and with the given cause,
// for every issue whose state differs between prev and next, and for every
// issue new in next (from ""). Issues gone from next are not reported.
// Sorted by issue number.
func Diff(prev, next []IssueStatus, at time.Time, cause string) []Transition {
	before := make(map[int64]State, len(prev))
	for _, s := range prev {
		before[s.Number] = s.State
	}
	var out []Transition
	for _, s := range next {
		from, known := before[s.Number]
		if known && from == s.State {
			continue
		}
		out = append(out, Transition{Issue: s.Number, From: from, To: s.State, At: at, Cause: cause, Estimate: s.Estimate})
	}
	slices.SortStableFunc(out, func(a, b Transition) int { return cmp.Compare(a.Issue, b.Issue) })
	return out
}

// mergeCloseWindow is how far apart a pull request's end and the issue's
// close event may be and still count as one step.
const mergeCloseWindow = 2 * time.Minute

// lifeSyntheticCloseID marks the close Replay adds when the timeline lacks
// one; Gitea ids are positive.
const lifeSyntheticCloseID = -1

// lifeReplayStep is one change Replay applies.
type lifeReplayStep struct {
	at    time.Time
	order int // within an instant: pull request times first, then events by id
	event *TimelineEvent
	pull  int  // index into the linked pulls, for pull request steps
	start bool // pull request step: starts (true) or stops counting
	cause string
}

// Replay rebuilds issue's transitions from its timeline events, up to now.
// pulls are the project's pull requests as the mirror has them now; repo is
// "owner/repo" for closing references. The result is in time order.
func Replay(issue IssueFacts, events []TimelineEvent, pulls []IssueFacts, repo string, now time.Time) []Transition {
	var evs []TimelineEvent
	for _, e := range events {
		if e.Issue == 0 || e.Issue == issue.Number {
			evs = append(evs, e)
		}
	}
	slices.SortStableFunc(evs, func(a, b TimelineEvent) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})

	facts := lifeCreationFacts(issue, evs)

	// A closed issue whose timeline does not end closed (an import, a
	// pruned timeline) gets its close at ClosedAt, in time order, so a
	// merge next to it still reads as one step.
	closedByTimeline := false
	for _, e := range evs {
		switch e.Kind {
		case "close":
			closedByTimeline = true
		case "reopen":
			closedByTimeline = false
		}
	}
	if issue.Closed && !closedByTimeline && !issue.ClosedAt.IsZero() {
		at := issue.ClosedAt
		k, _ := slices.BinarySearchFunc(evs, at, func(e TimelineEvent, t time.Time) int {
			if e.CreatedAt.After(t) {
				return 1
			}
			return -1
		})
		evs = slices.Insert(evs, k, TimelineEvent{ID: lifeSyntheticCloseID, Issue: issue.Number, Kind: "close", CreatedAt: at})
	}

	// The pull requests that link to the issue, and when each counts.
	type linked struct {
		reasons []string
		active  bool
	}
	var links []linked
	var steps []lifeReplayStep
	for _, p := range pulls {
		if !p.IsPull || p.Number == issue.Number {
			continue
		}
		closes := slices.Contains(lifeClosingRefs(p, repo), issue.Number)
		branch := lifeBranch(issue.Ref) != "" && lifeBranch(issue.Ref) == lifeBranch(p.Ref)
		if !closes && !branch {
			continue
		}
		ix := newLifePullIndex([]*IssueFacts{&p}, repo)
		start := lifeReplayStep{at: p.CreatedAt, pull: len(links), start: true, cause: fmt.Sprintf("pull:#%d opened", p.Number)}
		if closes && !branch {
			for i := range evs {
				if evs[i].Kind == "pull_ref" && evs[i].RefIssue == p.Number {
					start.at, start.cause = evs[i].CreatedAt, "timeline:"+strconv.FormatInt(evs[i].ID, 10)
					break
				}
			}
		}
		var end *lifeReplayStep
		if p.Closed {
			stop := lifeReplayStep{at: p.ClosedAt, pull: len(links), cause: fmt.Sprintf("pull:#%d closed", p.Number)}
			if stop.at.IsZero() {
				stop.at = p.UpdatedAt
			}
			if p.Merged {
				stop.cause = fmt.Sprintf("pull:#%d merged", p.Number)
			}
			// The nearest close event, if one is near enough and later than
			// the start: a quick earlier close and reopen must not swallow
			// the whole review.
			nearest := mergeCloseWindow + 1
			var closeAt time.Time
			for _, e := range evs {
				if d := lifeAbs(e.CreatedAt.Sub(stop.at)); e.Kind == "close" && d < nearest && e.CreatedAt.After(start.at) {
					nearest, closeAt = d, e.CreatedAt
				}
			}
			if !closeAt.IsZero() {
				stop.at = closeAt
			}
			if !stop.at.After(start.at) {
				continue // closed before it ever referred to the issue
			}
			end = &stop
		}
		steps = append(steps, start)
		if end != nil {
			steps = append(steps, *end)
		}
		links = append(links, linked{reasons: ix.linksTo(issue)})
	}
	for i := range evs {
		cause := "timeline:" + strconv.FormatInt(evs[i].ID, 10)
		if evs[i].ID == lifeSyntheticCloseID {
			cause = "reconcile"
		}
		steps = append(steps, lifeReplayStep{at: evs[i].CreatedAt, order: 1, event: &evs[i], cause: cause})
	}
	for i := range steps {
		if steps[i].at.Before(issue.CreatedAt) {
			steps[i].at = issue.CreatedAt
		}
	}
	slices.SortStableFunc(steps, func(a, b lifeReplayStep) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		if a.order != b.order {
			return a.order - b.order
		}
		if a.event != nil && b.event != nil {
			return cmp.Compare(a.event.ID, b.event.ID)
		}
		return 0
	})

	stateNow := func() State {
		var reviews []string
		for _, l := range links {
			if l.active {
				reviews = append(reviews, l.reasons...)
			}
		}
		return lifeStateRule(facts, reviews).state
	}
	apply := func(s lifeReplayStep) {
		if s.event == nil {
			links[s.pull].active = s.start
			return
		}
		lifeApplyEvent(&facts, *s.event, false)
	}

	var out []Transition
	var cur State
	i := 0
	// The first state: creation plus whatever happened in the same instant.
	for ; i < len(steps) && !steps[i].at.After(issue.CreatedAt); i++ {
		apply(steps[i])
	}
	cur = stateNow()
	out = append(out, Transition{Issue: issue.Number, To: cur, At: issue.CreatedAt, Cause: "created",
		Estimate: lifeReadEstimate(facts.Labels).size})
	for i < len(steps) {
		at := steps[i].at
		if !now.IsZero() && at.After(now) {
			break
		}
		seen, cause := cur, ""
		for ; i < len(steps) && steps[i].at.Equal(at); i++ {
			apply(steps[i])
			if s := stateNow(); s != seen {
				seen, cause = s, steps[i].cause
			}
		}
		if seen != cur {
			out = append(out, Transition{Issue: issue.Number, From: cur, To: seen, At: at, Cause: cause,
				Estimate: lifeReadEstimate(facts.Labels).size})
			cur = seen
		}
	}

	// What the issue is now, judged as Infer judges it.
	var openPulls []*IssueFacts
	for k := range pulls {
		if pulls[k].IsPull && !pulls[k].Closed && pulls[k].Number != issue.Number {
			openPulls = append(openPulls, &pulls[k])
		}
	}
	final := lifeStateRule(issue, newLifePullIndex(openPulls, repo).linksTo(issue)).state
	if final != cur {
		at := now
		if issue.Closed && !issue.ClosedAt.IsZero() && !issue.ClosedAt.Before(out[len(out)-1].At) {
			at = issue.ClosedAt
		}
		if at.Before(out[len(out)-1].At) {
			at = out[len(out)-1].At
		}
		out = append(out, Transition{Issue: issue.Number, From: cur, To: final, At: at, Cause: "reconcile",
			Estimate: lifeReadEstimate(issue.Labels).size})
	}
	return out
}

func lifeAbs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// lifeCreationFacts undoes evs, newest first, on the issue's current
// labels, assignees and milestone, and returns the issue as it was created:
// open, with what remains.
func lifeCreationFacts(issue IssueFacts, evs []TimelineEvent) IssueFacts {
	f := issue
	f.Labels = slices.Clone(issue.Labels)
	f.Assignees = slices.Clone(issue.Assignees)
	f.Closed, f.ClosedAt = false, time.Time{}
	// A milestone event keeps only the new value: the one before is the
	// previous event's, and before the first there was none, or an unknown
	// one (-1) when the first event removes it.
	milestoneBefore := map[int]int64{}
	var last int64
	first := true
	for i, e := range evs {
		if e.Kind != "milestone" {
			continue
		}
		switch {
		case !first:
			milestoneBefore[i] = last
		case e.Removed || e.Milestone == 0:
			milestoneBefore[i] = -1
		default:
			milestoneBefore[i] = 0
		}
		first = false
		last = e.Milestone
		if e.Removed {
			last = 0
		}
	}
	for i := len(evs) - 1; i >= 0; i-- {
		e := evs[i]
		if e.Kind == "milestone" {
			f.Milestone = milestoneBefore[i]
			continue
		}
		lifeApplyEvent(&f, e, true)
	}
	return f
}

// lifeApplyEvent applies one timeline event to facts, or undoes it. Undo
// never touches open/closed: an issue is always created open. Milestone
// events are undone by the caller, which knows the previous value.
func lifeApplyEvent(f *IssueFacts, e TimelineEvent, undo bool) {
	add := !e.Removed
	if undo {
		add = !add
	}
	switch e.Kind {
	case "label":
		if e.Label == "" {
			return
		}
		f.Labels = lifeSetMember(f.Labels, e.Label, add, true)
	case "assignees":
		if e.Assignee == "" {
			return
		}
		f.Assignees = lifeSetMember(f.Assignees, e.Assignee, add, false)
	case "milestone":
		if undo {
			return
		}
		f.Milestone = e.Milestone
		if e.Removed {
			f.Milestone = 0
		}
	case "close":
		if !undo {
			f.Closed, f.ClosedAt = true, e.CreatedAt
		}
	case "reopen":
		if !undo {
			f.Closed, f.ClosedAt = false, time.Time{}
		}
	}
}

// lifeSetMember adds or removes v from set; labels compare
// case-insensitively, logins exactly.
func lifeSetMember(set []string, v string, add, foldCase bool) []string {
	eq := func(s string) bool {
		if foldCase {
			return strings.EqualFold(s, v)
		}
		return s == v
	}
	i := slices.IndexFunc(set, eq)
	switch {
	case add && i < 0:
		return append(slices.Clone(set), v)
	case !add && i >= 0:
		return slices.Delete(slices.Clone(set), i, i+1)
	}
	return set
}
