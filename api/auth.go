package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/commitea/commitea/worker/tools"
)

// Token is one bearer token the tool endpoints accept, as configured.
type Token struct {
	Name   string
	Scopes []string
	Secret string
}

// authenticator keeps only the hashes of the configured secrets and
// compares a presented token against every one of them in constant time,
// so neither timing nor a memory dump gives a secret away.
type authenticator struct {
	tokens []hashedToken
}

type hashedToken struct {
	name   string
	scopes []string
	hash   [sha256.Size]byte
}

func newAuthenticator(ts []Token) *authenticator {
	a := &authenticator{}
	for _, t := range ts {
		a.tokens = append(a.tokens, hashedToken{name: t.Name, scopes: slices.Clone(t.Scopes), hash: sha256.Sum256([]byte(t.Secret))})
	}
	return a
}

// verify returns the caller a secret belongs to. It looks at every token
// whatever matches, so the time taken says nothing about which one did.
func (a *authenticator) verify(secret string) (tools.Caller, bool) {
	h := sha256.Sum256([]byte(secret))
	var found *hashedToken
	for i := range a.tokens {
		if subtle.ConstantTimeCompare(h[:], a.tokens[i].hash[:]) == 1 {
			found = &a.tokens[i]
		}
	}
	if found == nil || secret == "" {
		return tools.Caller{}, false
	}
	return tools.Caller{Name: found.name, Scopes: slices.Clone(found.scopes)}, true
}

// requireMetricsToken answers 401 unless the request carries token as its
// bearer token; an empty token lets everyone through.
func requireMetricsToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ := bearer(r)
		h := sha256.Sum256([]byte(got))
		if subtle.ConstantTimeCompare(h[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="commitea-metrics"`)
			http.Error(w, "metrics need the configured bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bearer reads "Authorization: Bearer <token>".
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", false
	}
	return strings.TrimSpace(token), true
}

type callerKey struct{}

// callerFrom returns the authenticated caller of a request.
func callerFrom(ctx context.Context) (tools.Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(tools.Caller)
	return c, ok
}

// requireToken refuses a request without a valid bearer token (401) or
// without scope (403) before anything else runs; an empty scope accepts
// any valid token. The caller goes into the request's context, both ours
// and the MCP SDK's, so tool handlers on either transport know who calls.
func (a *authenticator) requireToken(scope string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		// Our checks run first so refusals carry CommiTea's error body;
		// the SDK's middleware then only attaches the TokenInfo.
		sdk := auth.RequireBearerToken(a.sdkVerifier, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			secret, ok := bearer(r)
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="commitea"`)
				writeError(w, CodeUnauthorized, "missing bearer token: send Authorization: Bearer <token>", "")
				return
			}
			c, ok := a.verify(secret)
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="commitea", error="invalid_token"`)
				writeError(w, CodeUnauthorized, "unknown bearer token", "")
				return
			}
			if scope != "" && !c.Has(scope) {
				writeError(w, CodeForbidden, fmt.Sprintf("token %q lacks the %s scope this endpoint needs", c.Name, scope), "")
				return
			}
			sdk.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, c)))
		})
	}
}

// sdkVerifier lets the MCP SDK's bearer middleware attach the same caller
// as its TokenInfo, which the SDK hands to tool handlers.
func (a *authenticator) sdkVerifier(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	c, ok := a.verify(token)
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: c.Name, Scopes: c.Scopes}, nil
}
