package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/reginald"
	"github.com/commitea/commitea/worker/tools"
)

// The tool list is what a model reads on every turn, so its size is a
// budget: the model-facing part of /mcp's tools/list (each tool's name,
// description, input schema and annotations as compact JSON; output
// schemas are for clients, not models) stays within toolListBudget bytes,
// ask included. The snapshot in testdata makes every change to it visible
// in review.
const (
	toolListBudget   = 6000
	toolListSnapshot = "testdata/tools-list.json"
	toolListSizes    = "testdata/tools-list.size"
	// updateSnapshots, set to 1, rewrites the snapshots instead of
	// comparing them.
	updateSnapshots = "UPDATE_SNAPSHOTS"
)

// servedRegistry is every tool as `commitea serve` declares them (the
// four tools and ask), over no database: listing needs none.
func servedRegistry() *tools.Registry {
	base := tools.NewService(nil, []store.Project{{ID: 1, Owner: "ceo", Name: "demo"}}, quietLog()).Registry()
	return reginald.Registry(base, &reginald.Reginald{Tools: base, Log: quietLog()})
}

// mcpRPC sends one JSON-RPC request to an MCP endpoint and returns its
// result as it came over the wire.
func mcpRPC(t *testing.T, endpoint, secret, method string, params any) json.RawMessage {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var rpc struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(raw, &rpc); err != nil || rpc.Result == nil {
		t.Fatalf("%s = %d %s", method, resp.StatusCode, raw)
	}
	return rpc.Result
}

// modelFacing is /mcp's tools/list without the output schemas, one
// compact JSON object per tool, in the order served.
func modelFacing(t *testing.T, endpoint string) (names []string, compact [][]byte) {
	t.Helper()
	var list struct {
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(mcpRPC(t, endpoint, readerSecret, "tools/list", map[string]any{}), &list); err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		delete(tl, "outputSchema")
		var name string
		_ = json.Unmarshal(tl["name"], &name)
		// Marshal sorts the keys; the schemas inside keep their order.
		b, err := json.Marshal(tl)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
		compact = append(compact, b)
	}
	return names, compact
}

func TestToolListBudgetAndSnapshot(t *testing.T) {
	t.Parallel()
	srv := toolServer(t, Config{Tools: servedRegistry(), Tokens: testTokens, Version: "test", Log: quietLog()})
	t.Cleanup(srv.Close)
	names, compact := modelFacing(t, srv.URL+"/mcp")

	var sizes strings.Builder
	fmt.Fprintf(&sizes, "# bytes a model reads of /mcp tools/list: name, description, inputSchema, annotations\n")
	fmt.Fprintf(&sizes, "# as compact JSON, outputSchema left out; the budget is %d\n", toolListBudget)
	var pretty bytes.Buffer
	pretty.WriteString("[\n")
	total := 0
	for i, b := range compact {
		total += len(b)
		fmt.Fprintf(&sizes, "%-18s %5d\n", names[i], len(b))
		if i > 0 {
			pretty.WriteString(",\n")
		}
		pretty.WriteString("  ")
		if err := json.Indent(&pretty, b, "  ", "  "); err != nil {
			t.Fatal(err)
		}
		t.Logf("%-18s %5d bytes", names[i], len(b))
	}
	pretty.WriteString("\n]\n")
	fmt.Fprintf(&sizes, "%-18s %5d\n", "total", total)
	t.Logf("%-18s %5d bytes (budget %d)", "total", total, toolListBudget)

	if !strings.Contains(strings.Join(names, ","), "ask") {
		t.Fatalf("ask is not in the served tool list: %v", names)
	}
	if total > toolListBudget {
		t.Errorf("the model-facing tool list is %d bytes, over the budget of %d:\n%s"+
			"shorten descriptions (say it once, enums over prose) rather than raise the budget", total, toolListBudget, sizes.String())
	}
	for file, want := range map[string][]byte{toolListSnapshot: pretty.Bytes(), toolListSizes: []byte(sizes.String())} {
		if os.Getenv(updateSnapshots) == "1" {
			if err := os.WriteFile(file, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(file)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("api/%s does not match what /mcp lists (%v).\n"+
				"What a model reads changed: if that is intended, refresh the snapshots with\n"+
				"  %s=1 go test ./api -run TestToolListBudgetAndSnapshot\n"+
				"review the diff of api/testdata/tools-list.* and commit it. Sizes now:\n%s",
				filepath.ToSlash(file), err, updateSnapshots, sizes.String())
		}
	}
}

// TestToolAnnotations holds the table of what each tool does, as MCP
// annotations, on /mcp and on GET /v1/tools alike.
func TestToolAnnotations(t *testing.T) {
	t.Parallel()
	type hints struct{ readOnly, destructive, idempotent, openWorld bool }
	want := map[string]hints{
		"query_project":    {readOnly: true, destructive: false, idempotent: true, openWorld: false},
		"apply_changes":    {readOnly: false, destructive: true, idempotent: false, openWorld: true},
		"record_directive": {readOnly: false, destructive: false, idempotent: false, openWorld: false},
		"capture_work":     {readOnly: true, destructive: false, idempotent: false, openWorld: true},
		// ask hands directives to record_directive, which writes the ledger.
		"ask": {readOnly: false, destructive: false, idempotent: false, openWorld: true},
	}
	check := func(t *testing.T, srvURL string, want map[string]hints) {
		t.Helper()
		cs := mcpConnect(t, srvURL+"/mcp", readerSecret)
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) != len(want) {
			t.Fatalf("/mcp lists %d tools, want %d", len(res.Tools), len(want))
		}
		got := map[string]*mcp.ToolAnnotations{}
		for _, tl := range res.Tools {
			got[tl.Name] = tl.Annotations
		}
		req, _ := http.NewRequest(http.MethodGet, srvURL+"/v1/tools", nil)
		req.Header.Set("Authorization", "Bearer "+readerSecret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var list struct {
			Tools []struct {
				Name        string               `json:"name"`
				Annotations *mcp.ToolAnnotations `json:"annotations"`
			} `json:"tools"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
			t.Fatal(err)
		}
		overHTTP := map[string]*mcp.ToolAnnotations{}
		for _, tl := range list.Tools {
			overHTTP[tl.Name] = tl.Annotations
		}
		for name, w := range want {
			for transport, a := range map[string]*mcp.ToolAnnotations{"mcp": got[name], "http": overHTTP[name]} {
				if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
					t.Fatalf("%s over %s: annotations %+v leave a hint to the defaults", name, transport, a)
				}
				h := hints{readOnly: a.ReadOnlyHint, destructive: *a.DestructiveHint, idempotent: a.IdempotentHint, openWorld: *a.OpenWorldHint}
				if h != w {
					t.Errorf("%s over %s: %+v, want %+v", name, transport, h, w)
				}
			}
		}
	}
	srv := toolServer(t, Config{Tools: servedRegistry(), Tokens: testTokens, Version: "test", Log: quietLog()})
	t.Cleanup(srv.Close)
	check(t, srv.URL, want)

	// Where ask cannot hand a directive on (no record_directive beside
	// it), it changes nothing and says so.
	base := tools.NewService(nil, []store.Project{{ID: 1, Owner: "ceo", Name: "demo"}}, quietLog()).Registry()
	var readsOnly []tools.Tool
	for _, tl := range base.Tools() {
		if tl.Name == "query_project" || tl.Name == "capture_work" {
			readsOnly = append(readsOnly, tl)
		}
	}
	small := tools.NewRegistry(quietLog(), readsOnly...)
	srv2 := httptest.NewServer(NewRouter(Config{Tools: reginald.Registry(small, &reginald.Reginald{Tools: small, Log: quietLog()}),
		Tokens: testTokens, Version: "test", Log: quietLog()}))
	t.Cleanup(srv2.Close)
	askReads := want["ask"]
	askReads.readOnly = true
	check(t, srv2.URL, map[string]hints{"query_project": want["query_project"], "capture_work": want["capture_work"], "ask": askReads})
}
