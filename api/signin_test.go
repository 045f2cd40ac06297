package api

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/commitea/commitea/api/dashboard"
	"github.com/commitea/commitea/api/signin"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
	"github.com/commitea/commitea/worker/tools"
)

// signinStack is CommiTea's router over https with sign-in against the
// fake forge: a forecast project the forge serves (ceo/demo, private) and
// one it does not (ceo/empty), the real dashboard, a stand-in River UI,
// and the tools. restart builds the router afresh on the same database,
// as a new process would.
type signinStack struct {
	t        *testing.T
	pool     *store.Pool
	forge    *giteafake.Server
	srv      *httptest.Server
	projects []store.Project
	clientID string
	secret   string
	clock    *testClock

	mu      sync.Mutex
	handler http.Handler
}

type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

const refreshEvery = 10 * time.Minute

func newSigninStack(t *testing.T) *signinStack {
	t.Helper()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	demo, err := store.EnsureProject(ctx, pool, "ceo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	shape := storetest.ProjectShape{Open: 30, Done: 40, People: 3, DepShare: 0.2, Milestones: 2, Seed: 5}
	if err := storetest.SeedProject(ctx, pool, demo.ID, shape, toolNow); err != nil {
		t.Fatal(err)
	}
	f := &worker.Forecaster{Pool: pool, Log: quietLog(), Trials: 200, Now: func() time.Time { return toolNow }}
	if err := f.Recompute(ctx, demo.ID); err != nil {
		t.Fatal(err)
	}
	empty, err := store.EnsureProject(ctx, pool, "ceo", "empty")
	if err != nil {
		t.Fatal(err)
	}
	forge, err := giteafake.New(giteafake.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(forge.Close)
	forge.SetPrivate(true)
	forge.AddUser("outsider")
	forge.SetCollaborator("dev", giteafake.AccessRead)

	s := &signinStack{t: t, pool: pool, forge: forge, projects: []store.Project{demo, empty}, clock: &testClock{now: time.Now()}}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		h := s.handler
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.srv.Close)
	s.clientID, s.secret = forge.RegisterOAuthApp("CommiTea", []string{s.srv.URL + signin.CallbackPath}, true)
	s.restart(s.projects...)
	return s
}

// restart builds the router afresh, serving projects.
func (s *signinStack) restart(projects ...store.Project) {
	t := s.t
	var names []string
	for _, p := range projects {
		names = append(names, p.FullName())
	}
	gc, err := gitea.New(s.forge.URL, s.forge.Token(), gitea.Options{BaseBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, MaxAttempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := signin.New(signin.Config{Pool: s.pool, Gitea: gc, GiteaURL: s.forge.URL, ClientID: s.clientID, ClientSecret: s.secret,
		PublicURL: s.srv.URL, Projects: projects, Refresh: refreshEvery, Log: quietLog(), Now: s.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	board, err := dashboard.New(dashboard.Config{Pool: s.pool, Projects: projects, Log: quietLog(), Prefix: "/dashboard", Now: func() time.Time { return toolNow }})
	if err != nil {
		t.Fatal(err)
	}
	river := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "river ui") })
	h := NewRouter(Config{Log: quietLog(), Tools: tools.NewService(s.pool, projects, quietLog()).Registry(), Tokens: testTokens,
		Dashboard: board.Handler(), RiverUI: river, SignIn: svc, Projects: names, Version: "test"})
	s.mu.Lock()
	s.handler = h
	s.mu.Unlock()
}

// browser is one person's browser: a cookie jar, the test server's
// certificate trusted, redirects not followed, so each hop is checked.
type browser struct {
	t    *testing.T
	c    *http.Client
	base string // the CommiTea test server
}

func (s *signinStack) browser() *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		s.t.Fatal(err)
	}
	c := *s.srv.Client() // a copy: the server hands out one client
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &browser{t: s.t, c: &c, base: s.srv.URL}
}

type page struct {
	status int
	header http.Header
	body   string
	// cookies are the response's Set-Cookie headers, parsed.
	cookies []*http.Cookie
}

func (b *browser) do(method, target string, form url.Values) page {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, header: resp.Header, body: string(data), cookies: resp.Cookies()}
}

func (b *browser) get(target string) page { return b.do(http.MethodGet, target, nil) }

// post sends an empty JSON POST to the test server's path as a page of
// origin would, and returns the status.
func (b *browser) post(path, origin string) int {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", origin)
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// location resolves a redirect's Location against the URL it answered.
func location(from string, p page) string {
	base, _ := url.Parse(from)
	loc, _ := base.Parse(p.header.Get("Location"))
	return loc.String()
}

var hidden = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)

// toCallback signs login in: CommiTea's sign-in link (loginPath), the forge's login
// page and (the first time) its grant page, up to the redirect back to
// CommiTea's callback, which it returns unvisited.
func (s *signinStack) toCallback(b *browser, login, loginPath string) string {
	s.t.Helper()
	target := s.srv.URL + loginPath
	p := b.get(target)
	if p.status != http.StatusSeeOther {
		s.t.Fatalf("sign-in link: %d %s", p.status, p.body)
	}
	target = location(target, p)
	for range 6 {
		if strings.HasPrefix(target, s.srv.URL+signin.CallbackPath) {
			return target
		}
		p = b.get(target)
		switch {
		case p.status == http.StatusSeeOther:
			target = location(target, p)
		case strings.Contains(p.body, `action="/user/login"`):
			redirectTo := ""
			if m := hidden.FindStringSubmatch(p.body); m != nil {
				redirectTo = strings.ReplaceAll(m[2], "&amp;", "&")
			}
			p = b.do(http.MethodPost, s.forge.URL+"/user/login", url.Values{"user_name": {login}, "password": {giteafake.DefaultPassword}, "redirect_to": {redirectTo}})
			target = location(s.forge.URL+"/user/login", p)
		case strings.Contains(p.body, `action="/login/oauth/grant"`):
			form := url.Values{"granted": {"true"}}
			for _, m := range hidden.FindAllStringSubmatch(p.body, -1) {
				form.Set(m[1], strings.ReplaceAll(m[2], "&amp;", "&"))
			}
			p = b.do(http.MethodPost, s.forge.URL+"/login/oauth/grant", form)
			target = location(s.forge.URL+"/login/oauth/grant", p)
		default:
			s.t.Fatalf("sign-in stuck at %s: %d %s", target, p.status, p.body)
		}
	}
	s.t.Fatalf("sign-in did not come back to the callback (at %s)", target)
	return ""
}

// signIn completes the sign-in and returns the callback's answer.
func (s *signinStack) signIn(b *browser, login, next string) page {
	s.t.Helper()
	p := b.get(s.toCallback(b, login, signin.LoginURL(next)))
	if p.status != http.StatusSeeOther {
		s.t.Fatalf("callback for %s: %d %s", login, p.status, p.body)
	}
	return p
}

func cookieNamed(cs []*http.Cookie, name string) *http.Cookie {
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// TestSignInWithGitea is the whole flow with a real client and cookie jar
// against the fake forge: sign-in, pages allowed and refused by each
// person's Gitea permission, the River UI for admins only, a downgrade
// within one refresh, Gitea down, a restart, revocation, sign-out, and
// the session cookie refused by the tool API and MCP.
func TestSignInWithGitea(t *testing.T) {
	t.Parallel()
	s := newSigninStack(t)
	board := s.srv.URL + "/dashboard/ceo/demo/"

	// Not signed in: 401 with a sign-in button back to the page.
	dev := s.browser()
	p := dev.get(board)
	if p.status != http.StatusUnauthorized || !strings.Contains(p.body, `href="/auth/login?next=%2Fdashboard%2Fceo%2Fdemo%2F"`) {
		t.Fatalf("signed out: %d %s", p.status, p.body)
	}

	if css := dev.get(s.srv.URL + signin.StylesheetPath); css.status != http.StatusOK || !strings.HasPrefix(css.header.Get("Content-Type"), "text/css") {
		t.Fatalf("the sign-in pages' stylesheet without a session: %d", css.status)
	}

	// dev reads ceo/demo in Gitea: the board, not the River UI.
	cb := s.signIn(dev, "dev", "/dashboard/ceo/demo/")
	if got := location(s.srv.URL, cb); got != board {
		t.Fatalf("callback went to %s", got)
	}
	c := cookieNamed(cb.cookies, signin.SessionCookie)
	if c == nil || !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Expires.IsZero() {
		t.Fatalf("session cookie under an https public URL: %+v", c)
	}
	if lc := cookieNamed(cb.cookies, "commitea_login"); lc == nil || lc.MaxAge >= 0 {
		t.Fatalf("the sign-in's state cookie is not cleared: %+v", lc)
	}
	if p := dev.get(board); p.status != http.StatusOK || !strings.Contains(p.body, `id="signed-in-as">dev<`) || !strings.Contains(p.body, `action="/auth/logout"`) {
		t.Fatalf("board as dev: %d", p.status)
	}
	if p := dev.get(s.srv.URL + "/riverui/"); p.status != http.StatusForbidden {
		t.Fatalf("River UI as a reader: %d", p.status)
	}
	// The index lists what dev reads: one project, so it goes straight
	// there; ceo/empty (which dev cannot read) is 404.
	if p := dev.get(s.srv.URL + "/dashboard/"); p.status != http.StatusFound || p.header.Get("Location") != "/dashboard/ceo/demo/" {
		t.Fatalf("index as dev: %d %s", p.status, p.header.Get("Location"))
	}
	if p := dev.get(s.srv.URL + "/dashboard/ceo/empty/runway"); p.status != http.StatusNotFound {
		t.Fatalf("unreadable project as dev: %d", p.status)
	}

	// ceo owns ceo/demo (approve) but cannot read ceo/empty, which is not
	// in Gitea: the River UI, which shows every project's jobs, is not
	// his. Served alone, ceo/demo leaves him approve everywhere.
	ceo := s.browser()
	s.signIn(ceo, "ceo", "/riverui/")
	if p := ceo.get(s.srv.URL + "/riverui/"); p.status != http.StatusForbidden {
		t.Fatalf("River UI as the owner of one of two projects: %d", p.status)
	}
	s.restart(s.projects[0])
	if p := ceo.get(s.srv.URL + "/riverui/"); p.status != http.StatusOK || p.body != "river ui" {
		t.Fatalf("River UI as the owner of the one project: %d", p.status)
	}
	if st := ceo.post("/riverui/api/jobs/retry", s.srv.URL); st != http.StatusOK {
		t.Fatalf("retry a job from the River UI's page: %d", st)
	}
	if st := ceo.post("/riverui/api/jobs/retry", "https://other.example"); st != http.StatusForbidden {
		t.Fatalf("retry a job from another origin: %d", st)
	}
	s.restart(s.projects...)

	// outsider has no access: 404 for the project, nothing on the index.
	outsider := s.browser()
	s.signIn(outsider, "outsider", "/dashboard/")
	if p := outsider.get(board); p.status != http.StatusNotFound || strings.Contains(p.body, "Board") {
		t.Fatalf("no access: %d %s", p.status, p.body)
	}
	if p := outsider.get(s.srv.URL + "/dashboard/CEO/Demo/runway"); p.status != http.StatusNotFound {
		t.Fatalf("no access, other case: %d", p.status)
	}
	p = outsider.get(s.srv.URL + "/dashboard/")
	if p.status != http.StatusOK || strings.Contains(p.body, "ceo/demo") || strings.Contains(p.body, "ceo/empty") || !strings.Contains(p.body, "No project here is yours") {
		t.Fatalf("index without access: %d %s", p.status, p.body)
	}
	if p := outsider.get(s.srv.URL + "/riverui/"); p.status != http.StatusForbidden {
		t.Fatalf("River UI without access: %d", p.status)
	}

	// The session cookie opens no tool: /v1/* and /mcp want a bearer.
	for _, call := range []struct{ method, path, body string }{
		{http.MethodGet, "/v1/tools", ""},
		{http.MethodPost, "/v1/tools/query_project", `{"view":"runway"}`},
		{http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`},
		{http.MethodPost, "/mcp/readonly", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
	} {
		req, _ := http.NewRequest(call.method, s.srv.URL+call.path, strings.NewReader(call.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := ceo.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s %s with the owner's session cookie: %d, want 401", call.method, call.path, resp.StatusCode)
		}
	}

	// A downgrade in Gitea takes effect within one refresh: until then the
	// permissions read at sign-in hold, after it dev sees nothing.
	forge := s.forge
	req, _ := http.NewRequest(http.MethodDelete, forge.URL+"/api/v1/repos/ceo/demo/collaborators/dev", nil)
	req.Header.Set("Authorization", "token "+forge.Token())
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("remove dev in the forge: %v %v", resp, err)
	}
	if p := dev.get(board); p.status != http.StatusOK {
		t.Fatalf("dev before the refresh: %d", p.status)
	}
	s.clock.Advance(refreshEvery)
	if p := dev.get(board); p.status != http.StatusNotFound {
		t.Fatalf("dev after one refresh: %d", p.status)
	}
	if p := dev.get(s.srv.URL + "/dashboard/"); p.status != http.StatusOK || strings.Contains(p.body, "ceo/demo") {
		t.Fatalf("index after the downgrade: %d %s", p.status, p.body)
	}
	if p := ceo.get(board); p.status != http.StatusOK { // ceo's permissions are read again too
		t.Fatalf("owner after one refresh: %d", p.status)
	}

	// Gitea down: the last permissions hold for one more interval, then
	// the pages say they cannot be confirmed.
	forge.InjectFault(giteafake.Fault{PathPrefix: "/repos/ceo/demo", Status: http.StatusServiceUnavailable, Times: 1000})
	s.clock.Advance(refreshEvery)
	if p := ceo.get(board); p.status != http.StatusOK {
		t.Fatalf("owner with Gitea down, within the grace: %d", p.status)
	}
	s.clock.Advance(refreshEvery)
	if p := ceo.get(board); p.status != http.StatusServiceUnavailable {
		t.Fatalf("owner with Gitea down for two intervals: %d", p.status)
	}
	forge.ClearFaults()
	if p := ceo.get(board); p.status != http.StatusOK {
		t.Fatalf("owner once Gitea is back: %d", p.status)
	}

	// Sessions live in Postgres: a new process knows them.
	s.restart(s.projects...)
	if p := ceo.get(board); p.status != http.StatusOK {
		t.Fatalf("owner after a restart: %d", p.status)
	}

	// Revoked (what `commitea sessions revoke --login` does): gone at once.
	if n, err := store.RevokeWebSessionsOf(context.Background(), s.pool, "outsider", s.clock.Now()); n != 1 || err != nil {
		t.Fatalf("revoke outsider: %d %v", n, err)
	}
	if p := outsider.get(s.srv.URL + "/dashboard/"); p.status != http.StatusUnauthorized {
		t.Fatalf("revoked session: %d", p.status)
	}

	// A page of another origin cannot act with the session: not sign it
	// out, not retry a job in the River UI.
	u, _ := url.Parse(s.srv.URL)
	if st := ceo.post(signin.LogoutPath, "https://commitea.example.evil"); st != http.StatusForbidden {
		t.Errorf("cross-origin sign-out: %d", st)
	}
	if p := ceo.get(board); p.status != http.StatusOK {
		t.Fatalf("after the cross-origin sign-out: %d", p.status)
	}

	// Sign-out ends the session on the server, not only in the browser.
	stolen := cookieNamed(ceo.c.Jar.Cookies(u), signin.SessionCookie)
	p = ceo.do(http.MethodPost, s.srv.URL+signin.LogoutPath, url.Values{})
	if p.status != http.StatusOK || !strings.Contains(p.body, "signed out") {
		t.Fatalf("sign out: %d %s", p.status, p.body)
	}
	if gone := cookieNamed(p.cookies, signin.SessionCookie); gone == nil || gone.MaxAge >= 0 {
		t.Fatalf("sign-out does not clear the cookie: %+v", gone)
	}
	if p := ceo.get(board); p.status != http.StatusUnauthorized {
		t.Fatalf("after sign-out: %d", p.status)
	}
	replay := s.browser()
	replay.c.Jar.SetCookies(u, []*http.Cookie{stolen})
	if p := replay.get(board); p.status != http.StatusUnauthorized {
		t.Fatalf("the signed-out cookie replayed: %d", p.status)
	}
}

// TestSignInRefusals: a callback whose state is not this browser's, a
// code taken from another sign-in (Gitea's PKCE check fails it), a used
// state, Gitea's refusal, and no Secure cookies under an http public URL.
func TestSignInRefusals(t *testing.T) {
	t.Parallel()
	s := newSigninStack(t)

	// Alice's sign-in reaches its callback; Mallory tries to finish it.
	alice, mallory := s.browser(), s.browser()
	aliceCallback := s.toCallback(alice, "dev", signin.LoginURL("/dashboard/"))
	if p := mallory.get(aliceCallback); p.status != http.StatusBadRequest || !strings.Contains(p.body, "not started in this browser") {
		t.Fatalf("callback from another browser: %d %s", p.status, p.body)
	}
	// Mallory starts a sign-in of her own and swaps in Alice's code: the
	// state is hers, but the verifier does not match Alice's challenge.
	start := mallory.get(s.srv.URL + signin.LoginURL("/dashboard/"))
	authorize, _ := url.Parse(location(s.srv.URL, start))
	code, _ := url.Parse(aliceCallback)
	swapped := s.srv.URL + signin.CallbackPath + "?" + url.Values{"code": {code.Query().Get("code")}, "state": {authorize.Query().Get("state")}}.Encode()
	p := mallory.get(swapped)
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, "failed PKCE code challenge") {
		t.Fatalf("code with another verifier: %d %s", p.status, p.body)
	}
	if cookieNamed(p.cookies, signin.SessionCookie) != nil {
		t.Fatal("a refused sign-in set a session cookie")
	}
	// Alice still finishes hers; its state then works no more.
	if p := alice.get(aliceCallback); p.status != http.StatusSeeOther || cookieNamed(p.cookies, signin.SessionCookie) == nil {
		t.Fatalf("alice's callback: %d %s", p.status, p.body)
	}
	if p := alice.get(aliceCallback); p.status != http.StatusBadRequest {
		t.Fatalf("callback replayed: %d", p.status)
	}
	// The person cancels on Gitea's grant page.
	bob := s.browser()
	start = bob.get(s.srv.URL + signin.LoginURL("/dashboard/"))
	authorize, _ = url.Parse(location(s.srv.URL, start))
	denied := s.srv.URL + signin.CallbackPath + "?" + url.Values{"error": {"access_denied"}, "error_description": {"the request is denied"}, "state": {authorize.Query().Get("state")}}.Encode()
	if p := bob.get(denied); p.status != http.StatusForbidden || !strings.Contains(p.body, "access_denied") {
		t.Fatalf("denied on Gitea: %d %s", p.status, p.body)
	}
	// next cannot send anyone to another site after signing in.
	p = bob.get(s.toCallback(bob, "ceo", signin.LoginPath+"?next="+url.QueryEscape("//evil.example/")))
	if p.status != http.StatusSeeOther || location(s.srv.URL, p) != s.srv.URL+"/dashboard/" {
		t.Fatalf("foreign next: %d to %s", p.status, location(s.srv.URL, p))
	}

	// Under an http public URL the cookies are not Secure.
	gc, _ := gitea.New(s.forge.URL, s.forge.Token(), gitea.Options{})
	plain, err := signin.New(signin.Config{Pool: s.pool, Gitea: gc, GiteaURL: s.forge.URL, ClientID: s.clientID, ClientSecret: s.secret,
		PublicURL: "http://commitea.internal:8080", Projects: s.projects})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	NewRouter(Config{SignIn: plain, Dashboard: http.NotFoundHandler()}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, signin.LoginPath, nil))
	if c := cookieNamed(rec.Result().Cookies(), "commitea_login"); c == nil || c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
		t.Fatalf("state cookie under http: %+v", c)
	}
	if loc := rec.Header().Get("Location"); !strings.Contains(loc, url.QueryEscape("http://commitea.internal:8080/auth/callback")) || !strings.Contains(loc, "code_challenge_method=S256") {
		t.Fatalf("authorize redirect: %s", loc)
	}
}
