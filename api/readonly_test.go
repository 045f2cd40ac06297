package api

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/models/modeltest"
	"github.com/commitea/commitea/worker/reginald"
	"github.com/commitea/commitea/worker/tools"
)

// scopeRecorder is a ToolRunner that notes the scopes of every call it
// passes on.
type scopeRecorder struct {
	ToolRunner
	mu     sync.Mutex
	scopes [][]string
}

func (s *scopeRecorder) Call(ctx context.Context, c tools.Caller, name string, in json.RawMessage) (tools.Envelope, *tools.Error) {
	s.mu.Lock()
	s.scopes = append(s.scopes, slices.Clone(c.Scopes))
	s.mu.Unlock()
	return s.ToolRunner.Call(ctx, c, name, in)
}

// TestReadOnlyEndpointIsReadOnly: with a write-scoped token, ask on
// /mcp/readonly handed a directive to record_directive, which wrote a
// ledger row. The endpoint now serves query_project alone, and calls it
// with the read scope whatever the token holds.
func TestReadOnlyEndpointIsReadOnly(t *testing.T) {
	t.Parallel()
	s := newToolStack(t, true)
	s.srv.Close()
	small := modeltest.NewOpenAI(t,
		modeltest.Reply{Calls: []modeltest.Call{{Name: "record_directive", Arguments: `{"kind":"note","quote":"the demo went well"}`}}},
		modeltest.Text("Noted.", 0, 0))
	base := tools.NewService(s.pool, []store.Project{s.project}, quietLog()).Registry()
	router, _, _ := modeltest.Router(t, small, nil)
	r := &reginald.Reginald{Tools: base, Models: router, Pool: s.pool, Log: quietLog(), Now: func() time.Time { return toolNow }}
	rec := &scopeRecorder{ToolRunner: reginald.Registry(base, r)}
	srv := httptest.NewServer(NewRouter(Config{Tools: rec, Tokens: testTokens, Version: "test", Log: quietLog()}))
	t.Cleanup(srv.Close)
	ctx := context.Background()

	for _, secret := range []string{writerSecret, approverSecret} {
		cs := mcpConnect(t, srv.URL+"/mcp/readonly", secret)
		list, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range list.Tools {
			names = append(names, tl.Name)
		}
		if !slices.Equal(names, []string{"query_project"}) {
			t.Fatalf("/mcp/readonly lists %v, want query_project only", names)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: json.RawMessage(`{"question":"note that the demo went well"}`)})
		if err == nil && !res.IsError {
			t.Fatalf("/mcp/readonly served ask: %+v", res.Content)
		}
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "query_project", Arguments: json.RawMessage(`{"view":"runway"}`)})
		if err != nil || res.IsError {
			t.Fatalf("readonly query_project: %v %+v", err, res)
		}
	}
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM directives`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("directives = %d, %v after calls on /mcp/readonly; want none", n, err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.scopes) == 0 {
		t.Fatal("no call reached the registry")
	}
	for _, sc := range rec.scopes {
		if !slices.Equal(sc, []string{tools.ScopeRead}) {
			t.Fatalf("a call on /mcp/readonly ran with scopes %v, want [read]", sc)
		}
	}
}
