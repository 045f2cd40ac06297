package api

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/commitea/commitea/worker/tools"
)

// Finding 8 of issue #12: behind a TLS-terminating proxy the Go server never
// sees TLS, so the dashboard cookie was never Secure; and pages whose first
// link carries a token had no Content-Security-Policy, frame or referrer
// policy. With an https public URL the cookie is Secure whatever the
// connection, and every HTML surface carries the headers.
func TestBrowserPagesBehindATLSProxy(t *testing.T) {
	t.Parallel()
	page := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<!doctype html><title>page</title>")
	})
	router := func(publicURL string) http.Handler {
		return NewRouter(Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Dashboard: page, RiverUI: page, PublicURL: publicURL, TokenLinks: true,
			Tokens: []Token{{Name: "ops", Scopes: []string{tools.ScopeRead, tools.ScopeApprove}, Secret: "ops-secret-0123456789"}}})
	}
	do := func(h http.Handler, path string, set func(*http.Request)) *httptest.ResponseRecorder {
		// What the proxy forwards: plain HTTP from loopback.
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if set != nil {
			set(req)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}

	for _, tc := range []struct {
		publicURL  string
		wantSecure bool
	}{
		{"https://commitea.example.com", true},
		{"http://commitea.internal:8080", false},
		{"", false},
	} {
		rec := do(router(tc.publicURL), "/dashboard/ceo/demo/?token=ops-secret-0123456789", nil)
		cookies := rec.Result().Cookies()
		if rec.Code != http.StatusSeeOther || len(cookies) != 1 {
			t.Fatalf("public URL %q: %d, cookies %+v", tc.publicURL, rec.Code, cookies)
		}
		if c := cookies[0]; c.Secure != tc.wantSecure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
			t.Errorf("public URL %q: cookie Secure=%v HttpOnly=%v SameSite=%v, want Secure=%v, HttpOnly, Lax",
				tc.publicURL, c.Secure, c.HttpOnly, c.SameSite, tc.wantSecure)
		}
		if got := rec.Header().Get("Strict-Transport-Security"); (got != "") != tc.wantSecure {
			t.Errorf("public URL %q: Strict-Transport-Security %q", tc.publicURL, got)
		}
	}

	h := router("https://commitea.example.com")
	withToken := func(r *http.Request) { r.Header.Set("Authorization", "Bearer ops-secret-0123456789") }
	for _, tc := range []struct {
		path string
		set  func(*http.Request)
		code int
	}{
		{"/dashboard/ceo/demo/", withToken, http.StatusOK},
		{"/dashboard/ceo/demo/runway", nil, http.StatusUnauthorized},
		{"/riverui/", withToken, http.StatusOK},
		{"/dashboard/ceo/demo/?token=ops-secret-0123456789", nil, http.StatusSeeOther},
		{"/healthz", nil, http.StatusOK},
	} {
		rec := do(h, tc.path, tc.set)
		if rec.Code != tc.code {
			t.Fatalf("%s: %d, want %d", tc.path, rec.Code, tc.code)
		}
		hd := rec.Header()
		csp := hd.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: Content-Security-Policy %q does not forbid framing", tc.path, csp)
		}
		if script := directive(csp, "script-src"); strings.Contains(script, "unsafe-inline") || strings.Contains(script, "unsafe-eval") ||
			(script == "" && !strings.Contains(directive(csp, "default-src"), "'none'") && !strings.Contains(directive(csp, "default-src"), "'self'")) {
			t.Errorf("%s: Content-Security-Policy %q allows inline script", tc.path, csp)
		}
		if got := hd.Get("Referrer-Policy"); got != "no-referrer" {
			t.Errorf("%s: Referrer-Policy %q", tc.path, got)
		}
		if got := hd.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q", tc.path, got)
		}
		if got := hd.Get("X-Frame-Options"); got != "DENY" {
			t.Errorf("%s: X-Frame-Options %q", tc.path, got)
		}
	}
	if csp := do(h, "/dashboard/ceo/demo/", withToken).Header().Get("Content-Security-Policy"); directive(csp, "style-src") != "style-src 'self'" {
		t.Errorf("dashboard style-src: %q (the pages inline no style)", csp)
	}
}

// directive returns one directive of a Content-Security-Policy, or "".
func directive(csp, name string) string {
	for _, d := range strings.Split(csp, ";") {
		d = strings.TrimSpace(d)
		if d == name || strings.HasPrefix(d, name+" ") {
			return d
		}
	}
	return ""
}
