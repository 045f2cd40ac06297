package gitea

import (
	"context"
	"fmt"
	"net/http"
	"time"

	sdk "code.gitea.io/sdk/gitea"
)

// ListIssueComments returns the comments of one issue or pull request
// updated at or after since (all when zero).
func (c *Client) ListIssueComments(ctx context.Context, owner, repo string, index int64, updatedSince time.Time) ([]Comment, error) {
	items, err := sdkListAll(ctx, c, issuePath(owner, repo, index)+"/comments",
		func(cl *sdk.Client, page sdk.ListOptions) ([]*sdk.Comment, *sdk.Response, error) {
			return cl.ListIssueComments(owner, repo, index, sdk.ListIssueCommentOptions{ListOptions: page, Since: since(updatedSince)})
		}, commentFromSDK)
	if err != nil {
		return nil, fmt.Errorf("list comments of %s/%s#%d: %w", owner, repo, index, err)
	}
	return items, nil
}

// CreateComment comments on an issue. CommiTea comments only on the one
// issue a project designates for its standup. It is never retried after the
// request may have reached the server, since a repeat would comment twice;
// callers that retry look for their comment first.
func (c *Client) CreateComment(ctx context.Context, owner, repo string, index int64, body string) (Comment, error) {
	cm, _, err := sdkCall(ctx, c, http.MethodPost, issuePath(owner, repo, index)+"/comments", retryNever,
		func(cl *sdk.Client) (*sdk.Comment, *sdk.Response, error) {
			return cl.CreateIssueComment(owner, repo, index, sdk.CreateIssueCommentOption{Body: body})
		})
	if err != nil {
		return Comment{}, fmt.Errorf("comment on %s/%s#%d: %w", owner, repo, index, err)
	}
	return commentFromSDK(cm), nil
}
