package gitea

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// sinceQuery adds Gitea's "since" filter (RFC 3339) when since is set.
func sinceQuery(q url.Values, since time.Time) url.Values {
	if q == nil {
		q = url.Values{}
	}
	if !since.IsZero() {
		q.Set("since", since.UTC().Format(time.RFC3339))
	}
	return q
}

// ListIssues returns every issue and pull request of the repository, open
// and closed, updated at or after since (all when since is zero). Pull
// requests come in their issue form (PullRequest set, Ref empty); ListPulls
// has their branches.
func (c *Client) ListIssues(ctx context.Context, owner, repo string, since time.Time) ([]Issue, error) {
	q := sinceQuery(url.Values{"state": {"all"}}, since)
	items, err := listAll[Issue](ctx, c, repoPath(owner, repo)+"/issues", q)
	if err != nil {
		return nil, fmt.Errorf("list issues of %s/%s: %w", owner, repo, err)
	}
	return items, nil
}

// ListPulls returns every pull request of the repository, open and closed.
// Gitea's pulls endpoint has no since filter.
func (c *Client) ListPulls(ctx context.Context, owner, repo string) ([]PullRequest, error) {
	items, err := listAll[PullRequest](ctx, c, repoPath(owner, repo)+"/pulls", url.Values{"state": {"all"}})
	if err != nil {
		return nil, fmt.Errorf("list pulls of %s/%s: %w", owner, repo, err)
	}
	return items, nil
}

// ListLabels returns the repository's labels.
func (c *Client) ListLabels(ctx context.Context, owner, repo string) ([]Label, error) {
	items, err := listAll[Label](ctx, c, repoPath(owner, repo)+"/labels", nil)
	if err != nil {
		return nil, fmt.Errorf("list labels of %s/%s: %w", owner, repo, err)
	}
	return items, nil
}

// ListMilestones returns the repository's milestones, open and closed.
func (c *Client) ListMilestones(ctx context.Context, owner, repo string) ([]Milestone, error) {
	items, err := listAll[Milestone](ctx, c, repoPath(owner, repo)+"/milestones", url.Values{"state": {"all"}})
	if err != nil {
		return nil, fmt.Errorf("list milestones of %s/%s: %w", owner, repo, err)
	}
	return items, nil
}

// ListDependencies returns the issues issue index depends on (its
// blockers), possibly from other repositories (see their Repository).
func (c *Client) ListDependencies(ctx context.Context, owner, repo string, index int64) ([]Issue, error) {
	path := repoPath(owner, repo) + "/issues/" + strconv.FormatInt(index, 10) + "/dependencies"
	items, err := listAll[Issue](ctx, c, path, nil)
	if err != nil {
		return nil, fmt.Errorf("list dependencies of %s/%s#%d: %w", owner, repo, index, err)
	}
	return items, nil
}

// ListTrackedTimes returns the repository's tracked times created at or
// after since (all when zero).
func (c *Client) ListTrackedTimes(ctx context.Context, owner, repo string, since time.Time) ([]TrackedTime, error) {
	items, err := listAll[TrackedTime](ctx, c, repoPath(owner, repo)+"/times", sinceQuery(nil, since))
	if err != nil {
		return nil, fmt.Errorf("list tracked times of %s/%s: %w", owner, repo, err)
	}
	return items, nil
}

// ListComments returns the repository's comments (all issues and pulls)
// updated at or after since (all when zero).
func (c *Client) ListComments(ctx context.Context, owner, repo string, since time.Time) ([]Comment, error) {
	items, err := listAll[Comment](ctx, c, repoPath(owner, repo)+"/issues/comments", sinceQuery(nil, since))
	if err != nil {
		return nil, fmt.Errorf("list comments of %s/%s: %w", owner, repo, err)
	}
	return items, nil
}

// IssueTimeline returns the raw timeline of issue or pull request index,
// label events included.
func (c *Client) IssueTimeline(ctx context.Context, owner, repo string, index int64) ([]TimelineComment, error) {
	path := repoPath(owner, repo) + "/issues/" + strconv.FormatInt(index, 10) + "/timeline"
	items, err := listAll[TimelineComment](ctx, c, path, nil)
	if err != nil {
		return nil, fmt.Errorf("timeline of %s/%s#%d: %w", owner, repo, index, err)
	}
	return items, nil
}

// GetIssue returns one issue or pull request (in issue form).
func (c *Client) GetIssue(ctx context.Context, owner, repo string, index int64) (Issue, error) {
	var out Issue
	path := repoPath(owner, repo) + "/issues/" + strconv.FormatInt(index, 10)
	if err := c.getJSON(ctx, path, nil, &out); err != nil {
		return Issue{}, fmt.Errorf("get issue %s/%s#%d: %w", owner, repo, index, err)
	}
	return out, nil
}
