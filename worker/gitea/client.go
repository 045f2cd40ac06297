package gitea

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
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
	// HTTPClient does the transport; default a fresh http.Client.
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
}

// Client talks to one Gitea (or Forgejo) instance. It is safe for concurrent
// use: nothing per call is stored on it.
type Client struct {
	base  string // ".../api/v1"
	token string
	opts  Options
	hc    *http.Client
	log   *slog.Logger
}

// New returns a client for the Gitea at baseURL (with or without the
// "/api/v1" suffix) authenticating with token. It makes no request.
func New(baseURL, token string, opts Options) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("gitea base URL %q: not an absolute URL", baseURL)
	}
	base := u.String()
	if !strings.HasSuffix(base, "/api/v1") {
		base += "/api/v1"
	}
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
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{base: base, token: token, opts: opts, hc: hc, log: log}, nil
}

// request describes one API call.
type request struct {
	method string
	path   string // below /api/v1, already escaped
	query  url.Values
	body   any // JSON-encoded when non-nil
	// retrySafe: repeating the request cannot do harm (GET, PUT, DELETE,
	// PATCH with absolute values, POSTs that are idempotent in effect).
	retrySafe bool
	// final, when set, marks failed responses that retrying cannot change
	// (e.g. Forgejo's 500 for a duplicate dependency).
	final func(status int, message string) bool
}

// response is a completed call.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do runs the request with the call timeout and retries, and returns the
// response of a 2xx; other statuses become *APIError.
func (c *Client) do(ctx context.Context, r request) (*response, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
	defer cancel()

	var payload []byte
	if r.body != nil {
		var err error
		if payload, err = json.Marshal(r.body); err != nil {
			return nil, fmt.Errorf("encode %s %s body: %w", r.method, r.path, err)
		}
	}
	target := c.base + r.path
	if len(r.query) > 0 {
		target += "?" + r.query.Encode()
	}

	apiErr := &APIError{Method: r.method, Path: r.path}
	for attempt := 1; ; attempt++ {
		apiErr.Attempts = attempt
		resp, err := c.attempt(ctx, r.method, target, payload)
		var wait time.Duration
		switch {
		case err != nil:
			apiErr.Status, apiErr.Message = 0, err.Error()
			if ctx.Err() != nil {
				apiErr.Unavailable = true
				apiErr.Message = fmt.Sprintf("%s (call timeout %s)", err, c.opts.CallTimeout)
				return nil, apiErr
			}
			// A request that never reached the server is always safe to send
			// again; one that may have been processed only when retrySafe.
			if !r.retrySafe && !isDialError(err) {
				apiErr.Unavailable = true
				return nil, apiErr
			}
		case resp.status >= 200 && resp.status < 300:
			return resp, nil
		case resp.status == http.StatusTooManyRequests || resp.status >= 500:
			apiErr.Status, apiErr.Message = resp.status, serverMessage(resp.body)
			if r.final != nil && r.final(resp.status, apiErr.Message) {
				return nil, apiErr
			}
			// 429 means the server refused without acting; a 5xx may have
			// acted, so only safe requests repeat.
			if resp.status != http.StatusTooManyRequests && !r.retrySafe {
				apiErr.Unavailable = resp.status == http.StatusBadGateway ||
					resp.status == http.StatusServiceUnavailable || resp.status == http.StatusGatewayTimeout
				return nil, apiErr
			}
			if ra, ok := retryAfter(resp.header.Get("Retry-After")); ok {
				if ra > c.opts.MaxRetryAfter {
					apiErr.Unavailable = true
					apiErr.Message += fmt.Sprintf(" (Retry-After %s exceeds the %s cap)", ra, c.opts.MaxRetryAfter)
					return nil, apiErr
				}
				wait = ra
			}
		default:
			apiErr.Status, apiErr.Message = resp.status, serverMessage(resp.body)
			return nil, apiErr
		}
		if attempt >= c.opts.MaxAttempts {
			apiErr.Unavailable = true
			return nil, apiErr
		}
		if wait == 0 {
			wait = c.backoff(attempt)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			apiErr.Unavailable = true
			apiErr.Message += fmt.Sprintf(" (next retry in %s would pass the call timeout)", wait)
			return nil, apiErr
		}
		c.log.Debug("gitea retry", "method", r.method, "path", r.path, "status", apiErr.Status, "attempt", attempt, "wait", wait)
		select {
		case <-ctx.Done():
			apiErr.Unavailable = true
			return nil, apiErr
		case <-time.After(wait):
		}
	}
}

func (c *Client) attempt(ctx context.Context, method, target string, payload []byte) (*response, error) {
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.opts.UserAgent)
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "token "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	// Gitea pages are small; 32 MiB guards against a misbehaving proxy.
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

// backoff is exponential with full jitter: uniform in [base/2, base*2^(n-1)].
func (c *Client) backoff(attempt int) time.Duration {
	d := c.opts.BaseBackoff << (attempt - 1)
	if d > c.opts.MaxBackoff || d <= 0 {
		d = c.opts.MaxBackoff
	}
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(d-half)+1))
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// retryAfter parses a Retry-After header: delay seconds or an HTTP date.
func retryAfter(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := time.Until(t)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
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

// getJSON fetches one object.
func (c *Client) getJSON(ctx context.Context, path string, query url.Values, out any) error {
	resp, err := c.do(ctx, request{method: http.MethodGet, path: path, query: query, retrySafe: true})
	if err != nil {
		return err
	}
	if err := json.Unmarshal(resp.body, out); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
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
		resp, err := c.do(ctx, request{method: http.MethodGet, path: path, query: q, retrySafe: true})
		if err != nil {
			return nil, fmt.Errorf("list page %d: %w", page, err)
		}
		var items []T
		if err := json.Unmarshal(resp.body, &items); err != nil {
			return nil, fmt.Errorf("decode %s page %d: %w", path, page, err)
		}
		all = append(all, items...)
		if len(items) == 0 {
			return all, nil
		}
		if total, err := strconv.Atoi(resp.header.Get("X-Total-Count")); err == nil {
			if len(all) >= total {
				return all, nil
			}
			continue
		}
		if link := resp.header.Get("Link"); link != "" {
			if !strings.Contains(link, `rel="next"`) {
				return all, nil
			}
			continue
		}
		if len(items) < c.opts.PageSize {
			return all, nil
		}
	}
	return nil, fmt.Errorf("list %s: more than %d pages", path, c.opts.MaxPages)
}

// repoPath is "/repos/{owner}/{repo}" with both escaped.
func repoPath(owner, repo string) string {
	return "/repos/" + url.PathEscape(owner) + "/" + url.PathEscape(repo)
}
