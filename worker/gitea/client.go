package gitea

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	sdk "code.gitea.io/sdk/gitea"
)

// Sentinel errors; *APIError matches them with errors.Is.
var (
	// ErrNotFound: the server answered 404.
	ErrNotFound = errors.New("gitea: not found")
	// ErrUnavailable: the server kept failing (429, 5xx or network) until
	// the retries or the call's time ran out.
	ErrUnavailable = errors.New("gitea: unavailable")
)

// APIError is a failed Gitea call. Status is the last HTTP status seen (0
// when the last attempt failed before any response).
type APIError struct {
	Method  string
	Path    string
	Status  int
	Message string // server message, or the transport error text
	// Unavailable is set when retries were exhausted on a transient failure.
	Unavailable bool
	Attempts    int
}

func (e *APIError) Error() string {
	kind := "error"
	if e.Unavailable {
		kind = "unavailable"
	}
	return fmt.Sprintf("gitea %s %s: %s (status %d, %d attempts): %s", e.Method, e.Path, kind, e.Status, e.Attempts, e.Message)
}

// Is lets errors.Is(err, ErrNotFound) and errors.Is(err, ErrUnavailable)
// work on wrapped API errors.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrUnavailable:
		return e.Unavailable
	}
	return false
}

// Options tune the client. Zero values pick the defaults.
type Options struct {
	// HTTPClient does the transport; default a fresh http.Client. The
	// client uses a copy whose Transport is wrapped with the retries.
	HTTPClient *http.Client
	// CallTimeout bounds one API call including its retries (a paged list
	// is one call per page). Default 30 s.
	CallTimeout time.Duration
	// MaxAttempts bounds tries per call, first one included. Default 4.
	MaxAttempts int
	// BaseBackoff is the first retry delay, doubled each retry, with full
	// jitter, capped at MaxBackoff. Defaults 250 ms and 5 s.
	BaseBackoff time.Duration
	MaxBackoff  time.Duration
	// MaxRetryAfter caps how long a Retry-After header can make us wait.
	// Default 30 s; a longer demand makes the call fail as unavailable.
	MaxRetryAfter time.Duration
	// PageSize is the "limit" asked per page; Gitea caps it (50 by
	// default). Default 50.
	PageSize int
	// MaxPages stops a runaway listing. Default 10000.
	MaxPages int
	// Logger gets retry notices; default discards.
	Logger *slog.Logger
	// UserAgent is sent with every request.
	UserAgent string
	// MaxConcurrent bounds the client's requests in flight at once, across
	// every caller (two projects backfilling share it). Default
	// DefaultMaxConcurrent; negative means no bound.
	MaxConcurrent int
}

// DefaultMaxConcurrent is the bound on requests in flight when Options set
// none: enough to hide a forge's latency (a backfill at 20 ms a request
// goes about eight times as fast), few enough that one Gitea serving a
// team does not notice.
const DefaultMaxConcurrent = 8

// Client talks to one Gitea (or Forgejo) instance. It is safe for concurrent
// use: nothing per call is stored on it, and its requests share one pace
// (a bound in flight, a pause after a 429).
type Client struct {
	root  string // the server URL the SDK wants, without "/api/v1"
	base  string // root + "/api/v1", for the raw calls
	token string
	opts  Options
	hc    *http.Client // carries retryTransport; shared by SDK and raw calls
}

// New returns a client for the Gitea at baseURL (with or without the
// "/api/v1" suffix) authenticating with token. It makes no request.
func New(baseURL, token string, opts Options) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("gitea base URL %q: not an absolute URL", baseURL)
	}
	root := strings.TrimSuffix(u.String(), "/api/v1")
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 30 * time.Second
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 4
	}
	if opts.BaseBackoff <= 0 {
		opts.BaseBackoff = 250 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 5 * time.Second
	}
	if opts.MaxRetryAfter <= 0 {
		opts.MaxRetryAfter = 30 * time.Second
	}
	if opts.PageSize <= 0 {
		opts.PageSize = 50
	}
	if opts.MaxPages <= 0 {
		opts.MaxPages = 10000
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "commitea"
	}
	if opts.MaxConcurrent == 0 {
		opts.MaxConcurrent = DefaultMaxConcurrent
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// A copy of the caller's client, so wrapping its transport does not
	// change what else uses it.
	hc := &http.Client{}
	if opts.HTTPClient != nil {
		*hc = *opts.HTTPClient
	}
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	hc.Transport = &retryTransport{next: next, opts: opts, log: log, pace: newPacer(opts.MaxConcurrent)}
	return &Client{root: root, base: root + "/api/v1", token: token, opts: opts, hc: hc}, nil
}

// request describes one raw API call.
type request struct {
	method string
	path   string // below /api/v1, already escaped
	query  url.Values
	body   any // JSON-encoded when non-nil
	policy retryPolicy
	final  func(status int, message string) bool
}

// response is a completed raw call.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do runs a raw request under the call timeout (the transport retries) and
// returns the response of a 2xx; other statuses become *APIError.
func (c *Client) do(ctx context.Context, r request) (*response, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
	defer cancel()
	rec := &callRecord{policy: r.policy, final: r.final}
	ctx = withCall(ctx, rec)

	var body io.Reader
	if r.body != nil {
		payload, err := json.Marshal(r.body)
		if err != nil {
			return nil, fmt.Errorf("encode %s %s body: %w", r.method, r.path, err)
		}
		body = bytes.NewReader(payload)
	}
	target := c.base + r.path
	if len(r.query) > 0 {
		target += "?" + r.query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, r.method, target, body)
	if err != nil {
		return nil, fmt.Errorf("build %s %s request: %w", r.method, r.path, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.opts.UserAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "token "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.callError(ctx, rec, r.method, r.path, 0, err.Error())
	}
	defer resp.Body.Close()
	// Gitea pages are small; 32 MiB guards against a misbehaving proxy.
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, c.callError(ctx, rec, r.method, r.path, 0, "read response: "+err.Error())
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.callError(ctx, rec, r.method, r.path, resp.StatusCode, serverMessage(data))
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

// callError builds the *APIError of a failed call from what the transport
// recorded. status is the final response's (0 when none); message the
// server's or the transport's text.
func (c *Client) callError(ctx context.Context, rec *callRecord, method, path string, status int, message string) *APIError {
	e := &APIError{Method: method, Path: path, Status: status, Message: message,
		Unavailable: rec.unavailable, Attempts: max(rec.attempts, 1)}
	if rec.unavailable && rec.message != "" {
		// The transport's text says why it gave up (Retry-After cap, call
		// timeout...).
		e.Message = rec.message
	}
	if status == 0 {
		e.Status = rec.status
		if ctx.Err() != nil {
			// The call's time ran out, possibly while reading the body.
			e.Unavailable = true
			if !strings.Contains(e.Message, "call timeout") {
				e.Message += fmt.Sprintf(" (call timeout %s)", c.opts.CallTimeout)
			}
		}
	}
	return e
}

// sdkCall runs one SDK request under the call timeout, on an SDK client
// made for this call alone: SetContext binds the client to one context, so
// a client shared between goroutines would mix their deadlines. NewClient
// with SetGiteaVersion("") makes no request. method and path (below
// /api/v1) name the request in errors.
func sdkCall[T any](ctx context.Context, c *Client, method, path string, policy retryPolicy,
	fn func(*sdk.Client) (T, *sdk.Response, error)) (T, *sdk.Response, error) {
	var zero T
	ctx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
	defer cancel()
	rec := &callRecord{policy: policy}
	ctx = withCall(ctx, rec)
	cl, err := sdk.NewClient(c.root,
		sdk.SetGiteaVersion(""), // no /version request, no version-dependent fallbacks
		sdk.SetToken(c.token),
		sdk.SetContext(ctx),
		sdk.SetHTTPClient(c.hc),
		sdk.SetUserAgent(c.opts.UserAgent))
	if err != nil {
		return zero, nil, fmt.Errorf("gitea sdk client: %w", err)
	}
	out, resp, err := fn(cl)
	if err == nil {
		return out, resp, nil
	}
	switch {
	case resp != nil && resp.StatusCode >= 200 && resp.StatusCode <= 299:
		// The SDK got a 2xx and failed on its body.
		return zero, resp, fmt.Errorf("decode %s %s: %w", method, path, err)
	case resp != nil:
		// The SDK's error text is the server's message.
		return zero, resp, c.callError(ctx, rec, method, path, resp.StatusCode, err.Error())
	case rec.attempts == 0:
		// Refused by the SDK before sending (validation, bad path segment).
		return zero, nil, fmt.Errorf("%s %s: %w", method, path, err)
	default:
		return zero, nil, c.callError(ctx, rec, method, path, 0, err.Error())
	}
}

// serverMessage extracts Gitea's {"message": ...} or returns the raw text.
func serverMessage(body []byte) string {
	var m struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &m) == nil && m.Message != "" {
		return m.Message
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// send performs a write and decodes its answer into out when out is non-nil
// and the server sent a body.
func (c *Client) send(ctx context.Context, r request, out any) error {
	resp, err := c.do(ctx, r)
	if err != nil {
		return err
	}
	if out == nil || len(bytes.TrimSpace(resp.body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(resp.body, out); err != nil {
		return fmt.Errorf("decode %s %s answer: %w", r.method, r.path, err)
	}
	return nil
}

// pageDone says whether a listing is complete after a page of n items
// (got items so far), from X-Total-Count when the server sends it, else the
// Link rel="next" header, else a short page; always at an empty page.
func pageDone(header http.Header, n, got, pageSize int) bool {
	if n == 0 {
		return true
	}
	if total, err := strconv.Atoi(header.Get("X-Total-Count")); err == nil {
		return got >= total
	}
	if link := header.Get("Link"); link != "" {
		return !strings.Contains(link, `rel="next"`)
	}
	return n < pageSize
}

// sdkListAll pages through an SDK list call, one call (and call timeout)
// per page, converting each item with conv.
func sdkListAll[S, T any](ctx context.Context, c *Client, path string,
	list func(cl *sdk.Client, page sdk.ListOptions) ([]S, *sdk.Response, error), conv func(S) T) ([]T, error) {
	var all []T
	for page := 1; page <= c.opts.MaxPages; page++ {
		items, resp, err := sdkCall(ctx, c, http.MethodGet, path, retryByMethod, func(cl *sdk.Client) ([]S, *sdk.Response, error) {
			return list(cl, sdk.ListOptions{Page: page, PageSize: c.opts.PageSize})
		})
		if err != nil {
			return nil, fmt.Errorf("list page %d: %w", page, err)
		}
		for _, it := range items {
			all = append(all, conv(it))
		}
		if pageDone(resp.Header, len(items), len(all), c.opts.PageSize) {
			return all, nil
		}
	}
	return nil, fmt.Errorf("list %s: more than %d pages", path, c.opts.MaxPages)
}

// listAll pages through a list endpoint. It follows X-Total-Count when the
// server sends it, else the Link rel="next" header, else stops at the first
// short page, and always at an empty one.
func listAll[T any](ctx context.Context, c *Client, path string, query url.Values) ([]T, error) {
	var all []T
	for page := 1; page <= c.opts.MaxPages; page++ {
		q := url.Values{}
		for k, v := range query {
			q[k] = v
		}
		q.Set("page", strconv.Itoa(page))
		q.Set("limit", strconv.Itoa(c.opts.PageSize))
		resp, err := c.do(ctx, request{method: http.MethodGet, path: path, query: q})
		if err != nil {
			return nil, fmt.Errorf("list page %d: %w", page, err)
		}
		var items []T
		if err := json.Unmarshal(resp.body, &items); err != nil {
			return nil, fmt.Errorf("decode %s page %d: %w", path, page, err)
		}
		all = append(all, items...)
		if pageDone(resp.header, len(items), len(all), c.opts.PageSize) {
			return all, nil
		}
	}
	return nil, fmt.Errorf("list %s: more than %d pages", path, c.opts.MaxPages)
}

// repoPath is "/repos/{owner}/{repo}" with both escaped.
func repoPath(owner, repo string) string {
	return "/repos/" + url.PathEscape(owner) + "/" + url.PathEscape(repo)
}
