package api

import (
	"net/http"
	"net/url"
)

// tokenCookie carries the token for browsers, which cannot set headers on
// a link: the dashboard is opened once with ?token=…, which sets it.
const tokenCookie = "commitea_token"

// browserSecret is the secret a browser request carries: the Authorization
// bearer header, else the dashboard cookie, else the ?token= parameter.
func browserSecret(r *http.Request) string {
	if s, ok := bearer(r); ok {
		return s
	}
	if c, err := r.Cookie(tokenCookie); err == nil && c.Value != "" {
		return c.Value
	}
	return r.URL.Query().Get("token")
}

// requireBrowserScope guards pages people open in a browser (the dashboard,
// the River UI): the token may come as a bearer header, the cookie, or once
// as ?token=, which sets the HttpOnly cookie and redirects to the same page
// without the secret in its address bar and history. The cookie is Secure
// when secure is set (the public URL is https) or the request came over
// TLS: behind a TLS-terminating proxy the server itself never sees TLS.
func (a *authenticator) requireBrowserScope(scope string, secure bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			secret := browserSecret(r)
			c, ok := a.verify(secret)
			if !ok {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte("CommiTea: this page needs a token with the " + scope + " scope; open it once with ?token=<secret>.\n"))
				return
			}
			if !c.Has(scope) {
				writeError(w, CodeForbidden, "token "+c.Name+" lacks the "+scope+" scope", "")
				return
			}
			if r.URL.Query().Has("token") {
				http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: secret, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: secure || r.TLS != nil})
				q := r.URL.Query()
				q.Del("token")
				http.Redirect(w, r, (&url.URL{Path: r.URL.Path, RawQuery: q.Encode()}).String(), http.StatusSeeOther)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
