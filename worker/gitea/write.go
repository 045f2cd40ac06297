package gitea

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	sdk "code.gitea.io/sdk/gitea"
)

// CreateIssueOptions is the body of POST /repos/{owner}/{repo}/issues.
type CreateIssueOptions struct {
	Title     string   `json:"title"`
	Body      string   `json:"body,omitempty"`
	Assignees []string `json:"assignees,omitempty"`
	Milestone int64    `json:"milestone,omitempty"`
	Labels    []int64  `json:"labels,omitempty"`
}

// CreateIssue files a new issue. It is never retried after the request may
// have reached the server, since a repeat would file a duplicate.
func (c *Client) CreateIssue(ctx context.Context, owner, repo string, opt CreateIssueOptions) (Issue, error) {
	is, _, err := sdkCall(ctx, c, http.MethodPost, repoPath(owner, repo)+"/issues", retryNever,
		func(cl *sdk.Client) (*sdk.Issue, *sdk.Response, error) {
			return cl.CreateIssue(owner, repo, sdk.CreateIssueOption{Title: opt.Title, Body: opt.Body,
				Assignees: opt.Assignees, Milestone: opt.Milestone, Labels: opt.Labels})
		})
	if err != nil {
		return Issue{}, fmt.Errorf("create issue in %s/%s: %w", owner, repo, err)
	}
	return issueFromSDK(is), nil
}

// EditIssueOptions is the body of PATCH /repos/{owner}/{repo}/issues/{n}.
// Only non-nil fields are sent. Milestone 0 clears the milestone; Assignees
// pointing at an empty slice unassigns everybody.
type EditIssueOptions struct {
	Title     *string   `json:"title,omitempty"`
	Body      *string   `json:"body,omitempty"`
	State     *string   `json:"state,omitempty"` // "open" or "closed"
	Milestone *int64    `json:"milestone,omitempty"`
	Assignees *[]string `json:"assignees,omitempty"`
}

// EditIssue changes the issue's native fields. The values are absolute, so
// the request is retried safely.
//
// The SDK's EditIssueOption has no omitempty: it sends every field, the
// unset ones as "title": "" and null. Gitea (and Forgejo) read those as
// "leave as is" (an empty title is ignored, null pointers and a null
// assignee list are skipped), while "milestone": 0 clears the milestone and
// "assignees": [] unassigns everybody, so it expresses every edit this type
// can.
func (c *Client) EditIssue(ctx context.Context, owner, repo string, index int64, opt EditIssueOptions) (Issue, error) {
	edit := sdk.EditIssueOption{Body: opt.Body, Milestone: opt.Milestone}
	if opt.Title != nil {
		if *opt.Title == "" {
			// Gitea ignores an empty title; refuse rather than do nothing.
			return Issue{}, fmt.Errorf("edit issue %s/%s#%d: empty title", owner, repo, index)
		}
		edit.Title = *opt.Title
	}
	if opt.State != nil {
		st := sdk.StateType(*opt.State)
		edit.State = &st
	}
	if opt.Assignees != nil {
		edit.Assignees = *opt.Assignees
		if edit.Assignees == nil {
			edit.Assignees = []string{} // [] unassigns; null would leave them
		}
	}
	is, _, err := sdkCall(ctx, c, http.MethodPatch, issuePath(owner, repo, index), retryAlways,
		func(cl *sdk.Client) (*sdk.Issue, *sdk.Response, error) { return cl.EditIssue(owner, repo, index, edit) })
	if err != nil {
		return Issue{}, fmt.Errorf("edit issue %s/%s#%d: %w", owner, repo, index, err)
	}
	return issueFromSDK(is), nil
}

// AddLabels adds labels (by id) to the issue and returns its labels after.
// Gitea drops other labels of an exclusive label's scope by itself.
func (c *Client) AddLabels(ctx context.Context, owner, repo string, index int64, ids []int64) ([]Label, error) {
	// Adding a label twice leaves one: safe to repeat.
	ls, _, err := sdkCall(ctx, c, http.MethodPost, issuePath(owner, repo, index)+"/labels", retryAlways,
		func(cl *sdk.Client) ([]*sdk.Label, *sdk.Response, error) {
			return cl.AddIssueLabels(owner, repo, index, sdk.IssueLabelsOption{Labels: nonNil(ids)})
		})
	if err != nil {
		return nil, fmt.Errorf("add labels %v to %s/%s#%d: %w", ids, owner, repo, index, err)
	}
	return nonNilLabels(labelsFromSDK(ls)), nil
}

// ReplaceLabels sets the issue's labels to exactly ids.
func (c *Client) ReplaceLabels(ctx context.Context, owner, repo string, index int64, ids []int64) ([]Label, error) {
	ls, _, err := sdkCall(ctx, c, http.MethodPut, issuePath(owner, repo, index)+"/labels", retryByMethod,
		func(cl *sdk.Client) ([]*sdk.Label, *sdk.Response, error) {
			return cl.ReplaceIssueLabels(owner, repo, index, sdk.IssueLabelsOption{Labels: nonNil(ids)})
		})
	if err != nil {
		return nil, fmt.Errorf("replace labels of %s/%s#%d with %v: %w", owner, repo, index, ids, err)
	}
	return nonNilLabels(labelsFromSDK(ls)), nil
}

// RemoveLabel removes one label (by id) from the issue.
func (c *Client) RemoveLabel(ctx context.Context, owner, repo string, index, labelID int64) error {
	path := issuePath(owner, repo, index) + "/labels/" + strconv.FormatInt(labelID, 10)
	_, _, err := sdkCall(ctx, c, http.MethodDelete, path, retryByMethod, func(cl *sdk.Client) (struct{}, *sdk.Response, error) {
		resp, err := cl.DeleteIssueLabel(owner, repo, index, labelID)
		return struct{}{}, resp, err
	})
	if err != nil {
		return fmt.Errorf("remove label %d from %s/%s#%d: %w", labelID, owner, repo, index, err)
	}
	return nil
}

// ClearLabels removes every label from the issue.
func (c *Client) ClearLabels(ctx context.Context, owner, repo string, index int64) error {
	_, _, err := sdkCall(ctx, c, http.MethodDelete, issuePath(owner, repo, index)+"/labels", retryByMethod,
		func(cl *sdk.Client) (struct{}, *sdk.Response, error) {
			resp, err := cl.ClearIssueLabels(owner, repo, index)
			return struct{}{}, resp, err
		})
	if err != nil {
		return fmt.Errorf("clear labels of %s/%s#%d: %w", owner, repo, index, err)
	}
	return nil
}

// CreateLabelOptions is the body of POST /repos/{owner}/{repo}/labels.
type CreateLabelOptions struct {
	Name        string `json:"name"`
	Color       string `json:"color"` // "#rrggbb"; a missing "#" is added
	Exclusive   bool   `json:"exclusive"`
	Description string `json:"description"`
}

// CreateLabel creates a repository label. Not retried once it may have
// reached the server: Gitea would create a second label of the same name.
func (c *Client) CreateLabel(ctx context.Context, owner, repo string, opt CreateLabelOptions) (Label, error) {
	if opt.Color != "" && !strings.HasPrefix(opt.Color, "#") {
		opt.Color = "#" + opt.Color
	}
	l, _, err := sdkCall(ctx, c, http.MethodPost, repoPath(owner, repo)+"/labels", retryNever,
		func(cl *sdk.Client) (*sdk.Label, *sdk.Response, error) {
			return cl.CreateLabel(owner, repo, sdk.CreateLabelOption{Name: opt.Name, Color: opt.Color,
				Exclusive: opt.Exclusive, Description: opt.Description})
		})
	if err != nil {
		return Label{}, fmt.Errorf("create label %q in %s/%s: %w", opt.Name, owner, repo, err)
	}
	return labelFromSDK(l), nil
}

// AddDependency makes issue index depend on dep (which may live in another
// repository). Raw HTTP: the SDK's IssueMeta carries only the index, while
// Gitea wants owner, repo and index. It is idempotent: an existing dependency is left alone,
// including the 500 "issue dependency does already exist" Forgejo answers
// when one appears between the check and the write.
func (c *Client) AddDependency(ctx context.Context, owner, repo string, index int64, dep IssueMeta) error {
	has, err := c.hasDependency(ctx, owner, repo, index, dep)
	if err != nil {
		return fmt.Errorf("add dependency %s/%s#%d -> %s/%s#%d: %w", owner, repo, index, dep.Owner, dep.Repo, dep.Index, err)
	}
	if has {
		return nil
	}
	path := issuePath(owner, repo, index) + "/dependencies"
	err = c.send(ctx, request{method: http.MethodPost, path: path, body: dep, policy: retryAlways, final: dependencyExists}, nil)
	var apiErr *APIError
	if errors.As(err, &apiErr) && dependencyExists(apiErr.Status, apiErr.Message) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("add dependency %s/%s#%d -> %s/%s#%d: %w", owner, repo, index, dep.Owner, dep.Repo, dep.Index, err)
	}
	return nil
}

// RemoveDependency removes the dependency of issue index on dep; removing
// one that does not exist is a no-op. Raw HTTP, as for AddDependency.
func (c *Client) RemoveDependency(ctx context.Context, owner, repo string, index int64, dep IssueMeta) error {
	has, err := c.hasDependency(ctx, owner, repo, index, dep)
	if err != nil {
		return fmt.Errorf("remove dependency %s/%s#%d -> %s/%s#%d: %w", owner, repo, index, dep.Owner, dep.Repo, dep.Index, err)
	}
	if !has {
		return nil
	}
	path := issuePath(owner, repo, index) + "/dependencies"
	if err := c.send(ctx, request{method: http.MethodDelete, path: path, body: dep}, nil); err != nil {
		return fmt.Errorf("remove dependency %s/%s#%d -> %s/%s#%d: %w", owner, repo, index, dep.Owner, dep.Repo, dep.Index, err)
	}
	return nil
}

// dependencyExists recognises Forgejo's answer to a duplicate dependency:
// 500 "issue dependency does already exist".
func dependencyExists(status int, message string) bool {
	return status == http.StatusInternalServerError && strings.Contains(strings.ToLower(message), "already exist")
}

func (c *Client) hasDependency(ctx context.Context, owner, repo string, index int64, dep IssueMeta) (bool, error) {
	deps, err := c.ListDependencies(ctx, owner, repo, index)
	if err != nil {
		return false, err
	}
	want := dep.Owner + "/" + dep.Repo
	for _, d := range deps {
		full := owner + "/" + repo
		if d.Repository != nil && d.Repository.FullName != "" {
			full = d.Repository.FullName
		}
		if d.Number == dep.Index && strings.EqualFold(full, want) {
			return true, nil
		}
	}
	return false, nil
}

// EditMilestoneOptions is the body of PATCH
// /repos/{owner}/{repo}/milestones/{id}. Only non-nil fields are sent.
type EditMilestoneOptions struct {
	Title       *string    `json:"title,omitempty"`
	Description *string    `json:"description,omitempty"`
	State       *string    `json:"state,omitempty"`
	DueOn       *time.Time `json:"due_on,omitempty"`
}

// EditMilestone changes a milestone's native fields. As with EditIssue, the
// SDK sends the unset fields as "title": "" and null, which Gitea leaves as
// they are.
func (c *Client) EditMilestone(ctx context.Context, owner, repo string, id int64, opt EditMilestoneOptions) (Milestone, error) {
	edit := sdk.EditMilestoneOption{Description: opt.Description, Deadline: opt.DueOn}
	if opt.Title != nil {
		if *opt.Title == "" {
			return Milestone{}, fmt.Errorf("edit milestone %d of %s/%s: empty title", id, owner, repo)
		}
		edit.Title = *opt.Title
	}
	if opt.State != nil {
		st := sdk.StateType(*opt.State)
		edit.State = &st
	}
	path := repoPath(owner, repo) + "/milestones/" + strconv.FormatInt(id, 10)
	m, _, err := sdkCall(ctx, c, http.MethodPatch, path, retryAlways,
		func(cl *sdk.Client) (*sdk.Milestone, *sdk.Response, error) {
			return cl.EditMilestone(owner, repo, id, edit)
		})
	if err != nil {
		return Milestone{}, fmt.Errorf("edit milestone %d of %s/%s: %w", id, owner, repo, err)
	}
	return milestoneFromSDK(m), nil
}

// nonNil makes an empty id list encode as [] rather than null.
func nonNil(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

// nonNilLabels keeps the answer's empty label list empty rather than nil,
// as decoding the server's [] did before.
func nonNilLabels(ls []Label) []Label {
	if ls == nil {
		return []Label{}
	}
	return ls
}

// String returns a pointer to s, for the optional fields of edit options.
func String(s string) *string { return &s }

// Int64 returns a pointer to n, for the optional fields of edit options.
func Int64(n int64) *int64 { return &n }

// Strings returns a pointer to ss (non-nil even when empty), for
// EditIssueOptions.Assignees.
func Strings(ss ...string) *[]string {
	if ss == nil {
		ss = []string{}
	}
	return &ss
}
