package signin

import (
	"context"
	"slices"
	"strings"

	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/tools"
)

// Viewer is who a page request comes from: a person signed in with Gitea,
// whose scope differs per project, or a bearer token, whose scopes hold on
// every project.
type Viewer struct {
	// Name is the Gitea login, or the token's name.
	Name string
	// SignedIn is set for a Gitea session.
	SignedIn bool
	// SessionID is the session's id (for logs and `commitea sessions`).
	SessionID int64

	tokenScopes []string
	levels      map[string]string // lower-case "owner/repo" -> read, write or approve
}

// TokenViewer is the viewer a bearer token makes.
func TokenViewer(name string, scopes []string) Viewer {
	return Viewer{Name: name, tokenScopes: slices.Clone(scopes)}
}

// rank orders the scopes a session can hold; each includes those before.
var rank = []string{tools.ScopeRead, tools.ScopeWrite, tools.ScopeApprove}

// Can reports whether the viewer holds scope on project ("owner/repo").
func (v Viewer) Can(project, scope string) bool {
	if !v.SignedIn {
		return slices.Contains(v.tokenScopes, scope)
	}
	held := slices.Index(rank, v.levels[strings.ToLower(project)])
	want := slices.Index(rank, scope)
	return held >= 0 && want >= 0 && held >= want
}

// CanAll reports whether the viewer holds scope on every one of projects.
func (v Viewer) CanAll(projects []string, scope string) bool {
	for _, p := range projects {
		if !v.Can(p, scope) {
			return false
		}
	}
	return true
}

// Level maps a person's Gitea access mode on a repository, and whether
// the repository is private, to the scope they hold there in CommiTea
// ("" for none). See the package documentation for the table.
func Level(mode string, private bool) string {
	switch mode {
	case gitea.AccessOwner, gitea.AccessAdmin:
		return tools.ScopeApprove
	case gitea.AccessWrite:
		return tools.ScopeWrite
	case gitea.AccessRead:
		return tools.ScopeRead
	}
	if !private {
		return tools.ScopeRead
	}
	return ""
}

type viewerKey struct{}

// WithViewer stores the viewer of a request in its context.
func WithViewer(ctx context.Context, v Viewer) context.Context {
	return context.WithValue(ctx, viewerKey{}, v)
}

// ViewerFrom returns the viewer stored by WithViewer.
func ViewerFrom(ctx context.Context) (Viewer, bool) {
	v, ok := ctx.Value(viewerKey{}).(Viewer)
	return v, ok
}
