package giteafake

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// browser is a cookie-keeping client that does not follow redirects, so a
// test sees each hop of the OAuth2 dance.
func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)

// formFields reads the hidden inputs of a page's form.
func formFields(page string) url.Values {
	v := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(page, -1) {
		v.Set(m[1], strings.ReplaceAll(m[2], "&amp;", "&"))
	}
	return v
}

func do(t *testing.T, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func postForm(t *testing.T, c *http.Client, target string, form url.Values) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, target, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(t, c, req)
}

func get(t *testing.T, c *http.Client, target string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, target, nil)
	return do(t, c, req)
}

// TestOAuth2AuthorizationCodeWithPKCE walks Gitea's flow with the
// golang.org/x/oauth2 client: the authorize request sends an unsigned-in
// browser to the login page and back, the grant page's form is submitted
// once (a confidential client is not asked again), and the code is
// exchanged with the PKCE verifier for a token that reads /api/v1/user as
// the person who signed in. The refusals are Gitea's own answers.
func TestOAuth2AuthorizationCodeWithPKCE(t *testing.T) {
	t.Parallel()
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const callback = "http://commitea.example/auth/callback"
	clientID, secret := s.RegisterOAuthApp("CommiTea", []string{callback}, true)
	conf := &oauth2.Config{ClientID: clientID, ClientSecret: secret, RedirectURL: callback, Scopes: []string{"read:user"},
		Endpoint: oauth2.Endpoint{AuthURL: s.URL + "/login/oauth/authorize", TokenURL: s.URL + "/login/oauth/access_token"}}
	b := browser(t)

	authorize := func(verifier, state string) string {
		t.Helper()
		resp, page := get(t, b, conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)))
		if resp.StatusCode == http.StatusSeeOther && strings.HasPrefix(resp.Header.Get("Location"), "/user/login") {
			redirectTo, _ := url.Parse(resp.Header.Get("Location"))
			resp, _ = postForm(t, b, s.URL+"/user/login", url.Values{"user_name": {"dev"}, "password": {DefaultPassword},
				"redirect_to": {redirectTo.Query().Get("redirect_to")}})
			if resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("login: %d", resp.StatusCode)
			}
			resp, page = get(t, b, s.URL+resp.Header.Get("Location"))
		}
		if resp.StatusCode == http.StatusOK {
			if !strings.Contains(page, "Authorize CommiTea") {
				t.Fatalf("grant page: %s", page)
			}
			form := formFields(page)
			form.Set("granted", "true")
			resp, _ = postForm(t, b, s.URL+"/login/oauth/grant", form)
		}
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("authorize ended with %d", resp.StatusCode)
		}
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if got := loc.Scheme + "://" + loc.Host + loc.Path; got != callback || loc.Query().Get("state") != state {
			t.Fatalf("redirected to %s", loc)
		}
		return loc.Query().Get("code")
	}

	verifier := oauth2.GenerateVerifier()
	code := authorize(verifier, "state-1")
	ctx := context.Background()
	if _, err := conf.Exchange(ctx, code, oauth2.VerifierOption(oauth2.GenerateVerifier())); !tokenError(err, "unauthorized_client", "failed PKCE code challenge") {
		t.Fatalf("wrong verifier: %v", err)
	}
	code = authorize(verifier, "state-2") // no second grant page: already granted
	tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier)); !tokenError(err, "unauthorized_client", "client is not authorized") {
		t.Fatalf("code used twice: %v", err)
	}
	if tok.TokenType != "bearer" || tok.RefreshToken == "" || tok.Expiry.IsZero() {
		t.Fatalf("token = %+v", tok)
	}
	hc := conf.Client(ctx, tok)
	resp, body := get(t, hc, s.URL+"/api/v1/user")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"login":"dev"`) {
		t.Fatalf("/user with the token: %d %s", resp.StatusCode, body)
	}
	// read:user reads the user and nothing else.
	if resp, _ := get(t, hc, s.URL+"/api/v1/repos/ceo/demo/issues"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("issues with a read:user token: %d", resp.StatusCode)
	}

	// A wrong secret, an unregistered redirect URI, a missing PKCE for a
	// public client.
	bad := *conf
	bad.ClientSecret = "wrong"
	if _, err := bad.Exchange(ctx, "whatever"); !tokenError(err, "unauthorized_client", "invalid client secret") {
		t.Fatalf("wrong secret: %v", err)
	}
	bad = *conf
	bad.RedirectURL = "http://evil.example/cb"
	resp, page := get(t, b, bad.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)))
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, "Unregistered Redirect URI") {
		t.Fatalf("unregistered redirect: %d %s", resp.StatusCode, page)
	}
	publicID, _ := s.RegisterOAuthApp("cli", []string{callback}, false)
	bad = *conf
	bad.ClientID = publicID
	resp, _ = get(t, b, bad.AuthCodeURL("s"))
	if loc, _ := url.Parse(resp.Header.Get("Location")); resp.StatusCode != http.StatusSeeOther || loc.Query().Get("error_description") != "PKCE is required for public clients" {
		t.Fatalf("public client without PKCE: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func tokenError(err error, code, desc string) bool {
	var re *oauth2.RetrieveError
	return errors.As(err, &re) && re.ErrorCode == code && re.ErrorDescription == desc
}

// TestCollaboratorPermission checks the permission endpoint's answers:
// owner, write collaborator, public read, none once private, a downgrade
// through the API, who may ask, and an unknown user.
func TestCollaboratorPermission(t *testing.T) {
	t.Parallel()
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.AddUser("outsider")
	perm := func(login string) string {
		var out map[string]any
		getJSON(t, s, "/repos/ceo/demo/collaborators/"+login+"/permission", &out)
		if out["role_name"] != out["permission"] || out["user"].(map[string]any)["login"] != login {
			t.Fatalf("answer = %v", out)
		}
		return out["permission"].(string)
	}
	for login, want := range map[string]string{"ceo": "owner", "dev": "write", "outsider": "read"} {
		if got := perm(login); got != want {
			t.Errorf("%s: %s, want %s", login, got, want)
		}
	}
	api := func(method, path, body, auth string) int {
		req, _ := http.NewRequest(method, s.URL+"/api/v1"+path, strings.NewReader(body))
		req.Header.Set("Authorization", auth)
		req.Header.Set("Content-Type", "application/json")
		resp, _ := do(t, http.DefaultClient, req)
		return resp.StatusCode
	}
	admin := "token " + s.Token()
	if st := api(http.MethodPatch, "/repos/ceo/demo", `{"private":true}`, admin); st != http.StatusOK {
		t.Fatal(st)
	}
	if st := api(http.MethodPut, "/repos/ceo/demo/collaborators/dev", `{"permission":"read"}`, admin); st != http.StatusNoContent {
		t.Fatal(st)
	}
	if got := perm("outsider"); got != "none" {
		t.Errorf("outsider on a private repository: %s", got)
	}
	if got := perm("dev"); got != "read" {
		t.Errorf("dev after the downgrade: %s", got)
	}
	// dev may ask about dev, not about ceo.
	devAuth := "Basic " + basic("dev", DefaultPassword)
	if st := api(http.MethodGet, "/repos/ceo/demo/collaborators/dev/permission", "", devAuth); st != http.StatusOK {
		t.Errorf("own permission: %d", st)
	}
	if st := api(http.MethodGet, "/repos/ceo/demo/collaborators/ceo/permission", "", devAuth); st != http.StatusForbidden {
		t.Errorf("someone else's permission as a reader: %d", st)
	}
	if st := api(http.MethodGet, "/repos/ceo/demo/collaborators/nobody/permission", "", admin); st != http.StatusNotFound {
		t.Errorf("unknown user: %d", st)
	}
}

func basic(user, pass string) string {
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.SetBasicAuth(user, pass)
	return strings.TrimPrefix(req.Header.Get("Authorization"), "Basic ")
}
