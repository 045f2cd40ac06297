package api

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Bounded reads. The webhook must read a body whole before it can check
// the signature, so until then every byte is an unauthenticated stranger's:
// without bounds, 40 connections sending 10 MiB each took RSS from 63 MB to
// 544 MB, and a body trickled a byte at a time held its connection open
// forever. Three bounds answer that:
//
//   - a read deadline per route, set when the handler starts reading the
//     body: short for the webhook (Gitea itself gives up on a delivery
//     after a few seconds), longer for tool calls; a body not in by then
//     is answered 408 and its connection closed;
//   - the per-request size limit (server.max_body_bytes), 413 beyond it;
//   - one budget of bytes buffered at once across all requests
//     (server.max_buffered_bytes). A body is read in chunks taken from a
//     pool and each chunk is charged to the budget before it is filled, so
//     a slow sender holds only what it has sent and memory is the budget,
//     not the budget plus garbage. When the budget is spent the request is
//     answered 503 with Retry-After, which Gitea does not redeliver but a
//     burst of real deliveries (32 clients, a few KB each) never comes near.
//
// Tool bodies (/v1 and /mcp) are read the same way, after the token check.

// DefaultMaxBufferedBytes is the budget when the config sets none.
const DefaultMaxBufferedBytes = 32 << 20

// Read deadlines per route when the config sets none.
const (
	DefaultWebhookReadTimeout = 10 * time.Second
	DefaultToolReadTimeout    = 30 * time.Second
)

// retryAfter is the Retry-After of a 503 for a spent budget: bodies in
// flight finish or hit their deadline within seconds.
const retryAfter = 2 * time.Second

// bodyChunk is the unit of buffering and of the budget.
const bodyChunk = 16 << 10

var chunkPool = sync.Pool{New: func() any { b := make([]byte, bodyChunk); return &b }}

// byteBudget counts bytes buffered at once across requests.
type byteBudget struct {
	mu          sync.Mutex
	used, limit int64
}

func newByteBudget(limit int64) *byteBudget { return &byteBudget{limit: limit} }

func (b *byteBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

func (b *byteBudget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// inUse is what is buffered now (tests).
func (b *byteBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// errBudgetSpent: the budget of buffered bytes is spent for now.
var errBudgetSpent = errors.New("too many request bytes buffered at once")

// errBodyTooLarge: the body is larger than the per-request limit.
var errBodyTooLarge = errors.New("body larger than the configured limit")

// errBodyTooSlow: the body did not arrive before the route's deadline.
var errBodyTooSlow = errors.New("body not received in time")

// bufferedBody is a request body held in pooled chunks.
type bufferedBody struct {
	chunks [][]byte // each a full pooled chunk, the last filled to n%bodyChunk
	n      int
	budget *byteBudget
}

// readBounded reads r's body within limit bytes, charging every chunk to
// budget, after setting the connection's read deadline to timeout from
// now. The caller must release the body.
func readBounded(w http.ResponseWriter, r *http.Request, limit int64, timeout time.Duration, budget *byteBudget) (*bufferedBody, error) {
	if timeout > 0 {
		// Not every ResponseWriter supports deadlines (httptest's
		// recorder does not); the server's own ones always do.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
	}
	b := &bufferedBody{budget: budget}
	if r.ContentLength > limit {
		return b, errBodyTooLarge
	}
	for {
		if b.n == len(b.chunks)*bodyChunk {
			if int64(b.n) > limit {
				return b, errBodyTooLarge
			}
			if !budget.take(bodyChunk) {
				return b, errBudgetSpent
			}
			b.chunks = append(b.chunks, *chunkPool.Get().(*[]byte))
		}
		last := b.chunks[len(b.chunks)-1]
		m, err := r.Body.Read(last[b.n%bodyChunk:])
		b.n += m
		if int64(b.n) > limit {
			return b, errBodyTooLarge
		}
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, http.ErrHandlerTimeout) {
				return b, errBodyTooSlow
			}
			return b, err
		}
	}
}

// Len is the body's size.
func (b *bufferedBody) Len() int { return b.n }

// WriteTo writes the body (to a MAC, say) without joining it.
func (b *bufferedBody) WriteTo(w io.Writer) (int64, error) {
	var total int64
	left := b.n
	for _, c := range b.chunks {
		k := min(left, bodyChunk)
		m, err := w.Write(c[:k])
		total += int64(m)
		if err != nil {
			return total, err
		}
		left -= k
	}
	return total, nil
}

// Bytes joins the body into one slice of its own.
func (b *bufferedBody) Bytes() []byte {
	var out bytes.Buffer
	out.Grow(b.n)
	_, _ = b.WriteTo(&out)
	return out.Bytes()
}

// release returns the chunks to the pool and their bytes to the budget;
// calling it twice is harmless.
func (b *bufferedBody) release() {
	for i := range b.chunks {
		c := b.chunks[i]
		chunkPool.Put(&c)
	}
	if b.budget != nil {
		b.budget.give(int64(len(b.chunks)) * bodyChunk)
	}
	b.chunks, b.n = nil, 0
}

// writeReadError answers a failed bounded read: 413, 408 (closing the
// connection, whose request stream is now unusable), 503 with Retry-After
// for a spent budget, 400 otherwise. It returns the metric reason.
func writeReadError(w http.ResponseWriter, err error, what string) string {
	switch {
	case errors.Is(err, errBodyTooLarge):
		w.Header().Set("Connection", "close")
		writeError(w, CodeTooLarge, what+" larger than the configured limit", "")
		return "too_large"
	case errors.Is(err, errBodyTooSlow):
		w.Header().Set("Connection", "close")
		writeError(w, CodeTimeout, what+" not received in time", "")
		return "too_slow"
	case errors.Is(err, errBudgetSpent):
		w.Header().Set("Connection", "close")
		w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter/time.Second)))
		writeError(w, CodeUnavailable, "too many request bytes in flight; retry shortly", "")
		return "busy"
	}
	writeError(w, CodeInvalidInput, "could not read "+what, "")
	return "unreadable"
}

// NewServer is the HTTP server serve runs the router in (and the load
// commands measure): bodies have per-route deadlines (above); these bound
// the rest: headers, a backstop for whole requests, idle keep-alive
// connections, and header size (tokens and cookies fit easily).
func NewServer(addr string, h http.Handler) *http.Server {
	return &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
}
