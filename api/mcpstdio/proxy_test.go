package mcpstdio_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/commitea/commitea/api"
	"github.com/commitea/commitea/api/mcpstdio"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/tools"
)

const secret = "relay-test-secret-0123456789"

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// instance is a running CommiTea's HTTP side over a seeded project with a
// snapshot, and the recompute that makes the next one.
type instance struct {
	srv       *httptest.Server
	recompute func(t *testing.T)
}

func newInstance(t *testing.T) instance {
	t.Helper()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "ceo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	if err := storetest.SeedProject(ctx, pool, p.ID, storetest.ProjectShape{Open: 20, Done: 20, People: 3, DepShare: 0.2, Milestones: 2, Seed: 3}, now); err != nil {
		t.Fatal(err)
	}
	clock := now
	f := &worker.Forecaster{Pool: pool, Log: quiet(), Trials: 100, Now: func() time.Time { return clock }}
	recompute := func(t *testing.T) {
		t.Helper()
		clock = clock.Add(time.Minute)
		if err := f.Recompute(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
	}
	recompute(t)
	reg := tools.NewService(pool, []store.Project{p}, quiet()).Registry()
	srv := httptest.NewServer(api.NewRouter(api.Config{Tools: reg, Version: "test", Log: quiet(),
		Tokens: []api.Token{{Name: "reader", Scopes: []string{"read"}, Secret: secret}}}))
	t.Cleanup(srv.Close)
	return instance{srv: srv, recompute: recompute}
}

// relay runs a Proxy on pipes and connects the Go SDK's client to it.
func relay(t *testing.T, p *mcpstdio.Proxy, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	toRelay, fromClient := io.Pipe()
	toClient, fromRelay := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- p.Serve(ctx, toRelay, fromRelay)
		_ = fromRelay.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "relay-test", Version: "1"}, opts)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect through the relay: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = fromClient.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("relay: %v", err)
		}
	})
	return cs
}

// direct posts one JSON-RPC request to the endpoint and returns the result.
func direct(t *testing.T, endpoint, method string, params any) json.RawMessage {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rpc struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&rpc); err != nil || rpc.Result == nil {
		t.Fatalf("%s: %v", method, err)
	}
	return rpc.Result
}

func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	norm := func(v any) string {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var x any
		_ = json.Unmarshal(raw, &x)
		out, _ := json.Marshal(x)
		return string(out)
	}
	return norm(a) == norm(b)
}

// TestRelayPassesThrough: the tools, their results (errors included) and
// the resources come through the relay as the instance sends them.
func TestRelayPassesThrough(t *testing.T) {
	t.Parallel()
	in := newInstance(t)
	cs := relay(t, &mcpstdio.Proxy{Endpoint: in.srv.URL + "/mcp", Token: secret, Log: quiet(), Poll: -1}, nil)
	ctx := context.Background()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := direct(t, in.srv.URL+"/mcp", "tools/list", map[string]any{}); !sameJSON(t, tools, json.RawMessage(want)) {
		t.Fatalf("tools/list through the relay differs:\n%s", want)
	}
	for _, call := range []map[string]any{
		{"name": "query_project", "arguments": map[string]any{"view": "runway"}},
		{"name": "query_project", "arguments": map[string]any{"view": "gantt"}},
		{"name": "apply_changes", "arguments": map[string]any{"ops": []any{}}},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call["name"].(string), Arguments: call["arguments"]})
		if err != nil {
			t.Fatalf("call %v: %v", call, err)
		}
		want := direct(t, in.srv.URL+"/mcp", "tools/call", call)
		if !sameJSON(t, res, json.RawMessage(want)) {
			t.Fatalf("call %v through the relay:\n%+v\nwant %s", call, res, want)
		}
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "commitea://ceo/demo/milestones/1"})
	if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, `"cone"`) {
		t.Fatalf("read a milestone: %v %+v", err, res)
	}
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "commitea://ceo/demo/milestones/99"})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != mcp.CodeResourceNotFound || !strings.HasPrefix(rpc.Message, "NOT_FOUND") {
		t.Fatalf("read a milestone that does not exist: %v", err)
	}
}

// TestRelayAnnouncesNewSnapshots: over stdio a new snapshot is announced
// with notifications/resources/list_changed, and the initialize answer
// says it will be.
func TestRelayAnnouncesNewSnapshots(t *testing.T) {
	t.Parallel()
	in := newInstance(t)
	changed := make(chan struct{}, 8)
	cs := relay(t, &mcpstdio.Proxy{Endpoint: in.srv.URL + "/mcp/readonly", Token: secret, Log: quiet(), Poll: 20 * time.Millisecond},
		&mcp.ClientOptions{ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} }})
	if caps := cs.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.ListChanged {
		t.Fatalf("resources capability through the relay = %+v", caps.Resources)
	}
	// Nothing changes, nothing is said.
	select {
	case <-changed:
		t.Fatal("list_changed without a new snapshot")
	case <-time.After(200 * time.Millisecond):
	}
	in.recompute(t)
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no list_changed after a new snapshot")
	}
}

// TestRelayRefusals: what the instance refuses over HTTP reaches the
// client as a JSON-RPC error naming CommiTea's code.
func TestRelayRefusals(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(api.NewRouter(api.Config{Tools: tools.NewService(nil, nil, quiet()).Registry(), Log: quiet(),
		Tokens: []api.Token{{Name: "reader", Scopes: []string{"read"}, Secret: secret}}}))
	t.Cleanup(srv.Close)
	var stderr bytes.Buffer
	p := &mcpstdio.Proxy{Endpoint: srv.URL + "/mcp", Token: "not-a-token-of-this-instance", Poll: -1,
		Log: slog.New(slog.NewTextHandler(&stderr, nil))}
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}` + "\n")
	var out bytes.Buffer
	if err := p.Serve(context.Background(), in, &out); err != nil {
		t.Fatal(err)
	}
	var resp struct {
		ID    int `json:"id"`
		Error *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil || resp.ID != 1 || resp.Error == nil ||
		!strings.HasPrefix(resp.Error.Message, "UNAUTHORIZED") || !strings.Contains(string(resp.Error.Data), `"UNAUTHORIZED"`) {
		t.Fatalf("relay answered %s (%v)", out.String(), err)
	}
	if !strings.Contains(stderr.String(), "UNAUTHORIZED") {
		t.Fatalf("nothing logged: %s", stderr.String())
	}

	// An instance that is not there.
	srv.Close()
	out.Reset()
	in = strings.NewReader(`{"jsonrpc":"2.0","id":"a","method":"tools/list"}` + "\n")
	if err := (&mcpstdio.Proxy{Endpoint: srv.URL + "/mcp", Token: secret, Poll: -1, Log: quiet()}).Serve(context.Background(), in, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"id":"a"`) || !strings.Contains(out.String(), "did not answer") {
		t.Fatalf("relay answered %s", out.String())
	}
}
