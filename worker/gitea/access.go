package gitea

import (
	"context"
	"fmt"
	"net/http"

	sdk "code.gitea.io/sdk/gitea"
)

// Who may see what: the reads sign-in needs. A person's permission on a
// repository is read with CommiTea's own token (Gitea answers others'
// permissions only to a site admin or a repository admin); the person's
// own OAuth2 access token is used once, to learn who they are.

// Access modes in Gitea's collaborator-permission answer.
const (
	AccessNone  = "none"
	AccessRead  = "read"
	AccessWrite = "write"
	AccessAdmin = "admin"
	AccessOwner = "owner"
)

// RepoPermission returns login's access mode on owner/repo ("none",
// "read", "write", "admin" or "owner"), organisation and team grants and
// the repository's visibility included. A login Gitea does not know is
// ErrNotFound; a token not allowed to ask is an *APIError with status 403.
func (c *Client) RepoPermission(ctx context.Context, owner, repo, login string) (string, error) {
	path := repoPath(owner, repo) + "/collaborators/" + login + "/permission"
	p, _, err := sdkCall(ctx, c, http.MethodGet, path, retryByMethod, func(cl *sdk.Client) (*sdk.CollaboratorPermissionResult, *sdk.Response, error) {
		return cl.CollaboratorPermission(owner, repo, login)
	})
	if err != nil {
		return "", fmt.Errorf("permission of %s on %s/%s: %w", login, owner, repo, err)
	}
	return string(p.Permission), nil
}

// GetRepository reads a repository (its visibility, for one).
func (c *Client) GetRepository(ctx context.Context, owner, repo string) (Repository, error) {
	r, _, err := sdkCall(ctx, c, http.MethodGet, repoPath(owner, repo), retryByMethod, func(cl *sdk.Client) (*sdk.Repository, *sdk.Response, error) {
		return cl.GetRepo(owner, repo)
	})
	if err != nil {
		return Repository{}, fmt.Errorf("get repository %s/%s: %w", owner, repo, err)
	}
	return *repositoryFromSDK(r), nil
}

// CurrentUser is the user the client's token belongs to.
func (c *Client) CurrentUser(ctx context.Context) (User, error) {
	u, _, err := sdkCall(ctx, c, http.MethodGet, "/user", retryByMethod, func(cl *sdk.Client) (*sdk.User, *sdk.Response, error) {
		return cl.GetMyUserInfo()
	})
	if err != nil {
		return User{}, fmt.Errorf("current user: %w", err)
	}
	return *userFromSDK(u), nil
}

// WithToken is a client for the same server and transport acting with
// another token, e.g. a person's OAuth2 access token.
func (c *Client) WithToken(token string) *Client {
	cp := *c
	cp.token = token
	return &cp
}
