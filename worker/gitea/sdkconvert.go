package gitea

import sdk "code.gitea.io/sdk/gitea"

// Conversions from the SDK's types into this package's, so callers keep one
// set of types for API reads and webhook payloads alike. Fields the SDK does
// not decode stay zero: Issue.Assignee (the single assignee of servers
// before 1.12, which also fill Assignees), PullRequestMeta.Draft and
// PullRequestMeta.HTMLURL.

func userFromSDK(u *sdk.User) *User {
	if u == nil {
		return nil
	}
	return &User{ID: u.ID, Login: u.UserName, FullName: u.FullName, Email: u.Email}
}

func usersFromSDK(us []*sdk.User) []User {
	if us == nil {
		return nil
	}
	out := make([]User, 0, len(us))
	for _, u := range us {
		if u != nil {
			out = append(out, *userFromSDK(u))
		}
	}
	return out
}

func labelFromSDK(l *sdk.Label) Label {
	if l == nil {
		return Label{}
	}
	return Label{ID: l.ID, Name: l.Name, Exclusive: l.Exclusive, IsArchived: l.IsArchived,
		Color: l.Color, Description: l.Description, URL: l.URL}
}

func labelsFromSDK(ls []*sdk.Label) []Label {
	if ls == nil {
		return nil
	}
	out := make([]Label, 0, len(ls))
	for _, l := range ls {
		if l != nil {
			out = append(out, labelFromSDK(l))
		}
	}
	return out
}

func milestoneFromSDK(m *sdk.Milestone) Milestone {
	if m == nil {
		return Milestone{}
	}
	return Milestone{ID: m.ID, Title: m.Title, Description: m.Description, State: string(m.State),
		OpenIssues: m.OpenIssues, ClosedIssues: m.ClosedIssues, CreatedAt: m.Created,
		UpdatedAt: m.Updated, ClosedAt: m.Closed, DueOn: m.Deadline}
}

func milestonePtrFromSDK(m *sdk.Milestone) *Milestone {
	if m == nil {
		return nil
	}
	out := milestoneFromSDK(m)
	return &out
}

func issueFromSDK(i *sdk.Issue) Issue {
	if i == nil {
		return Issue{}
	}
	out := Issue{
		ID:        i.ID,
		URL:       i.URL,
		HTMLURL:   i.HTMLURL,
		Number:    i.Index,
		User:      userFromSDK(i.Poster),
		Title:     i.Title,
		Body:      i.Body,
		Ref:       i.Ref,
		Labels:    labelsFromSDK(i.Labels),
		Milestone: milestonePtrFromSDK(i.Milestone),
		Assignees: usersFromSDK(i.Assignees),
		State:     string(i.State),
		IsLocked:  i.IsLocked,
		Comments:  i.Comments,
		CreatedAt: i.Created,
		UpdatedAt: i.Updated,
		ClosedAt:  i.Closed,
		DueDate:   i.Deadline,
	}
	if i.PullRequest != nil {
		out.PullRequest = &PullRequestMeta{Merged: i.PullRequest.HasMerged, MergedAt: i.PullRequest.Merged}
	}
	if i.Repository != nil {
		r := *i.Repository
		out.Repository = &RepositoryMeta{ID: r.ID, Name: r.Name, Owner: r.Owner, FullName: r.FullName}
	}
	return out
}

func repositoryFromSDK(r *sdk.Repository) *Repository {
	if r == nil {
		return nil
	}
	return &Repository{ID: r.ID, Owner: userFromSDK(r.Owner), Name: r.Name, FullName: r.FullName,
		HTMLURL: r.HTMLURL, DefaultBranch: r.DefaultBranch, Private: r.Private}
}

func branchFromSDK(b *sdk.PRBranchInfo) *PRBranch {
	if b == nil {
		return nil
	}
	return &PRBranch{Label: b.Name, Ref: b.Ref, Sha: b.Sha, RepoID: b.RepoID, Repo: repositoryFromSDK(b.Repository)}
}

func pullFromSDK(p *sdk.PullRequest) PullRequest {
	if p == nil {
		return PullRequest{}
	}
	return PullRequest{
		ID:                 p.ID,
		URL:                p.URL,
		Number:             p.Index,
		User:               userFromSDK(p.Poster),
		Title:              p.Title,
		Body:               p.Body,
		Labels:             labelsFromSDK(p.Labels),
		Milestone:          milestonePtrFromSDK(p.Milestone),
		Assignee:           userFromSDK(p.Assignee),
		Assignees:          usersFromSDK(p.Assignees),
		RequestedReviewers: usersFromSDK(p.RequestedReviewers),
		State:              string(p.State),
		Draft:              p.Draft,
		IsLocked:           p.IsLocked,
		Comments:           p.Comments,
		HTMLURL:            p.HTMLURL,
		Mergeable:          p.Mergeable,
		Merged:             p.HasMerged,
		MergedAt:           p.Merged,
		MergeCommitSha:     deref(p.MergedCommitID),
		MergedBy:           userFromSDK(p.MergedBy),
		Base:               branchFromSDK(p.Base),
		Head:               branchFromSDK(p.Head),
		DueDate:            p.Deadline,
		CreatedAt:          deref(p.Created),
		UpdatedAt:          deref(p.Updated),
		ClosedAt:           p.Closed,
	}
}

func commentFromSDK(c *sdk.Comment) Comment {
	if c == nil {
		return Comment{}
	}
	return Comment{ID: c.ID, HTMLURL: c.HTMLURL, PullRequestURL: c.PRURL, IssueURL: c.IssueURL,
		User: userFromSDK(c.Poster), Body: c.Body, CreatedAt: c.Created, UpdatedAt: c.Updated}
}

func trackedTimeFromSDK(t *sdk.TrackedTime) TrackedTime {
	if t == nil {
		return TrackedTime{}
	}
	out := TrackedTime{ID: t.ID, Created: t.Created, Time: t.Time, UserID: t.UserID, UserName: t.UserName, IssueID: t.IssueID}
	if t.Issue != nil {
		is := issueFromSDK(t.Issue)
		out.Issue = &is
	}
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
