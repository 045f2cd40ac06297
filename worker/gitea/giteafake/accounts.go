package giteafake

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"
)

// DefaultPassword is every user's password until SetPassword changes it.
const DefaultPassword = "fake-password"

// accessToken is a token the fake accepts besides Options.Token: a
// personal access token (POST /users/{name}/tokens) or an OAuth2 access
// token. scopes empty means full access, as Gitea grants an OAuth2 token
// asked for no API scope.
type accessToken struct {
	login   string
	scopes  []string
	expires time.Time // zero: never
}

// accounts is who may sign in and with what. Guarded by Server.mu.
type accounts struct {
	passwords map[string]string      // login -> password, when not DefaultPassword
	tokens    map[string]accessToken // secret -> token
	// web holds the forge's own browser sessions (cookie i_like_gitea,
	// Gitea's name) by cookie value, for the OAuth2 login pages.
	web map[string]*webSession
	// collaborators are the repository's explicit grants: login ->
	// "read", "write" or "admin".
	collaborators map[string]string
	oauth         oauthState
	// permissionTmpl is the recorded-shape collaborator-permission answer.
	permissionTmpl obj
	hooks          []*repoHook
	hookTmpl       obj
}

// load makes the accounts empty but for the response shapes.
func (a *accounts) load() error {
	a.passwords = map[string]string{}
	a.tokens = map[string]accessToken{}
	a.web = map[string]*webSession{}
	a.collaborators = map[string]string{}
	a.oauth.init()
	var hooks []obj
	if err := readAPI("hooks.json", &hooks); err != nil {
		return err
	}
	a.hookTmpl = hooks[0]
	for name, dst := range map[string]*obj{
		"collaborator-permission.json": &a.permissionTmpl,
		"oauth2-application.json":      &a.oauth.appTmpl,
		"oauth-access-token.json":      &a.oauth.tokenTmpl,
	} {
		if err := readAPI(name, dst); err != nil {
			return err
		}
	}
	return nil
}

// seedCollaborators grants what the recorded scenario granted: dev was
// added as a write collaborator of ceo/demo; a generated project's team
// all write to it.
func (s *Server) seedCollaborators() {
	for login, u := range s.st.users {
		if login != serviceLogin && u["is_admin"] != true {
			s.acct.collaborators[login] = AccessWrite
		}
	}
}

// randomToken is 20 random bytes in hex, the size of a Gitea access token.
func randomToken() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// serviceLogin owns Options.Token: "ceo", the recorded site admin who owns
// ceo/demo (and administers the generated project).
const serviceLogin = "ceo"

// SetPassword sets a user's password for basic auth and the login page.
func (s *Server) SetPassword(login, password string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.acct.passwords[login] = password
}

func (s *Server) passwordOK(login, password string) bool {
	if _, ok := s.st.users[login]; !ok {
		return false
	}
	want, ok := s.acct.passwords[login]
	if !ok {
		want = DefaultPassword
	}
	return password == want
}

// doer resolves who a request acts as, the way Gitea's API does: the
// Authorization header as "token X" or "Bearer X" (the service token, a
// personal access token or an OAuth2 access token) or as basic auth with a
// user's password. Called with mu held.
func (s *Server) doer(r *http.Request) (string, accessToken, bool) {
	if login, password, ok := r.BasicAuth(); ok {
		if s.passwordOK(login, password) {
			return login, accessToken{login: login}, true
		}
		return "", accessToken{}, false
	}
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok {
		return "", accessToken{}, false
	}
	scheme, tok = strings.ToLower(scheme), strings.TrimSpace(tok)
	if scheme != "token" && scheme != "bearer" {
		return "", accessToken{}, false
	}
	if tok == s.opts.Token {
		return serviceLogin, accessToken{login: serviceLogin}, true
	}
	t, ok := s.acct.tokens[tok]
	if !ok || (!t.expires.IsZero() && s.opts.Now().After(t.expires)) {
		return "", accessToken{}, false
	}
	return t.login, t, true
}

// allows reports whether a token's scopes admit the request, by Gitea's
// rule: each path belongs to a category (issue, repository, user, admin,
// organization, misc), a GET needs read:<category> and anything else
// write:<category>, and write implies read. No scope at all is full access.
func (t accessToken) allows(method, path string) bool {
	if len(t.scopes) == 0 || slices.Contains(t.scopes, "all") {
		return true
	}
	seg := strings.Split(strings.Trim(path, "/"), "/")
	category := "misc"
	switch seg[0] {
	case "user", "users":
		category = "user"
	case "admin":
		category = "admin"
	case "orgs":
		category = "organization"
	case "repos":
		category = "repository"
		if len(seg) > 3 && slices.Contains([]string{"issues", "labels", "milestones", "times"}, seg[3]) {
			category = "issue"
		}
	}
	if slices.Contains(t.scopes, "write:"+category) {
		return true
	}
	return method == http.MethodGet && slices.Contains(t.scopes, "read:"+category)
}

// routeAccount serves the endpoints whose answer depends on who asks
// (the user, their tokens and OAuth2 applications, collaborator grants). It
// reports false for every other path. Called with mu held.
func (s *Server) routeAccount(doer string, method, path string, body []byte) (reply, bool) {
	seg := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(seg) == 1 && seg[0] == "user" && method == http.MethodGet:
		return reply{status: http.StatusOK, body: clone(s.st.users[doer])}, true
	case len(seg) == 3 && seg[0] == "users" && seg[2] == "tokens" && method == http.MethodPost:
		return s.createAccessToken(doer, seg[1], body), true
	case len(seg) >= 3 && seg[0] == "user" && seg[1] == "applications" && seg[2] == "oauth2":
		return s.routeOAuthApps(doer, method, seg[3:], body), true
	case len(seg) == 3 && seg[0] == "repos" && method == http.MethodPatch && s.isRepo(seg[1], seg[2]):
		return s.editRepo(doer, body), true
	case len(seg) >= 4 && seg[0] == "repos" && seg[3] == "hooks" && s.isRepo(seg[1], seg[2]):
		return s.routeHooks(doer, method, seg[4:], body), true
	case len(seg) >= 4 && seg[0] == "repos" && seg[3] == "collaborators":
		if !s.isRepo(seg[1], seg[2]) {
			return s.replyErr(s.notFound()), true
		}
		return s.routeCollaborators(doer, method, seg[4:], body), true
	}
	return reply{}, false
}

// createAccessToken is POST /users/{name}/tokens, which Gitea allows only
// with basic auth as that user (compose-init uses it).
func (s *Server) createAccessToken(doer, login string, body []byte) reply {
	if !strings.EqualFold(doer, login) {
		return s.replyErr(s.apiError(http.StatusForbidden, "reqBasicOrRevProxyAuth: auth method not allowed"))
	}
	var in struct {
		Name   string   `json:"name"`
		Scopes []string `json:"scopes"`
	}
	if err := json.Unmarshal(body, &in); err != nil || in.Name == "" {
		return s.replyErr(s.apiError(http.StatusUnprocessableEntity, "[Name]: Required"))
	}
	secret := randomToken()
	s.acct.tokens[secret] = accessToken{login: login, scopes: in.Scopes}
	id := len(s.acct.tokens)
	return reply{status: http.StatusCreated, body: obj{
		"id": id, "name": in.Name, "sha1": secret, "token_last_eight": secret[len(secret)-8:], "scopes": in.Scopes,
	}}
}

// isRepo reports whether owner/name is the served repository.
func (s *Server) isRepo(owner, name string) bool {
	return strings.EqualFold(owner, s.st.owner) && strings.EqualFold(name, s.st.name)
}
