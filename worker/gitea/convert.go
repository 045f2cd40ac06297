package gitea

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/commitea/commitea/store"
)

// closingRefPattern follows Gitea's own reference keywords: the keyword may
// be followed by a colon, then whitespace, then "#N" or "owner/repo#N".
var closingRefPattern = regexp.MustCompile(
	`(?i)(?:^|[\s(\[])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):?\s+([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)?#(\d+)\b`)

// ParseClosingRefs returns the issue numbers that text closes through a
// keyword (close/closes/closed, fix/fixes/fixed, resolve/resolves/resolved,
// any case) followed by "#N", or by "owner/repo#N" when owner/repo is repo
// (compared case-insensitively). Sorted, without duplicates, nil when none.
func ParseClosingRefs(text, repo string) []int64 {
	var refs []int64
	for _, m := range closingRefPattern.FindAllStringSubmatch(text, -1) {
		if m[1] != "" && !strings.EqualFold(m[1], repo) {
			continue
		}
		n, err := strconv.ParseInt(m[2], 10, 64)
		if err != nil || n <= 0 {
			continue
		}
		refs = append(refs, n)
	}
	slices.Sort(refs)
	return slices.Compact(refs)
}

// Row converts the issue into its mirror row. A pull request seen through
// the issues API has no head branch (ref is empty there): reconcile takes
// pull request rows from ListPulls.
func (i Issue) Row() store.Issue {
	row := store.Issue{
		Number:    i.Number,
		GiteaID:   i.ID,
		IsPull:    i.IsPull(),
		Title:     i.Title,
		Body:      i.Body,
		State:     i.State,
		Labels:    labelNames(i.Labels),
		Milestone: milestoneID(i.Milestone),
		Assignees: logins(i.Assignee, i.Assignees),
		Author:    login(i.User),
		Ref:       i.Ref,
		CreatedAt: i.CreatedAt,
		UpdatedAt: i.UpdatedAt,
		ClosedAt:  i.ClosedAt,
		DueDate:   i.DueDate,
	}
	if i.PullRequest != nil {
		row.Merged = i.PullRequest.Merged
		repo := ""
		if i.Repository != nil {
			repo = i.Repository.FullName
		}
		row.ClosingRefs = ParseClosingRefs(i.Title+"\n"+i.Body, repo)
	}
	row.LastActivityAt = i.UpdatedAt
	return row
}

// Row converts the pull request into its mirror row: IsPull, Ref = head
// branch, Merged, and the issues its title and body close.
func (p PullRequest) Row() store.Issue {
	repo := ""
	if p.Base != nil && p.Base.Repo != nil {
		repo = p.Base.Repo.FullName
	}
	return store.Issue{
		Number:         p.Number,
		GiteaID:        p.ID,
		IsPull:         true,
		Title:          p.Title,
		Body:           p.Body,
		State:          p.State,
		Labels:         labelNames(p.Labels),
		Milestone:      milestoneID(p.Milestone),
		Assignees:      logins(p.Assignee, p.Assignees),
		Author:         login(p.User),
		Ref:            p.HeadBranch(),
		CreatedAt:      p.CreatedAt,
		UpdatedAt:      p.UpdatedAt,
		ClosedAt:       p.ClosedAt,
		DueDate:        p.DueDate,
		Merged:         p.Merged,
		ClosingRefs:    ParseClosingRefs(p.Title+"\n"+p.Body, repo),
		LastActivityAt: p.UpdatedAt,
	}
}

// Row converts the label into its mirror row.
func (l Label) Row() store.Label {
	return store.Label{ID: l.ID, Name: l.Name, Color: l.Color, Description: l.Description, Exclusive: l.Exclusive}
}

// Row converts the milestone into its mirror row.
func (m Milestone) Row() store.Milestone {
	return store.Milestone{
		ID:          m.ID,
		Title:       m.Title,
		Description: m.Description,
		State:       m.State,
		DueOn:       m.DueOn,
		ClosedAt:    m.ClosedAt,
		UpdatedAt:   m.UpdatedAt,
	}
}

// Row converts the comment into its mirror row; the issue number comes from
// the comment's issue or pull request URL.
func (c Comment) Row() store.Comment {
	return store.Comment{
		ID:        c.ID,
		Issue:     c.IssueNumber(),
		Author:    login(c.User),
		Body:      c.Body,
		CreatedAt: c.CreatedAt,
		UpdatedAt: c.UpdatedAt,
	}
}

// Row converts the tracked time into its mirror row. Issue is the issue
// number when the API embedded the issue, otherwise 0 (IssueID then holds
// Gitea's instance-wide id, which the caller must map).
func (t TrackedTime) Row() store.TrackedTime {
	row := store.TrackedTime{ID: t.ID, User: t.UserName, Seconds: t.Time, Created: t.Created}
	if t.Issue != nil {
		row.Issue = t.Issue.Number
	}
	return row
}

// Row converts the timeline entry of issue number issue into a mirror
// timeline event.
func (t TimelineComment) Row(issue int64) store.TimelineEvent {
	ev := store.TimelineEvent{
		ID:        t.ID,
		Issue:     issue,
		Kind:      t.Type,
		Actor:     login(t.User),
		CreatedAt: t.CreatedAt,
	}
	switch t.Type {
	case "label":
		if t.Label != nil {
			ev.Label = t.Label.Name
		}
		// Gitea stores "1" in the body of an added label and nothing for a
		// removed one.
		ev.Removed = t.Body != "1"
	case "assignees", "review_request":
		ev.Assignee = login(t.Assignee)
		ev.Removed = t.RemovedAssignee
	case "milestone":
		ev.Milestone = milestoneID(t.Milestone)
		ev.Removed = t.Milestone == nil && t.OldMilestone != nil
	case "add_dependency", "remove_dependency":
		if t.DependentIssue != nil {
			ev.RefIssue = t.DependentIssue.Number
		}
		ev.Removed = t.Type == "remove_dependency"
	default:
		if t.RefIssue != nil {
			ev.RefIssue = t.RefIssue.Number
		}
	}
	return ev
}

// Rows converts a slice of API values with a Row method into mirror rows.
func Rows[T interface{ Row() R }, R any](items []T) []R {
	out := make([]R, len(items))
	for i, it := range items {
		out[i] = it.Row()
	}
	return out
}

func labelNames(labels []Label) []string {
	names := make([]string, 0, len(labels))
	for _, l := range labels {
		names = append(names, l.Name)
	}
	slices.Sort(names)
	return names
}

func milestoneID(m *Milestone) *int64 {
	if m == nil {
		return nil
	}
	id := m.ID
	return &id
}

// logins returns the sorted assignee logins; older servers fill only the
// single assignee field.
func logins(single *User, many []User) []string {
	out := make([]string, 0, len(many)+1)
	for _, u := range many {
		out = append(out, u.Login)
	}
	if len(out) == 0 && single != nil && single.Login != "" {
		out = append(out, single.Login)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func login(u *User) string {
	if u == nil {
		return ""
	}
	return u.Login
}

// latest returns the later of two instants.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
