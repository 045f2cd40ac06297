package giteafake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultToken is the token the fake accepts when Options.Token is empty.
const DefaultToken = "fake-token"

// Options configure a fake.
type Options struct {
	// Token is the only token accepted, as "Authorization: token X" or
	// "Authorization: Bearer X". Default DefaultToken.
	Token string
	// DefaultPageSize applies when a request gives no limit (Gitea: 30);
	// MaxPageSize caps the limit (Gitea's MAX_RESPONSE_ITEMS, default 50).
	DefaultPageSize int
	MaxPageSize     int
	// Now stamps writes; default time.Now.
	Now func() time.Time
	// HookURL and HookSecret, when set, make the fake send webhooks the way
	// Gitea does on each mutation Gitea webhooks (see SetHook).
	HookURL    string
	HookSecret string
	// HookClient posts webhooks; default http.DefaultClient.
	HookClient *http.Client
	// Generate, when set, replaces the recorded repository with a
	// generated project (see Project): a year of a team's history.
	Generate *Project
	// Latency delays every API answer, as a forge across a network does
	// (a page of issues from a loaded Gitea takes tens of milliseconds).
	// Requests wait concurrently, so concurrent clients see it once per
	// request, not once per queue position.
	Latency time.Duration
	// RateLimit, when set, answers 429 with Retry-After to API requests
	// beyond it, as a forge behind a rate-limiting proxy does.
	RateLimit *RateLimit
}

// RateLimit is a fixed-window limit: at most Requests API requests are
// served per Window; the rest are answered 429 with a Retry-After of the
// whole seconds until the window ends (at least 1, as proxies send it).
type RateLimit struct {
	Requests int
	Window   time.Duration
}

// Request is one request the fake received. Path is below /api/v1.
type Request struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
	// At is when the request arrived.
	At time.Time
}

// Fault makes matching requests fail or stall before they are served.
type Fault struct {
	Method     string // "" matches any
	PathPrefix string // below /api/v1; "" matches any
	Status     int    // 0: serve normally after Delay
	RetryAfter string // Retry-After header value, if any
	Body       string // response body; default a Gitea error message
	Delay      time.Duration
	Times      int // how many requests it affects; 0 means 1
}

// Server is a loopback fake of the recorded Forgejo repository ceo/demo.
type Server struct {
	// URL is the server's base URL (without /api/v1).
	URL string

	opts Options
	srv  *httptest.Server

	mu       sync.Mutex
	st       *state
	acct     accounts
	requests []Request
	faults   []Fault
	// The rate limit's current window and how many requests it served;
	// limited counts the 429s it answered.
	windowStart    time.Time
	windowRequests int
	limited        int
	// inFlight and peakInFlight count API requests being served.
	inFlight, peakInFlight int

	hooks hookSender
}

// New starts a fake seeded with the state the recorded scenario left
// (unless Options.Generate asks for a generated project):
// issues #1-#3, pull request #4 (merged), labels est/S est/M p/1
// deadline/hard, milestone v1.0, #2 depending on #1 and #3, comments,
// tracked times and timelines.
func New(opts Options) (*Server, error) {
	if opts.Token == "" {
		opts.Token = DefaultToken
	}
	if opts.DefaultPageSize <= 0 {
		opts.DefaultPageSize = 30
	}
	if opts.MaxPageSize <= 0 {
		opts.MaxPageSize = 50
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.HookClient == nil {
		opts.HookClient = http.DefaultClient
	}
	st, err := seed()
	if err != nil {
		return nil, fmt.Errorf("seed fake gitea: %w", err)
	}
	s := &Server{opts: opts, st: st}
	if err := s.acct.load(); err != nil {
		return nil, fmt.Errorf("seed fake gitea accounts: %w", err)
	}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.URL = "http://" + s.srv.Listener.Addr().String()
	if opts.Generate != nil {
		if err := generate(st, *opts.Generate, s.URL); err != nil {
			s.srv.Close()
			return nil, fmt.Errorf("generate fake gitea project: %w", err)
		}
	}
	s.seedCollaborators()
	s.hooks.init(opts.HookClient)
	s.hooks.set(opts.HookURL, opts.HookSecret)
	s.srv.Start()
	return s, nil
}

// Close stops the server after the queued webhooks are sent.
func (s *Server) Close() {
	s.hooks.close()
	s.srv.Close()
}

// Token is the accepted token.
func (s *Server) Token() string { return s.opts.Token }

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// ResetRequests forgets the recorded requests.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

// InjectFault queues a fault; faults apply in the order queued.
func (s *Server) InjectFault(f Fault) {
	if f.Times <= 0 {
		f.Times = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f)
}

// AddUser makes login a known user (assignable).
func (s *Server) AddUser(login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.st.users[login]; ok {
		return
	}
	u := clone(s.st.users["ceo"])
	u["id"] = float64(len(s.st.users) + 1)
	u["login"], u["username"], u["email"], u["is_admin"] = login, login, login+"@example.com", false
	s.st.users[login] = u
}

// apiError is Gitea's error body.
func (s *Server) apiError(status int, msg string) (int, any) {
	return status, obj{"message": msg, "url": s.URL + "/api/swagger"}
}

func (s *Server) notFound() (int, any) {
	return http.StatusNotFound, obj{"errors": nil, "message": "The target couldn't be found.", "url": s.URL + "/api/swagger"}
}

// reply is a handler's answer: status, JSON value (nil: no body) and extra
// headers; hooks are the webhooks the mutation fires, sent after the reply.
type reply struct {
	status int
	body   any
	header http.Header
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	path := strings.TrimPrefix(r.URL.Path, "/api/v1")
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body, At: time.Now()})
	fault, hasFault := s.takeFault(r.Method, path)
	s.mu.Unlock()

	if hasFault {
		if fault.Delay > 0 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(fault.Delay):
			}
		}
		if fault.Status != 0 {
			if fault.RetryAfter != "" {
				w.Header().Set("Retry-After", fault.RetryAfter)
			}
			msg := fault.Body
			if msg == "" {
				data, _ := json.Marshal(obj{"message": http.StatusText(fault.Status), "url": s.URL + "/api/swagger"})
				msg = string(data)
			}
			w.Header().Set("Content-Type", "application/json;charset=utf-8")
			w.WriteHeader(fault.Status)
			_, _ = io.WriteString(w, msg)
			return
		}
	}

	if !strings.HasPrefix(r.URL.Path, "/api/v1/") {
		s.serveWeb(w, r, body)
		return
	}
	s.mu.Lock()
	s.inFlight++
	s.peakInFlight = max(s.peakInFlight, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	if wait, limited := s.rateLimited(); limited {
		w.Header().Set("Retry-After", strconv.Itoa(wait))
		w.Header().Set("Content-Type", "application/json;charset=utf-8")
		w.WriteHeader(http.StatusTooManyRequests)
		data, _ := json.Marshal(obj{"message": "rate limit exceeded", "url": s.URL + "/api/swagger"})
		_, _ = w.Write(data)
		return
	}
	if s.opts.Latency > 0 {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(s.opts.Latency):
		}
	}
	var rep reply
	s.mu.Lock()
	doer, tok, ok := s.doer(r)
	switch {
	case !ok:
		rep.status, rep.body = s.apiError(http.StatusUnauthorized, "token is required")
	case !tok.allows(r.Method, path):
		rep.status, rep.body = s.apiError(http.StatusForbidden, "token does not have at least one of required scope(s): "+strings.Join(tok.scopes, ","))
	default:
		var handled bool
		if rep, handled = s.routeAccount(doer, r.Method, path, body); !handled {
			rep = s.route(r.Method, path, r.URL.Query(), body)
		}
	}
	s.mu.Unlock()
	for k, vs := range rep.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if rep.body == nil {
		w.WriteHeader(rep.status)
		return
	}
	data, err := json.Marshal(rep.body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	w.WriteHeader(rep.status)
	_, _ = w.Write(data)
}

// rateLimited counts an API request against the rate limit and says
// whether it is over, with the Retry-After in seconds.
func (s *Server) rateLimited() (int, bool) {
	rl := s.opts.RateLimit
	if rl == nil || rl.Requests <= 0 || rl.Window <= 0 {
		return 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if now.Sub(s.windowStart) >= rl.Window {
		s.windowStart, s.windowRequests = now, 0
	}
	if s.windowRequests < rl.Requests {
		s.windowRequests++
		return 0, false
	}
	s.limited++
	left := s.windowStart.Add(rl.Window).Sub(now)
	return max(1, int((left+time.Second-1)/time.Second)), true
}

// PeakInFlight is the most API requests the fake served at once.
func (s *Server) PeakInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peakInFlight
}

// Limited is how many requests the rate limit answered 429.
func (s *Server) Limited() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limited
}

// ClearFaults drops every queued fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

func (s *Server) takeFault(method, path string) (Fault, bool) {
	for i, f := range s.faults {
		if (f.Method == "" || f.Method == method) && strings.HasPrefix(path, f.PathPrefix) {
			s.faults[i].Times--
			if s.faults[i].Times <= 0 {
				s.faults = slices.Delete(s.faults, i, i+1)
			}
			return f, true
		}
	}
	return Fault{}, false
}

// route dispatches on the path segments below /api/v1. Called with mu held.
func (s *Server) route(method, path string, q url.Values, body []byte) reply {
	seg := strings.Split(strings.Trim(path, "/"), "/")
	ok := func(status int, v any) reply { return reply{status: status, body: v} }
	fail := func(status int, v any) reply { return reply{status: status, body: v} }

	if len(seg) == 1 && seg[0] == "version" && method == http.MethodGet {
		return ok(http.StatusOK, obj{"version": "9.0.0-dev-1554-5e777a43a1+gitea-1.22.0"})
	}
	if len(seg) < 3 || seg[0] != "repos" {
		return fail(s.notFound())
	}
	if !strings.EqualFold(seg[1], s.st.owner) || !strings.EqualFold(seg[2], s.st.name) {
		return fail(s.notFound())
	}
	rest := seg[3:]
	if len(rest) == 0 {
		if method == http.MethodGet {
			return ok(http.StatusOK, s.st.repo)
		}
		return fail(s.notFound())
	}
	switch rest[0] {
	case "issues":
		return s.routeIssues(method, rest[1:], q, body)
	case "pulls":
		return s.routePulls(method, rest[1:], q, body)
	case "labels":
		return s.routeLabels(method, rest[1:], q, body)
	case "milestones":
		return s.routeMilestones(method, rest[1:], q, body)
	case "times":
		if len(rest) == 1 && method == http.MethodGet {
			return s.listTimes(q, 0)
		}
	}
	return fail(s.notFound())
}

// page applies Gitea's paging to items and sets X-Total-Count and Link.
func (s *Server) page(path string, q url.Values, items []any) reply {
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit <= 0 {
		limit = s.opts.DefaultPageSize
	}
	limit = min(limit, s.opts.MaxPageSize)
	page, _ := strconv.Atoi(q.Get("page"))
	if page <= 0 {
		page = 1
	}
	total := len(items)
	start := min((page-1)*limit, total)
	end := min(start+limit, total)
	out := items[start:end]
	if out == nil {
		out = []any{}
	}
	h := http.Header{}
	h.Set("X-Total-Count", strconv.Itoa(total))
	h.Set("Access-Control-Expose-Headers", "X-Total-Count, Link")
	last := max((total+limit-1)/limit, 1)
	link := func(p int, rel string) string {
		qq := url.Values{}
		for k, v := range q {
			qq[k] = v
		}
		qq.Set("page", strconv.Itoa(p))
		qq.Set("limit", strconv.Itoa(limit))
		return fmt.Sprintf(`<%s/api/v1%s?%s>; rel="%s"`, s.URL, path, qq.Encode(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(page-1, "prev"))
	}
	if len(links) > 0 {
		h.Set("Link", strings.Join(links, ","))
	}
	return reply{status: http.StatusOK, body: out, header: h}
}

// sinceFilter parses the "since" query parameter (zero when absent).
func sinceFilter(q url.Values) (time.Time, error) {
	v := q.Get("since")
	if v == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339, v)
}

func decodeBody(body []byte, out any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return fmt.Errorf("empty body")
	}
	return json.Unmarshal(body, out)
}

func (s *Server) now() time.Time { return s.opts.Now().UTC().Truncate(time.Second) }

// Repo is the served repository as "owner/name".
func (s *Server) Repo() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.owner + "/" + s.st.name
}
