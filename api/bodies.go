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
//   - one budget of memory held at once for requests across all of them
//     (server.max_buffered_bytes). A body is read in chunks and each chunk
//     is charged to the budget before it is filled, so a slow sender holds
//     only what it has sent. The chunks are the budget's own: freed ones
//     are kept for the next body (as many as are in use) rather than left
//     to the collector, so an attack makes no garbage for the heap to grow
//     over, and once it is over they are let go. Every open connection is charged
//     a fixed cost too (connCost: its goroutine's stack, its read and write
//     buffers, the request), since a thousand connections cost tens of MB
//     before their bodies do; a connection the budget cannot take is
//     answered 503 and closed as it is accepted. So memory for requests is
//     the budget, whatever the number of strangers. When it is spent a
//     request is answered 503 with Retry-After, which Gitea does not
//     redeliver but a burst of real deliveries (32 clients, a few KB each:
//     about 1.5 MiB) never comes near.
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

// connCost is what the budget charges an open connection of the server
// NewServer builds: its goroutine's stack (grown to 8–16 KiB by the time a
// handler runs), the 4 KiB read and write buffers, the request, its
// headers and the response (a few KiB), rounded up.
const connCost = 32 << 10

// byteBudget counts the memory held at once for requests, and keeps the
// body chunks it has handed out for reuse.
type byteBudget struct {
	mu          sync.Mutex
	used, limit int64
	free        [][]byte
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

// takeChunk charges one chunk and hands it out, a kept one when there is
// one. A chunk is allocated only when none is kept, so under a steady
// attack the chunks in use and kept stay within the budget.
func (b *byteBudget) takeChunk() ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+bodyChunk > b.limit {
		return nil, false
	}
	b.used += bodyChunk
	if k := len(b.free); k > 0 {
		c := b.free[k-1]
		b.free[k-1] = nil
		b.free = b.free[:k-1]
		return c, true
	}
	return make([]byte, bodyChunk), true
}

// keptChunks is how many free chunks the budget keeps even when idle.
const keptChunks = 64

// giveChunks returns chunks taken with takeChunk. The budget keeps as many
// free chunks as are in use (plus keptChunks): while an attack goes on it
// reuses them all, and once it is over the rest go back to the collector.
func (b *byteBudget) giveChunks(cs [][]byte) {
	b.mu.Lock()
	b.used -= int64(len(cs)) * bodyChunk
	b.free = append(b.free, cs...)
	if keep := int(b.used/bodyChunk) + keptChunks; len(b.free) > keep {
		clear(b.free[keep:])
		b.free = b.free[:keep]
	}
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
			c, ok := budget.takeChunk()
			if !ok {
				return b, errBudgetSpent
			}
			b.chunks = append(b.chunks, c)
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

// release returns the chunks and their bytes to the budget;
// calling it twice is harmless.
func (b *bufferedBody) release() {
	if b.budget != nil && len(b.chunks) > 0 {
		b.budget.giveChunks(b.chunks)
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
// connections, and header size (tokens and cookies fit easily). Every
// connection is charged connCost to the router's budget while it is open
// (see Bounded reads); one the budget cannot take is answered 503 with
// Retry-After and closed before a goroutine serves it.
func NewServer(addr string, h http.Handler) *http.Server {
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	if rh, ok := h.(*routerHandler); ok {
		srv.ConnState = (&connCharges{budget: rh.budget, open: map[net.Conn]bool{}}).state
	}
	return srv
}

// routerHandler is the router with the budget its handlers read bodies
// within, for NewServer to charge connections to.
type routerHandler struct {
	http.Handler
	budget *byteBudget
}

// connCharges charges open connections to a budget.
type connCharges struct {
	budget *byteBudget
	mu     sync.Mutex
	open   map[net.Conn]bool
}

// busyAnswer is written to a connection the budget cannot take, before it
// is closed: no goroutine, buffer or request is spent on it.
var busyAnswer = func() []byte {
	body := `{"error":{"code":"` + CodeUnavailable + `","message":"too many connections at once; retry shortly"}}` + "\n"
	return []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: " +
		strconv.Itoa(int(retryAfter/time.Second)) + "\r\nConnection: close\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}()

func (cc *connCharges) state(c net.Conn, s http.ConnState) {
	switch s {
	case http.StateNew:
		if !cc.budget.take(connCost) {
			// Called on the accept loop: a fresh connection's send buffer
			// is empty, and the deadline bounds the rest.
			_ = c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
			_, _ = c.Write(busyAnswer)
			_ = c.Close()
			return
		}
		cc.mu.Lock()
		cc.open[c] = true
		cc.mu.Unlock()
	case http.StateClosed, http.StateHijacked:
		cc.mu.Lock()
		charged := cc.open[c]
		delete(cc.open, c)
		cc.mu.Unlock()
		if charged {
			cc.budget.give(connCost)
		}
	}
}
