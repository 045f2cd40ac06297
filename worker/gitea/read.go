package gitea

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	sdk "code.gitea.io/sdk/gitea"
)

// since returns t in UTC, the form Gitea's "since" filter is sent in
// (RFC 3339 with "Z"); the zero time stays zero (no filter).
func since(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}

// ListIssues returns every issue and pull request of the repository, open
// and closed, updated at or after since (all when since is zero). Pull
// requests come in their issue form (PullRequest set, Ref empty); ListPulls
// has their branches.
func (c *Client) ListIssues(ctx context.Context, owner, repo string, updatedSince time.Time) ([]Issue, error) {
	items, err := sdkListAll(ctx, c, repoPath(owner, repo)+"/issues",
		func(cl *sdk.Client, page sdk.ListOptions) ([]*sdk.Issue, *sdk.Response, error) {
			return cl.ListRepoIssues(owner, repo, sdk.ListIssueOption{
				ListOptions: page, State: sdk.StateAll, Type: sdk.IssueTypeAll, Since: since(updatedSince)})
		}, issueFromSDK)
	if err != nil {
		return nil, fmt.Errorf("list issues of %s/%s: %w", owner, repo, err)
	}
	return items, nil
}

// ListPulls returns every pull request of the repository, open and closed.
// Gitea's pulls endpoint has no since filter.
func (c *Client) ListPulls(ctx context.Context, owner, repo string) ([]PullRequest, error) {
	items, err := sdkListAll(ctx, c, repoPath(owner, repo)+"/pulls",
		func(cl *sdk.Client, page sdk.ListOptions) ([]*sdk.PullRequest, *sdk.Response, error) {
			return cl.ListRepoPullRequests(owner, repo, sdk.ListPullRequestsOptions{ListOptions: page, State: sdk.StateAll})
		}, pullFromSDK)
	if err != nil {
		return nil, fmt.Errorf("list pulls of %s/%s: %w", owner, repo, err)
	}
	return items, nil
}

// ListLabels returns the repository's labels.
func (c *Client) ListLabels(ctx context.Context, owner, repo string) ([]Label, error) {
	items, err := sdkListAll(ctx, c, repoPath(owner, repo)+"/labels",
		func(cl *sdk.Client, page sdk.ListOptions) ([]*sdk.Label, *sdk.Response, error) {
			return cl.ListRepoLabels(owner, repo, sdk.ListLabelsOptions{ListOptions: page})
		}, labelFromSDK)
	if err != nil {
		return nil, fmt.Errorf("list labels of %s/%s: %w", owner, repo, err)
	}
	return items, nil
}

// ListMilestones returns the repository's milestones, open and closed.
func (c *Client) ListMilestones(ctx context.Context, owner, repo string) ([]Milestone, error) {
	items, err := sdkListAll(ctx, c, repoPath(owner, repo)+"/milestones",
		func(cl *sdk.Client, page sdk.ListOptions) ([]*sdk.Milestone, *sdk.Response, error) {
			return cl.ListRepoMilestones(owner, repo, sdk.ListMilestoneOption{ListOptions: page, State: sdk.StateAll})
		}, milestoneFromSDK)
	if err != nil {
		return nil, fmt.Errorf("list milestones of %s/%s: %w", owner, repo, err)
	}
	return items, nil
}

// ListDependencies returns the issues issue index depends on (its
// blockers), possibly from other repositories (see their Repository). The
// SDK reads this list correctly; only its dependency writes are wrong.
func (c *Client) ListDependencies(ctx context.Context, owner, repo string, index int64) ([]Issue, error) {
	items, err := sdkListAll(ctx, c, issuePath(owner, repo, index)+"/dependencies",
		func(cl *sdk.Client, page sdk.ListOptions) ([]*sdk.Issue, *sdk.Response, error) {
			return cl.ListIssueDependencies(owner, repo, index, sdk.ListIssueDependenciesOptions{ListOptions: page})
		}, issueFromSDK)
	if err != nil {
		return nil, fmt.Errorf("list dependencies of %s/%s#%d: %w", owner, repo, index, err)
	}
	return items, nil
}

// ListTrackedTimes returns the repository's tracked times created at or
// after since (all when zero).
func (c *Client) ListTrackedTimes(ctx context.Context, owner, repo string, createdSince time.Time) ([]TrackedTime, error) {
	items, err := sdkListAll(ctx, c, repoPath(owner, repo)+"/times",
		func(cl *sdk.Client, page sdk.ListOptions) ([]*sdk.TrackedTime, *sdk.Response, error) {
			return cl.ListRepoTrackedTimes(owner, repo, sdk.ListTrackedTimesOptions{ListOptions: page, Since: since(createdSince)})
		}, trackedTimeFromSDK)
	if err != nil {
		return nil, fmt.Errorf("list tracked times of %s/%s: %w", owner, repo, err)
	}
	return items, nil
}

// ListComments returns the repository's comments (all issues and pulls)
// updated at or after since (all when zero).
func (c *Client) ListComments(ctx context.Context, owner, repo string, updatedSince time.Time) ([]Comment, error) {
	items, err := sdkListAll(ctx, c, repoPath(owner, repo)+"/issues/comments",
		func(cl *sdk.Client, page sdk.ListOptions) ([]*sdk.Comment, *sdk.Response, error) {
			return cl.ListRepoIssueComments(owner, repo, sdk.ListIssueCommentOptions{ListOptions: page, Since: since(updatedSince)})
		}, commentFromSDK)
	if err != nil {
		return nil, fmt.Errorf("list comments of %s/%s: %w", owner, repo, err)
	}
	return items, nil
}

// IssueTimeline returns the raw timeline of issue or pull request index,
// label events included. Raw HTTP: the SDK's TimelineComment declares
// "label" as a list while Gitea sends one object, so decoding any label
// event fails.
func (c *Client) IssueTimeline(ctx context.Context, owner, repo string, index int64) ([]TimelineComment, error) {
	items, err := listAll[TimelineComment](ctx, c, issuePath(owner, repo, index)+"/timeline", nil)
	if err != nil {
		return nil, fmt.Errorf("timeline of %s/%s#%d: %w", owner, repo, index, err)
	}
	return items, nil
}

// GetIssue returns one issue or pull request (in issue form).
func (c *Client) GetIssue(ctx context.Context, owner, repo string, index int64) (Issue, error) {
	is, _, err := sdkCall(ctx, c, http.MethodGet, issuePath(owner, repo, index), retryByMethod,
		func(cl *sdk.Client) (*sdk.Issue, *sdk.Response, error) { return cl.GetIssue(owner, repo, index) })
	if err != nil {
		return Issue{}, fmt.Errorf("get issue %s/%s#%d: %w", owner, repo, index, err)
	}
	return issueFromSDK(is), nil
}

// issuePath is "/repos/{owner}/{repo}/issues/{index}".
func issuePath(owner, repo string, index int64) string {
	return repoPath(owner, repo) + "/issues/" + strconv.FormatInt(index, 10)
}
