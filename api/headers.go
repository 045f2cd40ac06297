package api

import "net/http"

// Every response carries headers that keep browsers from guessing content
// types, from leaking addresses in Referer (the first dashboard link carries
// a token) and from framing the page (clickjacking). The default policy
// lets a response load nothing at all, which fits JSON and plain text; each
// HTML surface then names what its pages load, and none allows inline
// script, so markup that an issue title smuggles past escaping cannot run.
const (
	// apiPolicy is every non-HTML response's: nothing to load, not
	// frameable.
	apiPolicy = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
	// dashboardPolicy: server-rendered pages with their stylesheet (and any
	// script) served from CommiTea itself, inline SVG charts, GET forms
	// back to CommiTea.
	dashboardPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
	// signinPolicy: the sign-in pages (/auth/…), with their stylesheet;
	// the way to Gitea is a redirect, which no policy restricts.
	signinPolicy = "default-src 'none'; style-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
	// riverUIPolicy: River's single-page app loads its script and styles
	// from its own prefix and calls its API; its components set style
	// attributes at run time, so inline style (never inline script) is
	// allowed there.
	riverUIPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
		"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)

// securityHeaders sets the headers every response carries. hsts adds
// Strict-Transport-Security, for a service whose public URL is https.
func securityHeaders(hsts bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("Referrer-Policy", "no-referrer")
			h.Set("X-Frame-Options", "DENY")
			h.Set("Content-Security-Policy", apiPolicy)
			if hsts {
				h.Set("Strict-Transport-Security", "max-age=31536000")
			}
			next.ServeHTTP(w, r)
		})
	}
}

// contentPolicy replaces the default Content-Security-Policy for the pages
// of one HTML surface.
func contentPolicy(policy string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Security-Policy", policy)
			next.ServeHTTP(w, r)
		})
	}
}
