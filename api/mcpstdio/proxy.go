// Package mcpstdio serves a running CommiTea's MCP endpoint to a client
// that launches a local process and speaks MCP on its standard input and
// output (`commitea mcp`), as the Gitea and GitHub MCP servers offer.
//
// It is a relay, not a second server: every message the client sends is
// POSTed, as it came, to the instance's streamable HTTP endpoint (/mcp, or
// /mcp/readonly) with the bearer token, and every answer is written back
// as it came, so the tools, resources and errors are the instance's own,
// errors included (an isError result stays a result). Three things are
// the relay's own, because stdio has a connection and HTTP here has none:
//
//   - notifications/resources/list_changed: the instance is stateless and
//     cannot push, so the relay lists the resources every Poll and tells
//     the client when the list changed, which it does whenever a new
//     snapshot lands (each resource carries the time of its snapshot);
//     its initialize answer says resources.listChanged accordingly;
//   - notifications/cancelled cancels the relayed HTTP request, which is
//     what stops the work on the instance;
//   - an HTTP refusal (a wrong token, an instance that is down) becomes a
//     JSON-RPC error answer carrying CommiTea's error envelope as data,
//     and a line on standard error.
//
// Requests are relayed concurrently, so a slow ask does not hold up a
// tools/list. Logs go to standard error only: standard output is the
// protocol.
package mcpstdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultPoll is how often the relay checks the resource list.
const DefaultPoll = 15 * time.Second

// maxMessageBytes bounds one message from the client.
const maxMessageBytes = 16 << 20

// Proxy relays one stdio client to an instance's MCP endpoint.
type Proxy struct {
	// Endpoint is the MCP endpoint, e.g. http://localhost:8080/mcp.
	Endpoint string
	Token    string
	// HTTP sends the requests; nil: a client with no overall timeout (a
	// tool call that asks a model may take minutes; the client cancels).
	HTTP *http.Client
	// Poll is how often the resource list is checked; 0: DefaultPoll,
	// negative: never.
	Poll time.Duration
	Log  *slog.Logger

	out      io.Writer
	writeMu  sync.Mutex
	mu       sync.Mutex
	inflight map[string]context.CancelFunc // by request id
	version  string                        // negotiated protocol version
	session  string                        // Mcp-Session-Id, if the server sets one
	ready    chan struct{}                 // closed once initialize succeeded
	readyOne sync.Once
}

// message is the part of a JSON-RPC message the relay reads.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
}

func (m message) isRequest() bool { return m.Method != "" && len(m.ID) > 0 }

// Serve relays messages from in to the endpoint and answers to out until
// in ends or ctx is done.
func (p *Proxy) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	if p.HTTP == nil {
		p.HTTP = &http.Client{}
	}
	if p.Log == nil {
		p.Log = slog.New(slog.DiscardHandler)
	}
	p.out = out
	p.inflight = map[string]context.CancelFunc{}
	p.ready = make(chan struct{})
	ctx, cancel := context.WithCancel(ctx)
	var watcher, requests sync.WaitGroup
	// When the input ends, the requests already sent are answered; then
	// the watcher stops.
	defer func() {
		requests.Wait()
		cancel()
		watcher.Wait()
	}()
	if p.Poll >= 0 {
		watcher.Go(func() { p.watchResources(ctx) })
	}

	// Reading blocks until the client writes, so it has a goroutine of
	// its own and a cancelled ctx (SIGINT) ends Serve at once.
	lines, ended := make(chan []byte), make(chan error, 1)
	go func() {
		r := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := readLine(r)
			if len(bytes.TrimSpace(line)) > 0 {
				select {
				case lines <- line:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				ended <- err
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case line := <-lines:
			p.handle(ctx, &requests, line)
		case err := <-ended:
			if errors.Is(err, io.EOF) {
				p.Log.Debug("the client closed standard input")
				return nil
			}
			return fmt.Errorf("read from the client: %w", err)
		}
	}
}

// readLine reads one newline-delimited message, refusing one larger than
// maxMessageBytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxMessageBytes {
			return nil, fmt.Errorf("a message is larger than %d bytes", maxMessageBytes)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

func (p *Proxy) handle(ctx context.Context, wg *sync.WaitGroup, line []byte) {
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		p.writeError(nil, -32700, "parse error: "+err.Error(), nil)
		return
	}
	switch {
	case m.Method == "notifications/cancelled":
		var c struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		_ = json.Unmarshal(m.Params, &c)
		p.cancel(string(c.RequestID))
	case m.isRequest():
		rctx, cancel := context.WithCancel(ctx)
		p.track(string(m.ID), cancel)
		wg.Go(func() {
			defer p.cancel(string(m.ID))
			p.relay(rctx, m, line)
		})
	case m.Method != "":
		// A notification (notifications/initialized and the like): the
		// instance acknowledges it; nothing comes back.
		wg.Go(func() {
			if _, err := p.post(ctx, line); err != nil && ctx.Err() == nil {
				p.Log.Warn("relay a notification", slog.String("method", m.Method), slog.Any("error", err))
			}
		})
	default:
		// An answer to a request the server never sends over this relay.
		p.Log.Debug("dropped a client response", slog.String("id", string(m.ID)))
	}
}

func (p *Proxy) track(id string, cancel context.CancelFunc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight[id] = cancel
}

func (p *Proxy) cancel(id string) {
	p.mu.Lock()
	cancel := p.inflight[id]
	delete(p.inflight, id)
	p.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// relay sends one request and writes what comes back.
func (p *Proxy) relay(ctx context.Context, m message, line []byte) {
	msgs, err := p.post(ctx, line)
	if err != nil {
		if ctx.Err() != nil {
			return // cancelled by the client: it expects no answer
		}
		var re *refusal
		if errors.As(err, &re) {
			p.Log.Error("the instance refused the request", slog.String("method", m.Method), slog.Int("status", re.status), slog.String("error", re.message))
			p.writeError(m.ID, -32001, re.message, re.body)
			return
		}
		p.Log.Error("relay a request", slog.String("method", m.Method), slog.Any("error", err))
		p.writeError(m.ID, -32603, fmt.Sprintf("CommiTea at %s did not answer: %v", p.Endpoint, err), nil)
		return
	}
	for _, msg := range msgs {
		if m.Method == "initialize" {
			msg = p.initialized(msg)
		}
		p.write(msg)
	}
}

// initialized notes the negotiated protocol version and says, in the
// capabilities, that this relay sends resources/list_changed.
func (p *Proxy) initialized(msg []byte) []byte {
	var resp struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  map[string]json.RawMessage
		Error   json.RawMessage `json:"error,omitempty"`
	}
	if err := json.Unmarshal(msg, &resp); err != nil || resp.Result == nil {
		return msg
	}
	var version string
	_ = json.Unmarshal(resp.Result["protocolVersion"], &version)
	p.mu.Lock()
	p.version = version
	p.mu.Unlock()
	var caps map[string]json.RawMessage
	if err := json.Unmarshal(resp.Result["capabilities"], &caps); err == nil && caps["resources"] != nil && p.Poll >= 0 {
		var res map[string]any
		if json.Unmarshal(caps["resources"], &res) == nil {
			res["listChanged"] = true
			caps["resources"], _ = json.Marshal(res)
			resp.Result["capabilities"], _ = json.Marshal(caps)
		}
	}
	p.readyOne.Do(func() { close(p.ready) })
	out, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": resp.ID, "result": resp.Result})
	if err != nil {
		return msg
	}
	return out
}

// refusal is an HTTP answer that is not MCP: CommiTea's error envelope.
type refusal struct {
	status  int
	message string
	body    json.RawMessage
}

func (r *refusal) Error() string { return fmt.Sprintf("HTTP %d: %s", r.status, r.message) }

// post sends one message and returns the JSON-RPC messages that came
// back: none for an acknowledged notification, one JSON answer, or the
// events of a stream.
func (p *Proxy) post(ctx context.Context, body []byte) ([][]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.Endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if p.Token != "" {
		req.Header.Set("Authorization", "Bearer "+p.Token)
	}
	p.mu.Lock()
	version, session := p.version, p.session
	p.mu.Unlock()
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := p.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		p.mu.Lock()
		p.session = id
		p.mu.Unlock()
	}
	if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent {
		return nil, nil
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxMessageBytes))
	if err != nil {
		return nil, fmt.Errorf("read the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, refused(resp.StatusCode, raw)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return events(raw), nil
	}
	return [][]byte{bytes.TrimSpace(raw)}, nil
}

// refused reads CommiTea's {"error": {code, message}} body, or says what
// came instead.
func refused(status int, raw []byte) *refusal {
	var f struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &f) == nil && f.Error != nil {
		return &refusal{status: status, message: f.Error.Code + ": " + f.Error.Message, body: raw}
	}
	text := strings.TrimSpace(string(raw))
	if len(text) > 200 {
		text = text[:200]
	}
	return &refusal{status: status, message: fmt.Sprintf("HTTP %d from the instance: %s", status, text)}
}

// events are the data payloads of a server-sent event stream.
func events(raw []byte) [][]byte {
	var out [][]byte
	var data []byte
	flush := func() {
		if len(bytes.TrimSpace(data)) > 0 {
			out = append(out, bytes.TrimSpace(data))
		}
		data = nil
	}
	for line := range bytes.Lines(raw) {
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			flush()
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
			data = append(data, '\n')
		}
	}
	flush()
	return out
}

func (p *Proxy) write(msg []byte) {
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	if _, err := p.out.Write(append(bytes.TrimSpace(msg), '\n')); err != nil {
		p.Log.Error("write to the client", slog.Any("error", err))
	}
}

func (p *Proxy) writeError(id json.RawMessage, code int, message string, data json.RawMessage) {
	e := map[string]any{"code": code, "message": message}
	if len(data) > 0 && json.Valid(data) {
		e["data"] = data
	}
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	p.write(b)
}

// watchResources lists the resources every Poll once the client is
// initialized and sends notifications/resources/list_changed when the
// list (URIs and their lastModified) differs from the last one seen.
func (p *Proxy) watchResources(ctx context.Context) {
	select {
	case <-p.ready:
	case <-ctx.Done():
		return
	}
	every := p.Poll
	if every == 0 {
		every = DefaultPoll
	}
	last, ok := p.listFingerprint(ctx)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now, good := p.listFingerprint(ctx)
		if !good {
			continue
		}
		if ok && now != last {
			p.write([]byte(`{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`))
		}
		last, ok = now, true
	}
}

// listFingerprint is the resource list as one string; false when it could
// not be read (the instance is restarting, say), which is not a change.
func (p *Proxy) listFingerprint(ctx context.Context) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	body := []byte(`{"jsonrpc":"2.0","id":"commitea-mcp-watch","method":"resources/list","params":{}}`)
	msgs, err := p.post(ctx, body)
	if err != nil || len(msgs) == 0 {
		if ctx.Err() == nil {
			p.Log.Warn("list resources", slog.Any("error", err))
		}
		return "", false
	}
	var resp struct {
		Result *struct {
			Resources []struct {
				URI         string `json:"uri"`
				Annotations *struct {
					LastModified string `json:"lastModified"`
				} `json:"annotations"`
			} `json:"resources"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msgs[len(msgs)-1], &resp); err != nil || resp.Result == nil {
		return "", false
	}
	var keys []string
	for _, r := range resp.Result.Resources {
		k := r.URI
		if r.Annotations != nil {
			k += "@" + r.Annotations.LastModified
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, "\n"), true
}
