package tools

import (
	"context"
	"fmt"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
)

// The issue view: one issue's intent (what people wrote in Gitea) beside
// what CommiTea derived from it (lifecycle timeline, forecast range,
// dependencies, and the events and labels each derived value came from).

// IssueView is the issue payload.
type IssueView struct {
	Issue   int64        `json:"issue"`
	Intent  IssueIntent  `json:"intent"`
	Derived IssueDerived `json:"derived"`
	Meta
}

// IssueIntent is what people wrote.
type IssueIntent struct {
	Title         string         `json:"title"`
	Description   string         `json:"description"`
	Comments      []IssueComment `json:"comments"`
	CommentsTotal int            `json:"commentsTotal"`
	Assignee      string         `json:"assignee,omitempty"`
	Assignees     []string       `json:"assignees"`
	Labels        []string       `json:"labels"`
	Milestone     *MilestoneRef  `json:"milestone,omitempty"`
	GiteaState    string         `json:"giteaState"`
	IsPull        bool           `json:"isPull,omitempty"`
	Author        string         `json:"author"`
	CreatedAt     string         `json:"createdAt"`
	ClosedAt      string         `json:"closedAt,omitempty"`
}

// MilestoneRef names a milestone.
type MilestoneRef struct {
	ID    int64  `json:"id"`
	Title string `json:"title"`
}

// IssueComment is one of the latest comments, newest first.
type IssueComment struct {
	Author string `json:"author"`
	At     string `json:"at"`
	Body   string `json:"body"`
}

// IssueDerived is what CommiTea computed.
type IssueDerived struct {
	State           string                `json:"state"`
	Estimate        string                `json:"estimate,omitempty"`
	Flags           []string              `json:"flags,omitempty"`
	Timeline        []TimelineStep        `json:"timeline"`
	Forecast        *IssueRange           `json:"forecast,omitempty"`
	DependsOn       []int64               `json:"dependsOn"`
	DependsOnOther  []string              `json:"dependsOnOtherRepos,omitempty"`
	Blocks          []int64               `json:"blocks"`
	BlockedBy       []int64               `json:"blockedBy,omitempty"`
	Unschedulable   string                `json:"unschedulable,omitempty"`
	Provenance      *scheduler.Provenance `json:"provenance,omitempty"`
	ForecastMissing string                `json:"forecastMissing,omitempty"`
	// Age is started, open work's age against the service level
	// expectation.
	Age *IssueAge `json:"age,omitempty"`
}

// IssueAge is an open, started issue's work item age: calendar days since
// it first started (Since, a local date), the highest cycle-time
// percentile it is past (0: none) and the SLE it is read against (SLEDays
// 0: no SLE yet, too few finished issues).
type IssueAge struct {
	Days          int    `json:"days"`
	Since         string `json:"since"`
	Past          int    `json:"pastPercentile,omitempty"`
	SLEPercentile int    `json:"slePercentile"`
	SLEDays       int    `json:"sleDays"`
}

// TimelineStep is one lifecycle transition and what caused it.
type TimelineStep struct {
	From  string `json:"from,omitempty"`
	To    string `json:"to"`
	At    string `json:"at"`
	Cause string `json:"cause,omitempty"`
}

// IssueRange is an issue's finish-date range.
type IssueRange struct {
	Range
	CriticalFreq float64 `json:"criticalFreq"`
	Assignee     string  `json:"scheduledFor,omitempty"`
}

func (q *query) issue(ctx context.Context) (Answer[any], error) {
	if q.f.IssueID == nil {
		return Answer[any]{}, Errorf(CodeInvalidInput, "filters.issueId", "view issue needs filters.issueId (the issue number)")
	}
	n := *q.f.IssueID
	pid := q.v.Project.ID
	pool := q.s.Pool
	i, err := store.GetIssue(ctx, pool, pid, n)
	if err != nil {
		return Answer[any]{}, notFound(err, "filters.issueId", "issue #%d does not exist in %s (or is not mirrored yet); use view search to find it", n, q.v.Project.FullName())
	}
	comments, total, err := store.LatestComments(ctx, pool, pid, n, CommentsShown)
	if err != nil {
		return Answer[any]{}, err
	}
	deps, blocks, err := store.IssueDependencies(ctx, pool, pid, n)
	if err != nil {
		return Answer[any]{}, err
	}
	ts, err := store.IssueTransitions(ctx, pool, pid, n)
	if err != nil {
		return Answer[any]{}, err
	}

	in := IssueIntent{
		Title: i.Title, Description: Truncate(i.Body, MaxBodyBytes), Assignees: nonNilStrings(i.Assignees),
		Labels: nonNilStrings(i.Labels), GiteaState: i.State, IsPull: i.IsPull, Author: i.Author,
		CreatedAt: day(i.CreatedAt), ClosedAt: dayPtr(i.ClosedAt), CommentsTotal: total,
		Comments: make([]IssueComment, 0, len(comments)),
	}
	if len(i.Assignees) > 0 {
		in.Assignee = i.Assignees[0]
	}
	if i.Milestone != nil {
		in.Milestone = &MilestoneRef{ID: *i.Milestone, Title: q.milestoneTitle(*i.Milestone)}
	}
	for _, c := range comments {
		in.Comments = append(in.Comments, IssueComment{Author: c.Author, At: c.CreatedAt.UTC().Format("2006-01-02T15:04Z"), Body: Truncate(c.Body, MaxCommentBytes)})
	}
	if total > len(comments) {
		q.caps.Note(fmt.Sprintf("comments: shown the latest %d of %d", len(comments), total))
	} else if total == 0 {
		q.caps.Note("comments: the issue has no comments")
	}
	if i.Body == "" {
		q.caps.Note("description: the issue has no description")
	}

	d := IssueDerived{DependsOn: []int64{}, Blocks: nonNilInts(blocks), Timeline: []TimelineStep{}}
	for _, dep := range deps {
		if dep.DependsOnRepo == "" {
			d.DependsOn = append(d.DependsOn, dep.DependsOn)
		} else {
			d.DependsOnOther = append(d.DependsOnOther, fmt.Sprintf("%s#%d", dep.DependsOnRepo, dep.DependsOn))
		}
	}
	steps := make([]TimelineStep, 0, len(ts))
	for _, t := range ts {
		steps = append(steps, TimelineStep{From: t.From, To: t.To, At: t.At.UTC().Format("2006-01-02T15:04Z"), Cause: t.Cause})
	}
	d.Timeline = List(q.caps, lastN(steps, q.caps.Limit), "timeline", "timeline: no lifecycle transition is recorded yet")
	if len(ts) > q.caps.Limit {
		q.caps.Note(fmt.Sprintf("timeline: shown the latest %d of %d transitions", q.caps.Limit, len(ts)))
	}
	if st := q.v.Status[n]; st != nil {
		d.State, d.Estimate, d.BlockedBy, d.Unschedulable = string(st.State), string(st.Estimate), st.BlockedBy, st.Unschedulable
		why := st.Why
		d.Provenance = &why
		for flag, on := range map[string]bool{"blocked": st.Blocked, "stale": st.Stale, "missingEstimate": st.MissingEstimate,
			"discarded": st.Discarded, "aging": st.Aging} {
			if on {
				d.Flags = append(d.Flags, flag)
			}
		}
		sortStrings(d.Flags)
		if a := q.v.Age[n]; a != nil && st.State != scheduler.Done {
			d.Age = &IssueAge{Days: a.Days, Since: a.StartDay, Past: a.Past,
				SLEPercentile: q.v.Data.Flow.SLE.Percentile, SLEDays: q.v.Data.Flow.SLE.Days}
		}
	} else if i.IsPull {
		d.State = "pull request"
		d.ForecastMissing = "pull requests get no lifecycle state or forecast of their own; they move the issues they close"
	} else {
		d.ForecastMissing = "the issue is newer than the latest snapshot; it will appear after the next recompute"
	}
	if f := q.v.Forecast[n]; f != nil {
		if r := rangeOf(f); r != nil {
			d.Forecast = &IssueRange{Range: *r, CriticalFreq: f.CriticalFreq, Assignee: f.Assignee}
		} else if f.Unschedulable != "" {
			d.ForecastMissing = "no finish range: the issue cannot be scheduled (" + f.Unschedulable + ")"
		}
	} else if d.ForecastMissing == "" && d.State == string(scheduler.Done) {
		d.ForecastMissing = "done: no forecast needed"
	}
	out := IssueView{Issue: n, Intent: in, Derived: d}
	out.Meta = q.meta()
	instr := fmt.Sprintf("Summarise #%d from intent and derived; quote dates only as the forecast range.", n)
	if len(d.BlockedBy) > 0 {
		instr = fmt.Sprintf("#%d is blocked by %s; look at those with view issue before suggesting work on it.", n, issueList(d.BlockedBy))
	}
	return Answer[any]{Data: out, Instruction: instr}, nil
}

func lastN[T any](xs []T, n int) []T {
	if len(xs) > n {
		return xs[len(xs)-n:]
	}
	return xs
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilInts(s []int64) []int64 {
	if s == nil {
		return []int64{}
	}
	return s
}
