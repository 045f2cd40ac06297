package gitea_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
)

// TestPermissionsAndVisibility reads what sign-in needs through the SDK
// path: each person's access mode, the repository's visibility, who a
// token belongs to, and the errors a caller must tell apart.
func TestPermissionsAndVisibility(t *testing.T) {
	t.Parallel()
	f := newFake(t, giteafake.Options{})
	f.AddUser("outsider")
	c := newClient(t, f, gitea.Options{})
	ctx := context.Background()
	for login, want := range map[string]string{"ceo": gitea.AccessOwner, "dev": gitea.AccessWrite, "outsider": gitea.AccessRead} {
		got, err := c.RepoPermission(ctx, owner, repo, login)
		if err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", login, got, err, want)
		}
	}
	r, err := c.GetRepository(ctx, owner, repo)
	if err != nil || r.Private || r.FullName != "ceo/demo" {
		t.Fatalf("repository: %+v, %v", r, err)
	}
	f.SetPrivate(true)
	if r, err := c.GetRepository(ctx, owner, repo); err != nil || !r.Private {
		t.Fatalf("private repository: %+v, %v", r, err)
	}
	if got, err := c.RepoPermission(ctx, owner, repo, "outsider"); err != nil || got != gitea.AccessNone {
		t.Errorf("outsider of a private repository: %q, %v", got, err)
	}
	if _, err := c.RepoPermission(ctx, owner, repo, "nobody"); !errors.Is(err, gitea.ErrNotFound) {
		t.Errorf("unknown user: %v", err)
	}
	me, err := c.CurrentUser(ctx)
	if err != nil || me.Login != "ceo" {
		t.Fatalf("current user: %+v, %v", me, err)
	}
	if _, err := c.WithToken("not-a-token").CurrentUser(ctx); !isStatus(err, http.StatusUnauthorized) {
		t.Errorf("unknown token: %v", err)
	}
}

func isStatus(err error, status int) bool {
	var ae *gitea.APIError
	return errors.As(err, &ae) && ae.Status == status
}
