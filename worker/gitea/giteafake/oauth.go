package giteafake

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The OAuth2 provider, as Gitea's routers/web/auth/oauth2_provider.go
// behaves: applications registered through the API, a login page, the
// authorize endpoint (PKCE S256 or plain; public clients must use it), the
// grant page shown unless a confidential client was granted before, and
// the token endpoint with client authentication in the form or as basic
// auth. Codes live 10 minutes and work once; access tokens an hour.
const (
	authorizationCodeLifetime = 10 * time.Minute
	accessTokenLifetime       = time.Hour
	// webCookie is Gitea's session cookie name.
	webCookie = "i_like_gitea"
)

type oauthApp struct {
	id           int64
	owner        string
	name         string
	clientID     string
	secret       string
	redirectURIs []string
	confidential bool
	created      time.Time
}

type authCode struct {
	app                      *oauthApp
	login, scope, redirect   string
	challenge, method, nonce string
	expires                  time.Time
}

type refreshToken struct {
	app          *oauthApp
	login, scope string
}

// pendingGrant is what Gitea keeps in the browser's session between the
// grant page and its form's POST.
type pendingGrant struct {
	clientID, state, redirect, challenge, method string
}

type webSession struct {
	login   string
	pending *pendingGrant
}

type oauthState struct {
	apps      []*oauthApp
	nextAppID int64
	granted   map[string]bool // clientID + "\x00" + login
	codes     map[string]*authCode
	refresh   map[string]refreshToken
	appTmpl   obj // recorded-shape OAuth2Application
	tokenTmpl obj // recorded-shape access token answer
}

func (o *oauthState) init() {
	o.nextAppID = 1
	o.granted = map[string]bool{}
	o.codes = map[string]*authCode{}
	o.refresh = map[string]refreshToken{}
}

// RegisterOAuthApp registers an OAuth2 application owned by the service
// user, as Settings → Applications does in Gitea, and returns its client
// id and secret.
func (s *Server) RegisterOAuthApp(name string, redirectURIs []string, confidential bool) (clientID, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.addOAuthApp(serviceLogin, name, redirectURIs, confidential)
	return a.clientID, a.secret
}

// SetOAuthRedirectURIs replaces an application's redirect URIs.
func (s *Server) SetOAuthRedirectURIs(clientID string, uris []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.appByClientID(clientID); a != nil {
		a.redirectURIs = slices.Clone(uris)
	}
}

// OAuthApp is a registered application as the fake holds it.
type OAuthApp struct {
	ID           int64
	Name         string
	ClientID     string
	ClientSecret string
	RedirectURIs []string
	Confidential bool
}

// OAuthApps lists the registered applications with their current secrets.
func (s *Server) OAuthApps() []OAuthApp {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []OAuthApp
	for _, a := range s.acct.oauth.apps {
		out = append(out, OAuthApp{ID: a.id, Name: a.name, ClientID: a.clientID, ClientSecret: a.secret, RedirectURIs: slices.Clone(a.redirectURIs), Confidential: a.confidential})
	}
	return out
}

func (s *Server) addOAuthApp(owner, name string, uris []string, confidential bool) *oauthApp {
	o := &s.acct.oauth
	a := &oauthApp{id: o.nextAppID, owner: owner, name: name, clientID: uuid(), secret: "gto_" + randomToken(),
		redirectURIs: slices.Clone(uris), confidential: confidential, created: s.now()}
	o.nextAppID++
	o.apps = append(o.apps, a)
	return a
}

func (s *Server) appByClientID(id string) *oauthApp {
	for _, a := range s.acct.oauth.apps {
		if a.clientID == id {
			return a
		}
	}
	return nil
}

// uuid is a random version-4 UUID, the form of Gitea's client ids.
func uuid() string {
	b := []byte(randomToken()[:32])
	b[12] = '4'
	return string(b[:8]) + "-" + string(b[8:12]) + "-" + string(b[12:16]) + "-" + string(b[16:20]) + "-" + string(b[20:32])
}

func (s *Server) renderApp(a *oauthApp, withSecret bool) obj {
	o := clone(s.acct.oauth.appTmpl)
	o["id"], o["name"], o["client_id"], o["redirect_uris"] = a.id, a.name, a.clientID, slices.Clone(a.redirectURIs)
	o["confidential_client"], o["created"] = a.confidential, a.created.Format(time.RFC3339)
	o["client_secret"] = ""
	if withSecret {
		o["client_secret"] = a.secret
	}
	return o
}

// routeOAuthApps serves /user/applications/oauth2[/{id}] for the doer's own
// applications. The secret is shown only when made: on create and on
// PATCH, which (as in Gitea) regenerates it.
func (s *Server) routeOAuthApps(doer, method string, rest []string, body []byte) reply {
	if len(rest) == 0 {
		switch method {
		case http.MethodGet:
			var out []any
			for _, a := range s.acct.oauth.apps {
				if a.owner == doer {
					out = append(out, s.renderApp(a, false))
				}
			}
			return s.page("/user/applications/oauth2", nil, out)
		case http.MethodPost:
			in, errRep := decodeAppOptions(s, body)
			if errRep != nil {
				return *errRep
			}
			a := s.addOAuthApp(doer, in.Name, in.RedirectURIs, in.confidential())
			return reply{status: http.StatusCreated, body: s.renderApp(a, true)}
		}
		return s.replyErr(s.notFound())
	}
	id, err := strconv.ParseInt(rest[0], 10, 64)
	i := slices.IndexFunc(s.acct.oauth.apps, func(a *oauthApp) bool { return a.id == id && a.owner == doer })
	if err != nil || len(rest) != 1 || i < 0 {
		return s.replyErr(s.notFound())
	}
	a := s.acct.oauth.apps[i]
	switch method {
	case http.MethodGet:
		return reply{status: http.StatusOK, body: s.renderApp(a, false)}
	case http.MethodPatch:
		in, errRep := decodeAppOptions(s, body)
		if errRep != nil {
			return *errRep
		}
		a.name, a.redirectURIs, a.confidential = in.Name, slices.Clone(in.RedirectURIs), in.confidential()
		a.secret = "gto_" + randomToken()
		return reply{status: http.StatusOK, body: s.renderApp(a, true)}
	case http.MethodDelete:
		s.acct.oauth.apps = slices.Delete(s.acct.oauth.apps, i, i+1)
		return reply{status: http.StatusNoContent}
	}
	return s.replyErr(s.notFound())
}

type appOptions struct {
	Name               string   `json:"name"`
	RedirectURIs       []string `json:"redirect_uris"`
	ConfidentialClient *bool    `json:"confidential_client"`
}

// confidential defaults to true, as Gitea's API does when the field is
// left out.
func (o appOptions) confidential() bool { return o.ConfidentialClient == nil || *o.ConfidentialClient }

func decodeAppOptions(s *Server, body []byte) (appOptions, *reply) {
	var in appOptions
	if err := json.Unmarshal(body, &in); err != nil {
		r := s.replyErr(s.apiError(http.StatusUnprocessableEntity, err.Error()))
		return in, &r
	}
	if in.Name == "" {
		r := s.replyErr(s.apiError(http.StatusUnprocessableEntity, "[Name]: Required"))
		return in, &r
	}
	for _, u := range in.RedirectURIs {
		if p, err := url.Parse(u); err != nil || p.Scheme == "" {
			r := s.replyErr(s.apiError(http.StatusBadRequest, "invalid redirect URI: "+u))
			return in, &r
		}
	}
	return in, nil
}

// serveWeb answers the forge's pages outside /api/v1: /api/healthz, the
// login page and the OAuth2 endpoints. Called without mu.
func (s *Server) serveWeb(w http.ResponseWriter, r *http.Request, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case r.URL.Path == "/api/healthz" && r.Method == http.MethodGet:
		w.Header().Set("Content-Type", "application/health+json")
		_, _ = w.Write([]byte(`{"status":"pass","description":"Gitea: Git with a cup of tea","checks":{"cache:ping":[{"status":"pass","time":"2026-11-29T21:40:02Z"}],"database:ping":[{"status":"pass","time":"2026-11-29T21:40:02Z"}]}}` + "\n"))
	case r.URL.Path == "/user/login" && r.Method == http.MethodGet:
		s.loginPage(w, r.URL.Query().Get("redirect_to"), "")
	case r.URL.Path == "/user/login" && r.Method == http.MethodPost:
		s.login(w, r, body)
	case r.URL.Path == "/login/oauth/authorize" && r.Method == http.MethodGet:
		s.authorize(w, r)
	case r.URL.Path == "/login/oauth/grant" && r.Method == http.MethodPost:
		s.grant(w, r, body)
	case r.URL.Path == "/login/oauth/access_token" && r.Method == http.MethodPost:
		s.accessToken(w, r, body)
	case r.Method == http.MethodGet && s.issuePage(w, r.URL.Path):
	default:
		http.NotFound(w, r)
	}
}

// issuePage answers an issue's web page, /{owner}/{repo}/issues/{n}, where
// Gitea shows an issue to people (CommiTea's dashboard links there): its
// title, state and description. It reports whether path was one.
func (s *Server) issuePage(w http.ResponseWriter, path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) != 4 || parts[0] != s.st.owner || parts[1] != s.st.name || (parts[2] != "issues" && parts[2] != "pulls") {
		return false
	}
	n, err := strconv.ParseInt(parts[3], 10, 64)
	is := s.st.issues[n]
	if err != nil || is == nil {
		return false
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = issuePageTmpl.Execute(w, struct {
		Repo   string
		Number int64
		Title  string
		State  string
		Body   string
	}{s.st.owner + "/" + s.st.name, is.number, is.title, is.state, is.body})
	return true
}

var issuePageTmpl = template.Must(template.New("issue").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>{{.Title}} · #{{.Number}} · {{.Repo}} · fake Gitea</title></head><body>
<h1>{{.Title}} <span>#{{.Number}}</span></h1><p>{{.Repo}} · {{.State}}</p><pre>{{.Body}}</pre>
</body></html>
`))

var webPages = template.Must(template.New("login").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in · fake Gitea</title></head><body>
<h1>Sign in</h1>{{with .Error}}<p class="error">{{.}}</p>{{end}}
<form method="post" action="/user/login">
<input type="hidden" name="redirect_to" value="{{.RedirectTo}}">
<label>Username <input name="user_name" autofocus></label>
<label>Password <input name="password" type="password"></label>
<button>Sign in</button>
</form></body></html>
{{define "grant"}}<!doctype html>
<html><head><meta charset="utf-8"><title>Authorize application · fake Gitea</title></head><body>
<h1>Authorize {{.App}}</h1>
<p>{{.App}} wants to access your account ({{.Login}}). You will be redirected to {{.RedirectURI}}.</p>
<form method="post" action="/login/oauth/grant">
<input type="hidden" name="client_id" value="{{.ClientID}}">
<input type="hidden" name="state" value="{{.State}}">
<input type="hidden" name="scope" value="{{.Scope}}">
<input type="hidden" name="nonce" value="{{.Nonce}}">
<input type="hidden" name="redirect_uri" value="{{.RedirectURI}}">
<button name="granted" value="true">Authorize Application</button>
<button name="granted" value="false">Cancel</button>
</form></body></html>{{end}}
{{define "error"}}<!doctype html>
<html><head><meta charset="utf-8"><title>Authorization failed · fake Gitea</title></head><body>
<h1>Authorization failed</h1><p>{{.Code}}: {{.Description}}</p></body></html>{{end}}`))

func (s *Server) loginPage(w http.ResponseWriter, redirectTo, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = webPages.Execute(w, struct{ RedirectTo, Error string }{redirectTo, msg})
}

func (s *Server) login(w http.ResponseWriter, r *http.Request, body []byte) {
	form, _ := url.ParseQuery(string(body))
	login, redirectTo := form.Get("user_name"), form.Get("redirect_to")
	if !s.passwordOK(login, form.Get("password")) {
		s.loginPage(w, redirectTo, "Username or password is incorrect.")
		return
	}
	id := randomToken()
	s.acct.web[id] = &webSession{login: login}
	http.SetCookie(w, &http.Cookie{Name: webCookie, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	if !strings.HasPrefix(redirectTo, "/") || strings.HasPrefix(redirectTo, "//") {
		redirectTo = "/"
	}
	http.Redirect(w, r, redirectTo, http.StatusSeeOther)
}

func (s *Server) webSession(r *http.Request) *webSession {
	c, err := r.Cookie(webCookie)
	if err != nil {
		return nil
	}
	return s.acct.web[c.Value]
}

// authorizeError is Gitea's handleAuthorizeError: back to the client's
// redirect URI with error, error_description and state when that URI is
// known good, else an error page.
func (s *Server) authorizeError(w http.ResponseWriter, r *http.Request, code, desc, state, redirect string) {
	if redirect == "" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusBadRequest)
		_ = webPages.ExecuteTemplate(w, "error", struct{ Code, Description string }{code, desc})
		return
	}
	u, _ := url.Parse(redirect)
	q := u.Query()
	q.Set("error", code)
	q.Set("error_description", desc)
	q.Set("state", state)
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	sess := s.webSession(r)
	if sess == nil {
		http.Redirect(w, r, "/user/login?redirect_to="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return
	}
	q := r.URL.Query()
	state, redirect := q.Get("state"), q.Get("redirect_uri")
	app := s.appByClientID(q.Get("client_id"))
	if app == nil {
		s.authorizeError(w, r, "unauthorized_client", "Client ID not registered", state, "")
		return
	}
	if !slices.Contains(app.redirectURIs, redirect) {
		s.authorizeError(w, r, "invalid_request", "Unregistered Redirect URI", state, "")
		return
	}
	if q.Get("response_type") != "code" {
		s.authorizeError(w, r, "unsupported_response_type", "Only code response type is supported.", state, redirect)
		return
	}
	method := q.Get("code_challenge_method")
	switch method {
	case "S256", "plain":
	case "":
		if !app.confidential {
			s.authorizeError(w, r, "invalid_request", "PKCE is required for public clients", state, redirect)
			return
		}
	default:
		s.authorizeError(w, r, "invalid_request", "unsupported code challenge method", state, redirect)
		return
	}
	if app.confidential && s.acct.oauth.granted[app.clientID+"\x00"+sess.login] {
		s.redirectWithCode(w, r, app, sess.login, q.Get("scope"), redirect, q.Get("code_challenge"), method, state)
		return
	}
	sess.pending = &pendingGrant{clientID: app.clientID, state: state, redirect: redirect, challenge: q.Get("code_challenge"), method: method}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = webPages.ExecuteTemplate(w, "grant", struct{ App, Login, ClientID, State, Scope, Nonce, RedirectURI string }{
		app.name, sess.login, app.clientID, state, q.Get("scope"), q.Get("nonce"), redirect})
}

func (s *Server) grant(w http.ResponseWriter, r *http.Request, body []byte) {
	sess := s.webSession(r)
	form, _ := url.ParseQuery(string(body))
	if sess == nil || sess.pending == nil || sess.pending.clientID != form.Get("client_id") ||
		sess.pending.state != form.Get("state") || sess.pending.redirect != form.Get("redirect_uri") {
		http.Error(w, "Bad Request", http.StatusBadRequest)
		return
	}
	p := *sess.pending
	sess.pending = nil
	if form.Get("granted") != "true" {
		s.authorizeError(w, r, "access_denied", "the request is denied", p.state, p.redirect)
		return
	}
	app := s.appByClientID(p.clientID)
	if app == nil {
		s.authorizeError(w, r, "server_error", "A server error occurred", p.state, p.redirect)
		return
	}
	s.acct.oauth.granted[app.clientID+"\x00"+sess.login] = true
	s.redirectWithCode(w, r, app, sess.login, form.Get("scope"), p.redirect, p.challenge, p.method, p.state)
}

func (s *Server) redirectWithCode(w http.ResponseWriter, r *http.Request, app *oauthApp, login, scope, redirect, challenge, method, state string) {
	code := randomToken()
	s.acct.oauth.codes[code] = &authCode{app: app, login: login, scope: scope, redirect: redirect,
		challenge: challenge, method: method, expires: s.opts.Now().Add(authorizationCodeLifetime)}
	u, _ := url.Parse(redirect)
	q := u.Query()
	q.Set("code", code)
	if state != "" {
		q.Set("state", state)
	}
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}

// validChallenge is Gitea's OAuth2AuthorizationCode.ValidateCodeChallenge.
func (c *authCode) validChallenge(verifier string) bool {
	switch c.method {
	case "S256":
		sum := sha256.Sum256([]byte(verifier))
		return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(c.challenge)) == 1
	case "plain":
		return subtle.ConstantTimeCompare([]byte(verifier), []byte(c.challenge)) == 1
	}
	return true // no PKCE asked for at authorize
}

func (s *Server) tokenError(w http.ResponseWriter, code, desc string) {
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(obj{"error": code, "error_description": desc})
}

// accessToken is POST /login/oauth/access_token, following Gitea's
// AccessTokenOAuth, handleAuthorizationCode and handleRefreshToken.
func (s *Server) accessToken(w http.ResponseWriter, r *http.Request, body []byte) {
	form, _ := url.ParseQuery(string(body))
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var in map[string]string
		_ = json.Unmarshal(body, &in)
		form = url.Values{}
		for k, v := range in {
			form.Set(k, v)
		}
	}
	clientID, secret := form.Get("client_id"), form.Get("client_secret")
	if clientID == "" || secret == "" {
		if r.Header.Get("Authorization") != "" {
			user, pass, ok := r.BasicAuth()
			if !ok {
				s.tokenError(w, "invalid_request", "cannot parse basic auth header")
				return
			}
			if clientID != "" && clientID != user {
				s.tokenError(w, "invalid_request", "client_id in request body inconsistent with Authorization header")
				return
			}
			if secret != "" && secret != pass {
				s.tokenError(w, "invalid_request", "client_secret in request body inconsistent with Authorization header")
				return
			}
			clientID, secret = user, pass
		}
	}
	app := s.appByClientID(clientID)
	if app == nil {
		s.tokenError(w, "invalid_client", "cannot load client with client id: '"+clientID+"'")
		return
	}
	if app.confidential && subtle.ConstantTimeCompare([]byte(secret), []byte(app.secret)) != 1 {
		desc := "invalid client secret"
		if secret == "" {
			desc = "invalid empty client secret"
		}
		s.tokenError(w, "unauthorized_client", desc)
		return
	}
	switch form.Get("grant_type") {
	case "authorization_code":
		s.exchangeCode(w, app, form)
	case "refresh_token":
		rt, ok := s.acct.oauth.refresh[form.Get("refresh_token")]
		if !ok {
			s.tokenError(w, "unauthorized_client", "unable to parse refresh token")
			return
		}
		if rt.app != app {
			s.tokenError(w, "invalid_grant", "refresh token belongs to a different client")
			return
		}
		delete(s.acct.oauth.refresh, form.Get("refresh_token")) // Gitea's INVALIDATE_REFRESH_TOKENS
		s.issueTokens(w, app, rt.login, rt.scope)
	default:
		s.tokenError(w, "unsupported_grant_type", "Only refresh_token or authorization_code grant type is supported")
	}
}

func (s *Server) exchangeCode(w http.ResponseWriter, app *oauthApp, form url.Values) {
	redirect := form.Get("redirect_uri")
	if redirect != "" && !slices.Contains(app.redirectURIs, redirect) {
		s.tokenError(w, "unauthorized_client", "unexpected redirect URI")
		return
	}
	code, ok := s.acct.oauth.codes[form.Get("code")]
	if !ok {
		s.tokenError(w, "unauthorized_client", "client is not authorized")
		return
	}
	if s.opts.Now().After(code.expires) {
		delete(s.acct.oauth.codes, form.Get("code"))
		s.tokenError(w, "invalid_grant", "authorization code expired")
		return
	}
	if !code.validChallenge(form.Get("code_verifier")) {
		s.tokenError(w, "unauthorized_client", "failed PKCE code challenge")
		return
	}
	if code.redirect != "" && redirect != code.redirect {
		s.tokenError(w, "invalid_grant", "redirect_uri differs from the original authorization request")
		return
	}
	if code.app != app {
		s.tokenError(w, "invalid_grant", "invalid grant")
		return
	}
	delete(s.acct.oauth.codes, form.Get("code"))
	s.issueTokens(w, app, code.login, code.scope)
}

// issueTokens answers a fresh access and refresh token. Scopes outside
// openid, profile, email and groups limit what the access token may do
// in the API (Gitea 1.22 and later); none means full access.
func (s *Server) issueTokens(w http.ResponseWriter, app *oauthApp, login, scope string) {
	var apiScopes []string
	for _, sc := range strings.Fields(scope) {
		if !slices.Contains([]string{"openid", "profile", "email", "groups"}, sc) {
			apiScopes = append(apiScopes, sc)
		}
	}
	access, refresh := "gta_"+randomToken(), "gtr_"+randomToken()
	s.acct.tokens[access] = accessToken{login: login, scopes: apiScopes, expires: s.opts.Now().Add(accessTokenLifetime)}
	s.acct.oauth.refresh[refresh] = refreshToken{app: app, login: login, scope: scope}
	out := clone(s.acct.oauth.tokenTmpl)
	out["access_token"], out["refresh_token"], out["expires_in"] = access, refresh, int(accessTokenLifetime/time.Second)
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	_ = json.NewEncoder(w).Encode(out)
}
