package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Token is one bearer token: a name for the logs and the ledger, its
// scopes (read, write, approve) and its secret.
type Token struct {
	Name   string
	Scopes []string
	Secret string
}

// tokenCookie carries the token for browsers, which cannot set headers on
// a link: the dashboard is opened once with ?token=…, which sets it.
const tokenCookie = "commitea_token"

// authenticator finds the token a request presents.
type authenticator struct {
	tokens []Token
}

// find compares the presented secret against every token in constant time
// (on hashes, so lengths do not leak either).
func (a authenticator) find(secret string) (Token, bool) {
	if secret == "" {
		return Token{}, false
	}
	got := sha256.Sum256([]byte(secret))
	var found Token
	ok := false
	for _, t := range a.tokens {
		want := sha256.Sum256([]byte(t.Secret))
		if subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
			found, ok = t, true
		}
	}
	return found, ok
}

// presented is the secret a request carries: the Authorization bearer
// header, else the dashboard cookie, else the ?token= query parameter.
func presented(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, _ := strings.Cut(h, " ")
		if strings.EqualFold(scheme, "bearer") {
			return strings.TrimSpace(tok)
		}
	}
	if c, err := r.Cookie(tokenCookie); err == nil && c.Value != "" {
		return c.Value
	}
	return r.URL.Query().Get("token")
}

// requireScope lets through requests whose token holds scope. A browser
// that came with ?token= gets the cookie and is redirected to the same page
// without the secret in its address bar and history.
func (a authenticator) requireScope(scope string, browser bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			t, ok := a.find(presented(r))
			if !ok {
				if browser {
					w.Header().Set("Content-Type", "text/plain; charset=utf-8")
					w.WriteHeader(http.StatusUnauthorized)
					_, _ = w.Write([]byte("CommiTea: this page needs a token with the " + scope + " scope; open it with ?token=<secret> once.\n"))
					return
				}
				writeError(w, CodeUnauthorized, "missing or unknown bearer token", "")
				return
			}
			if !slices.Contains(t.Scopes, scope) {
				writeError(w, CodeForbidden, "token "+t.Name+" lacks the "+scope+" scope", "")
				return
			}
			if browser && r.URL.Query().Has("token") {
				http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: t.Secret, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
				u := *r.URL
				q := u.Query()
				q.Del("token")
				u.RawQuery = q.Encode()
				http.Redirect(w, r, (&url.URL{Path: u.Path, RawQuery: u.RawQuery}).String(), http.StatusSeeOther)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
