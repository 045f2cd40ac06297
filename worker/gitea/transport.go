package gitea

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Retries live in an http.RoundTripper so that the SDK's requests and the
// raw ones (timeline, dependency writes) share them: the SDK only sees the
// final response, after the transport has retried 429/5xx and network
// failures with backoff and jitter, honoured Retry-After and stopped at the
// call's deadline.

// retryPolicy says which failed requests may be sent again.
type retryPolicy int

const (
	// retryByMethod retries idempotent methods (GET, HEAD, OPTIONS, PUT,
	// DELETE) on any transient failure; POST and PATCH only when the server
	// refused without acting (429) or the request never left (dial error).
	retryByMethod retryPolicy = iota
	// retryAlways treats the request as safe to repeat: a PATCH of absolute
	// values, a POST that is idempotent in effect (adding labels).
	retryAlways
	// retryNever repeats only what the server cannot have acted on (429, a
	// connection never made): creating an issue or a label twice would
	// file a duplicate.
	retryNever
)

// callRecord travels in a call's context: the caller sets the policy, the
// transport writes what happened so the caller can build an *APIError (the
// SDK turns a failed status into a bare error and keeps no attempt count).
// One call sends one request at a time, so it needs no lock.
type callRecord struct {
	policy retryPolicy
	// final, when set, marks failed responses that retrying cannot change
	// (e.g. Forgejo's 500 for a duplicate dependency).
	final func(status int, message string) bool

	attempts    int
	status      int    // last status seen, 0 when the last attempt got none
	message     string // server message of a transient failure, or the transport error
	unavailable bool   // gave up on a transient failure
}

type callKey struct{}

func withCall(ctx context.Context, rec *callRecord) context.Context {
	return context.WithValue(ctx, callKey{}, rec)
}

func callOf(ctx context.Context) *callRecord {
	if rec, ok := ctx.Value(callKey{}).(*callRecord); ok {
		return rec
	}
	return &callRecord{}
}

// retryTransport retries transient failures of the requests it carries.
type retryTransport struct {
	next http.RoundTripper
	opts Options
	log  *slog.Logger
	pace *pacer
}

// pacer is what the requests of one client share about the forge's pace: a
// bound on requests in flight, and a pause every request waits out after
// the forge answered 429. A 429 is about the client, not the request: when
// concurrent requests each waited out only their own, the others would
// keep the forge refusing, each spending its attempts.
type pacer struct {
	slots chan struct{} // nil: no bound

	mu    sync.Mutex
	until time.Time // no request is sent before this
}

func newPacer(maxConcurrent int) *pacer {
	p := &pacer{}
	if maxConcurrent > 0 {
		p.slots = make(chan struct{}, maxConcurrent)
	}
	return p
}

// hold pauses every request for d from now, unless a longer pause holds.
func (p *pacer) hold(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := time.Now().Add(d); t.After(p.until) {
		p.until = t
	}
}

// pause is how long requests must still wait.
func (p *pacer) pause() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return time.Until(p.until)
}

// acquire waits out the pause and takes a slot; release gives it back.
func (p *pacer) acquire(ctx context.Context) error {
	for {
		d := p.pause()
		if d <= 0 {
			break
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
			return fmt.Errorf("the forge asked to wait %s, past the call timeout", d.Round(time.Millisecond))
		}
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
	if p.slots == nil {
		return nil
	}
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *pacer) release() {
	if p.slots != nil {
		<-p.slots
	}
}

func (t *retryTransport) retrySafe(rec *callRecord, method string) bool {
	switch rec.policy {
	case retryAlways:
		return true
	case retryNever:
		return false
	}
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// RoundTrip sends req until it gets a response retrying cannot improve. A
// response is always returned when one arrived, even after giving up, so
// callers (the SDK included) see the server's status and message; the call
// record says whether the failure was transient.
func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	rec := callOf(ctx)
	safe := t.retrySafe(rec, req.Method)

	// The body is read once so that every attempt can send it again.
	var payload []byte
	if req.Body != nil && req.Body != http.NoBody {
		data, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read request body: %w", err)
		}
		payload = data
	}

	for attempt := 1; ; attempt++ {
		rec.attempts = attempt
		out := req.Clone(ctx)
		if payload != nil {
			out.Body = io.NopCloser(bytes.NewReader(payload))
			out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(payload)), nil }
			out.ContentLength = int64(len(payload))
		}
		if err := t.pace.acquire(ctx); err != nil {
			rec.unavailable = true
			rec.message = err.Error()
			return nil, err
		}
		resp, err := t.next.RoundTrip(out)
		t.pace.release()
		var wait time.Duration
		if err != nil {
			rec.status, rec.message = 0, err.Error()
			if ctx.Err() != nil {
				rec.unavailable = true
				rec.message = fmt.Sprintf("%s (call timeout %s)", err, t.opts.CallTimeout)
				return nil, err
			}
			// A request that never reached the server is always safe to send
			// again; one that may have been processed only when safe.
			if !safe && !isDialError(err) {
				rec.unavailable = true
				return nil, err
			}
		} else {
			rec.status = resp.StatusCode
			if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
				return resp, nil
			}
			body, readErr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(body))
			rec.message = serverMessage(body)
			if readErr != nil {
				rec.message += " (reading the error body: " + readErr.Error() + ")"
			}
			if rec.final != nil && rec.final(resp.StatusCode, rec.message) {
				return resp, nil
			}
			// 429 means the server refused without acting; a 5xx may have
			// acted, so only safe requests repeat.
			if resp.StatusCode != http.StatusTooManyRequests && !safe {
				rec.unavailable = resp.StatusCode == http.StatusBadGateway ||
					resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusGatewayTimeout
				return resp, nil
			}
			if ra, ok := retryAfter(resp.Header.Get("Retry-After")); ok {
				if ra > t.opts.MaxRetryAfter {
					rec.unavailable = true
					rec.message += fmt.Sprintf(" (Retry-After %s exceeds the %s cap)", ra, t.opts.MaxRetryAfter)
					return resp, nil
				}
				wait = ra
			}
			if resp.StatusCode == http.StatusTooManyRequests {
				if wait == 0 {
					wait = t.backoff(attempt)
				}
				t.pace.hold(wait)
			}
		}
		giveUp := func() (*http.Response, error) {
			rec.unavailable = true
			if resp != nil {
				return resp, nil
			}
			return nil, err
		}
		if attempt >= t.opts.MaxAttempts {
			return giveUp()
		}
		if wait == 0 {
			wait = t.backoff(attempt)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			rec.message += fmt.Sprintf(" (next retry in %s would pass the call timeout)", wait)
			return giveUp()
		}
		t.log.Debug("gitea retry", "method", req.Method, "path", req.URL.Path, "status", rec.status, "attempt", attempt, "wait", wait)
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return giveUp()
		case <-timer.C:
		}
	}
}

// backoff is exponential with full jitter: uniform in [d/2, d] for
// d = base*2^(n-1), capped at MaxBackoff.
func (t *retryTransport) backoff(attempt int) time.Duration {
	d := t.opts.BaseBackoff << (attempt - 1)
	if d > t.opts.MaxBackoff || d <= 0 {
		d = t.opts.MaxBackoff
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
		return max(time.Until(t), 0), true
	}
	return 0, false
}
