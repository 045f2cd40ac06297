package api

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/commitea/commitea/api/signin"
	"github.com/commitea/commitea/worker/tools"
)

// tokenCookie carries a token for browsers after a token link (?token=…)
// set it; it is honoured only while token links are on.
const tokenCookie = "commitea_token"

// browserAuth decides who a request for a person's page (the dashboard,
// the River UI) comes from, in this order: a bearer token in the
// Authorization header (scripts, screenshots); with token links on, a
// token in ?token= (answered with its cookie and a redirect that drops it
// from the address) or in that cookie; a Gitea session (signin). The
// viewer goes into the request's context for the pages.
type browserAuth struct {
	tokens     *authenticator
	signin     *signin.Service // nil: sign-in is not configured
	tokenLinks bool
	secure     bool     // cookies are Secure (https public URL)
	projects   []string // configured projects, "owner/repo"
	log        *slog.Logger
}

// identify returns the request's viewer, or writes the refusal (401, or
// 503 when a session's permissions cannot be confirmed) or the token
// link's redirect and reports ok=false.
func (b *browserAuth) identify(w http.ResponseWriter, r *http.Request) (signin.Viewer, bool) {
	if secret, ok := bearer(r); ok {
		return b.tokenViewer(w, r, secret)
	}
	if b.tokenLinks && r.URL.Query().Has("token") {
		v, ok := b.tokenViewer(w, r, r.URL.Query().Get("token"))
		if ok {
			http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: r.URL.Query().Get("token"), Path: "/", HttpOnly: true,
				SameSite: http.SameSiteLaxMode, Secure: b.secure || r.TLS != nil})
			q := r.URL.Query()
			q.Del("token")
			http.Redirect(w, r, (&url.URL{Path: r.URL.Path, RawQuery: q.Encode()}).String(), http.StatusSeeOther)
		}
		return v, false
	}
	if b.signin != nil {
		v, ok, err := b.signin.Viewer(r)
		if err != nil {
			b.log.ErrorContext(r.Context(), "session check", slog.Any("error", err))
			signin.Page(w, http.StatusServiceUnavailable, "Permissions unconfirmed",
				"CommiTea cannot confirm your permissions with Gitea right now. Reload in a minute.", "", "")
			return signin.Viewer{}, false
		}
		if ok && !b.signin.SameOrigin(r) {
			b.log.WarnContext(r.Context(), "cross-origin request with a session refused", slog.String("origin", r.Header.Get("Origin")), slog.String("login", v.Name))
			signin.Page(w, http.StatusForbidden, "Refused", "This request did not come from a CommiTea page.", "", "")
			return signin.Viewer{}, false
		}
		if ok {
			return v, true
		}
	}
	if b.tokenLinks {
		if c, err := r.Cookie(tokenCookie); err == nil && c.Value != "" {
			return b.tokenViewer(w, r, c.Value)
		}
	}
	b.signInFirst(w, r)
	return signin.Viewer{}, false
}

func (b *browserAuth) tokenViewer(w http.ResponseWriter, r *http.Request, secret string) (signin.Viewer, bool) {
	c, ok := b.tokens.verify(secret)
	if !ok {
		b.signInFirst(w, r)
		return signin.Viewer{}, false
	}
	return signin.TokenViewer(c.Name, c.Scopes), true
}

// signInFirst is the 401 page: a sign-in button when sign-in is
// configured, and what a token holder can do instead.
func (b *browserAuth) signInFirst(w http.ResponseWriter, r *http.Request) {
	var note string
	switch {
	case b.tokenLinks:
		note = "With a CommiTea token: open this page once with ?token=<secret>."
	default:
		note = "With a CommiTea token: send it as Authorization: Bearer <secret> (dashboard links with ?token= are off: dashboard.token_links)."
	}
	if b.signin == nil {
		signin.Page(w, http.StatusUnauthorized, "Token needed", "This page needs a CommiTea token.", "", note)
		return
	}
	next := r.URL.RequestURI()
	if r.Method != http.MethodGet {
		next = "/dashboard/"
	}
	signin.Page(w, http.StatusUnauthorized, "Sign in", "Sign in with your Gitea account to see this page.", signin.LoginURL(next), note)
}

// projectOf returns the configured project a dashboard path
// ("/{owner}/{repo}/…" below the mount) names, matched as Gitea matches
// names, without regard to case.
func (b *browserAuth) projectOf(path string) (string, bool) {
	parts := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 3)
	if len(parts) < 2 {
		return "", false
	}
	for _, p := range b.projects {
		if strings.EqualFold(p, parts[0]+"/"+parts[1]) {
			return p, true
		}
	}
	return "", false
}

// dashboard guards the dashboard mounted at prefix. A token needs the read
// scope; a person sees the index (listing what they may read, filtered by
// the page) and the pages of projects they read. A project they do not
// read answers 404, as one that does not exist: they learn nothing of it.
func (b *browserAuth) dashboard(prefix string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			v, ok := b.identify(w, r)
			if !ok {
				return
			}
			if !v.SignedIn && !v.Can("", tools.ScopeRead) {
				writeError(w, CodeForbidden, "token "+v.Name+" lacks the "+tools.ScopeRead+" scope", "")
				return
			}
			if p, ok := b.projectOf(strings.TrimPrefix(r.URL.Path, prefix)); ok && !v.Can(p, tools.ScopeRead) {
				http.Error(w, "no such project: "+p, http.StatusNotFound)
				return
			}
			next.ServeHTTP(w, r.WithContext(signin.WithViewer(r.Context(), v)))
		})
	}
}

// riverUI guards River's UI: it shows every project's jobs and retries and
// cancels them, so a token needs approve, and a person approve (admin or
// owner in Gitea) on every configured project.
func (b *browserAuth) riverUI(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := b.identify(w, r)
		if !ok {
			return
		}
		switch {
		case !v.SignedIn && !v.Can("", tools.ScopeApprove):
			writeError(w, CodeForbidden, "token "+v.Name+" lacks the "+tools.ScopeApprove+" scope", "")
		case v.SignedIn && !v.CanAll(b.projects, tools.ScopeApprove):
			signin.Page(w, http.StatusForbidden, "Not for you",
				"The job queue shows and changes every project's jobs: it needs admin permission in Gitea on every project CommiTea serves.", "", "")
		default:
			next.ServeHTTP(w, r.WithContext(signin.WithViewer(r.Context(), v)))
		}
	})
}
