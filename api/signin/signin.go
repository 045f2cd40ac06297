package signin

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"golang.org/x/oauth2"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/gitea"
)

// Paths this package serves, and the cookies it sets.
const (
	LoginPath    = "/auth/login"
	CallbackPath = "/auth/callback"
	LogoutPath   = "/auth/logout"

	// SessionCookie carries the session secret.
	SessionCookie = "commitea_session"
	// loginCookie carries a sign-in's state from /auth/login to the
	// callback; it is sent to /auth/ only.
	loginCookie = "commitea_login"
)

// Defaults of Config's durations.
const (
	DefaultIdleTimeout = 12 * time.Hour
	DefaultMaxAge      = 7 * 24 * time.Hour
	DefaultRefresh     = 10 * time.Minute
	// loginLifetime bounds the time from /auth/login to the callback.
	loginLifetime = 10 * time.Minute
	// touchEvery is how stale last_seen_at may get before a request
	// writes it.
	touchEvery = time.Minute
)

// Config is what sign-in needs.
type Config struct {
	Pool *store.Pool
	// Gitea is CommiTea's own client: it reads permissions and visibility,
	// and (with the person's token, once) who signed in.
	Gitea *gitea.Client
	// GiteaURL is where CommiTea reaches Gitea (the token endpoint);
	// BrowserURL where people's browsers do (the authorize page). Empty
	// BrowserURL means GiteaURL.
	GiteaURL, BrowserURL   string
	ClientID, ClientSecret string
	// PublicURL is CommiTea's own address as browsers see it
	// (server.public_url): the callback is PublicURL + CallbackPath, and
	// cookies are Secure when it is https.
	PublicURL string
	// Projects are the configured projects; permissions are read on each.
	Projects []store.Project
	// IdleTimeout, MaxAge and Refresh default to DefaultIdleTimeout,
	// DefaultMaxAge and DefaultRefresh.
	IdleTimeout, MaxAge, Refresh time.Duration
	// HTTPClient makes the token request; default one with a 30 s timeout.
	HTTPClient *http.Client
	Log        *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Service is sign-in: its routes and the session check of page requests.
type Service struct {
	cfg    Config
	oauth  *oauth2.Config
	secure bool
	origin string // scheme://host of the public URL

	mu         sync.Mutex
	refreshing map[int64]*refresh // session id -> refresh under way
}

type refresh struct {
	done   chan struct{}
	levels map[string]string
	err    error
}

// New checks the configuration and builds the service.
func New(cfg Config) (*Service, error) {
	if cfg.Pool == nil || cfg.Gitea == nil {
		return nil, errors.New("signin: Pool and Gitea are required")
	}
	if cfg.ClientID == "" || cfg.ClientSecret == "" {
		return nil, errors.New("signin: the OAuth2 client id and secret are required")
	}
	public, err := url.Parse(strings.TrimRight(cfg.PublicURL, "/"))
	if err != nil || (public.Scheme != "http" && public.Scheme != "https") || public.Host == "" {
		return nil, fmt.Errorf("signin: public URL %q: not an absolute http(s) URL", cfg.PublicURL)
	}
	if cfg.BrowserURL == "" {
		cfg.BrowserURL = cfg.GiteaURL
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultMaxAge
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = DefaultRefresh
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{
		cfg: cfg,
		oauth: &oauth2.Config{
			ClientID:     cfg.ClientID,
			ClientSecret: cfg.ClientSecret,
			Endpoint: oauth2.Endpoint{
				AuthURL:  strings.TrimRight(cfg.BrowserURL, "/") + "/login/oauth/authorize",
				TokenURL: strings.TrimRight(cfg.GiteaURL, "/") + "/login/oauth/access_token",
				// Gitea reads either; saying which saves a second try
				// on every refused exchange.
				AuthStyle: oauth2.AuthStyleInHeader,
			},
			RedirectURL: public.String() + CallbackPath,
			Scopes:      []string{"read:user"},
		},
		secure:     public.Scheme == "https",
		origin:     public.Scheme + "://" + public.Host,
		refreshing: map[int64]*refresh{},
	}, nil
}

// Secure reports whether cookies are marked Secure (https public URL).
func (s *Service) Secure() bool { return s.secure }

// SameOrigin reports whether a request that changes something (any method
// but GET, HEAD and OPTIONS) comes from CommiTea's own pages: its Origin
// header, which browsers send with such requests, is the public URL's.
// SameSite=Lax already keeps other sites' forms from carrying the cookie;
// this also refuses sibling hosts of the same site, which Lax lets
// through. A request without Origin (not from a browser) passes.
func (s *Service) SameOrigin(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	}
	o := r.Header.Get("Origin")
	return o == "" || strings.EqualFold(o, s.origin)
}

// Mount adds the sign-in routes to r.
func (s *Service) Mount(r chi.Router) {
	r.Get(StylesheetPath, serveStylesheet)
	r.Get(LoginPath, s.login)
	r.Get(CallbackPath, s.callback)
	r.Post(LogoutPath, s.logout)
}

func randomString() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func hash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// safeNext keeps a return path on this site: an absolute path, never
// "//host" or "/\host", which browsers read as another site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") || strings.ContainsAny(next, "\r\n") {
		return "/dashboard/"
	}
	return next
}

// LoginURL is the sign-in link that returns to next afterwards.
func LoginURL(next string) string { return LoginPath + "?next=" + url.QueryEscape(safeNext(next)) }

func (s *Service) login(w http.ResponseWriter, r *http.Request) {
	state, verifier := randomString(), oauth2.GenerateVerifier()
	next := safeNext(r.URL.Query().Get("next"))
	if err := store.SaveWebLogin(r.Context(), s.cfg.Pool, hash(state), verifier, next, s.cfg.Now()); err != nil {
		s.cfg.Log.ErrorContext(r.Context(), "sign-in", slog.Any("error", err))
		page(w, http.StatusServiceUnavailable, "Sign-in is unavailable", "CommiTea could not start the sign-in. Try again in a moment.", "")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: state, Path: "/auth/", MaxAge: int(loginLifetime / time.Second),
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, s.oauth.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)), http.StatusSeeOther)
}

func (s *Service) callback(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	state := q.Get("state")
	// The state must come back to the browser that asked for it: the
	// cookie is the browser's half, the address Gitea's.
	c, err := r.Cookie(loginCookie)
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: "", Path: "/auth/", MaxAge: -1, HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode})
	if err != nil || state == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(state)) != 1 {
		s.cfg.Log.WarnContext(ctx, "sign-in refused: state does not match this browser's")
		page(w, http.StatusBadRequest, "Sign-in refused", "This sign-in was not started in this browser, or it was already used.", LoginURL("/dashboard/"))
		return
	}
	verifier, next, err := store.TakeWebLogin(ctx, s.cfg.Pool, hash(state), s.cfg.Now().Add(-loginLifetime))
	if errors.Is(err, store.ErrNotFound) {
		page(w, http.StatusBadRequest, "Sign-in expired", "This sign-in took too long or was already used.", LoginURL("/dashboard/"))
		return
	}
	if err != nil {
		s.cfg.Log.ErrorContext(ctx, "sign-in", slog.Any("error", err))
		page(w, http.StatusServiceUnavailable, "Sign-in is unavailable", "CommiTea could not finish the sign-in. Try again in a moment.", LoginURL(next))
		return
	}
	if e := q.Get("error"); e != "" {
		s.cfg.Log.InfoContext(ctx, "sign-in refused by Gitea", slog.String("error", e), slog.String("description", q.Get("error_description")))
		page(w, http.StatusForbidden, "Gitea did not sign you in", "Gitea answered: "+e+" ("+q.Get("error_description")+").", LoginURL(next))
		return
	}
	tok, err := s.oauth.Exchange(context.WithValue(ctx, oauth2.HTTPClient, s.cfg.HTTPClient), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode < 500 {
			s.cfg.Log.WarnContext(ctx, "sign-in refused: Gitea refused the code", slog.String("error", re.ErrorCode), slog.String("description", re.ErrorDescription))
			page(w, http.StatusBadRequest, "Sign-in refused", "Gitea refused the sign-in: "+re.ErrorDescription+".", LoginURL(next))
			return
		}
		s.cfg.Log.ErrorContext(ctx, "sign-in: token exchange", slog.Any("error", err))
		page(w, http.StatusBadGateway, "Gitea is unavailable", "CommiTea could not reach Gitea to finish the sign-in.", LoginURL(next))
		return
	}
	user, err := s.cfg.Gitea.WithToken(tok.AccessToken).CurrentUser(ctx)
	if err != nil || user.Login == "" {
		s.cfg.Log.ErrorContext(ctx, "sign-in: read the user", slog.Any("error", err))
		page(w, http.StatusBadGateway, "Gitea is unavailable", "CommiTea could not read your Gitea account.", LoginURL(next))
		return
	}
	levels, err := s.readLevels(ctx, user.Login)
	if err != nil {
		s.cfg.Log.ErrorContext(ctx, "sign-in: read permissions", slog.String("login", user.Login), slog.Any("error", err))
		page(w, http.StatusBadGateway, "Gitea is unavailable", "CommiTea could not read your permissions from Gitea.", LoginURL(next))
		return
	}
	// A session the browser still carries ends here: one browser, one
	// session, and an old cookie value stops working.
	if old, ok := s.find(ctx, r); ok {
		_, _ = store.RevokeWebSession(ctx, s.cfg.Pool, old.ID, s.cfg.Now())
	}
	now := s.cfg.Now()
	secret := randomString()
	sess, err := store.CreateWebSession(ctx, s.cfg.Pool, hash(secret), store.WebSession{
		Login: user.Login, GiteaUserID: user.ID, CreatedAt: now, LastSeenAt: now,
		IdleExpiresAt: now.Add(min(s.cfg.IdleTimeout, s.cfg.MaxAge)), ExpiresAt: now.Add(s.cfg.MaxAge),
		Permissions: levels, PermissionsAt: now, UserAgent: truncate(r.UserAgent(), 200),
	})
	if err != nil {
		s.cfg.Log.ErrorContext(ctx, "sign-in: store the session", slog.Any("error", err))
		page(w, http.StatusServiceUnavailable, "Sign-in is unavailable", "CommiTea could not store your session. Try again in a moment.", LoginURL(next))
		return
	}
	s.cfg.Log.InfoContext(ctx, "signed in", slog.String("login", user.Login), slog.Int64("session", sess.ID), slog.Int("projects", len(levels)))
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: secret, Path: "/", Expires: sess.ExpiresAt,
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func (s *Service) logout(w http.ResponseWriter, r *http.Request) {
	if !s.SameOrigin(r) {
		page(w, http.StatusForbidden, "Sign-out refused", "This sign-out did not come from a CommiTea page.", "")
		return
	}
	if sess, ok := s.find(r.Context(), r); ok {
		if _, err := store.RevokeWebSession(r.Context(), s.cfg.Pool, sess.ID, s.cfg.Now()); err != nil {
			s.cfg.Log.ErrorContext(r.Context(), "sign out", slog.Any("error", err))
			page(w, http.StatusServiceUnavailable, "Sign-out failed", "CommiTea could not end your session. Try again in a moment.", "")
			return
		}
		s.cfg.Log.InfoContext(r.Context(), "signed out", slog.String("login", sess.Login), slog.Int64("session", sess.ID))
	}
	s.ClearCookie(w)
	page(w, http.StatusOK, "Signed out", "You are signed out of CommiTea. Gitea keeps its own session: sign out there too on a shared computer.", LoginURL("/dashboard/"))
}

// ClearCookie removes the session cookie from the browser.
func (s *Service) ClearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode})
}

// find returns the live session the request's cookie names.
func (s *Service) find(ctx context.Context, r *http.Request) (store.WebSession, bool) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return store.WebSession{}, false
	}
	sess, err := store.WebSessionBySecret(ctx, s.cfg.Pool, hash(c.Value))
	if err != nil || !sess.Live(s.cfg.Now()) {
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			s.cfg.Log.ErrorContext(ctx, "find session", slog.Any("error", err))
		}
		return store.WebSession{}, false
	}
	return sess, true
}

// ErrPermissionsStale is Viewer's error when Gitea has not confirmed a
// session's permissions for longer than two refresh intervals.
var ErrPermissionsStale = errors.New("signin: Gitea has not confirmed the permissions in time")

// Viewer returns the signed-in person a request comes from, with their
// permissions read again from Gitea when older than the refresh interval.
// ok is false without a live session. An error means the session is live
// but CommiTea cannot work out what it may see (the database, or Gitea for
// too long); the caller answers 503.
func (s *Service) Viewer(r *http.Request) (v Viewer, ok bool, err error) {
	ctx := r.Context()
	c, cerr := r.Cookie(SessionCookie)
	if cerr != nil || c.Value == "" {
		return Viewer{}, false, nil
	}
	sess, err := store.WebSessionBySecret(ctx, s.cfg.Pool, hash(c.Value))
	if errors.Is(err, store.ErrNotFound) {
		return Viewer{}, false, nil
	}
	if err != nil {
		return Viewer{}, false, err
	}
	now := s.cfg.Now()
	if !sess.Live(now) {
		return Viewer{}, false, nil
	}
	if now.Sub(sess.LastSeenAt) >= touchEvery {
		if err := store.TouchWebSession(ctx, s.cfg.Pool, sess.ID, now, now.Add(s.cfg.IdleTimeout)); err != nil {
			return Viewer{}, false, err
		}
	}
	levels := sess.Permissions
	if age := now.Sub(sess.PermissionsAt); age >= s.cfg.Refresh {
		fresh, err := s.refresh(ctx, sess)
		switch {
		case err == nil:
			levels = fresh
		case age < 2*s.cfg.Refresh:
			s.cfg.Log.WarnContext(ctx, "permissions not refreshed; the last ones hold for now",
				slog.String("login", sess.Login), slog.Duration("age", age), slog.Any("error", err))
		default:
			s.cfg.Log.ErrorContext(ctx, "permissions not refreshed", slog.String("login", sess.Login), slog.Duration("age", age), slog.Any("error", err))
			return Viewer{}, false, fmt.Errorf("%w: %w", ErrPermissionsStale, err)
		}
	}
	return Viewer{Name: sess.Login, SignedIn: true, SessionID: sess.ID, levels: lowerKeys(levels)}, true, nil
}

func lowerKeys(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[strings.ToLower(k)] = v
	}
	return out
}

// refresh reads a session's permissions again and stores them. Requests
// of one session that arrive during a refresh wait for it rather than
// asking Gitea again.
func (s *Service) refresh(ctx context.Context, sess store.WebSession) (map[string]string, error) {
	s.mu.Lock()
	if f, ok := s.refreshing[sess.ID]; ok {
		s.mu.Unlock()
		select {
		case <-f.done:
			return f.levels, f.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &refresh{done: make(chan struct{})}
	s.refreshing[sess.ID] = f
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.refreshing, sess.ID)
		s.mu.Unlock()
		close(f.done)
	}()
	// The refresh outlives a request given up by its browser: the others
	// waiting on it still want the answer.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	f.levels, f.err = s.readLevels(rctx, sess.Login)
	if f.err == nil {
		f.err = store.SetWebSessionPermissions(rctx, s.cfg.Pool, sess.ID, f.levels, s.cfg.Now())
	}
	if f.err == nil && !sameLevels(f.levels, sess.Permissions) {
		s.cfg.Log.InfoContext(ctx, "permissions changed in Gitea", slog.String("login", sess.Login), slog.Int64("session", sess.ID),
			slog.Any("before", sess.Permissions), slog.Any("after", f.levels))
	}
	return f.levels, f.err
}

func sameLevels(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// readLevels asks Gitea for login's permission on every configured
// project and maps each to a CommiTea scope; projects without one are
// left out.
func (s *Service) readLevels(ctx context.Context, login string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range s.cfg.Projects {
		repo, err := s.cfg.Gitea.GetRepository(ctx, p.Owner, p.Name)
		if errors.Is(err, gitea.ErrNotFound) {
			continue // CommiTea's token cannot see it: neither can anyone through us
		}
		if err != nil {
			return nil, err
		}
		mode, err := s.cfg.Gitea.RepoPermission(ctx, p.Owner, p.Name, login)
		var ae *gitea.APIError
		switch {
		case err == nil:
		case errors.Is(err, gitea.ErrNotFound):
			mode = gitea.AccessNone // no such user (any more)
		case errors.As(err, &ae) && ae.Status == http.StatusForbidden:
			s.cfg.Log.WarnContext(ctx, "Gitea refuses CommiTea's token the permissions of others: give its user admin on the repository, or make it a site admin; meanwhile only a public repository is readable",
				slog.String("project", p.FullName()))
			mode = gitea.AccessNone
		default:
			return nil, err
		}
		if l := Level(mode, repo.Private); l != "" {
			out[p.FullName()] = l
		}
	}
	return out, nil
}
