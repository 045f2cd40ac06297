package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/models/modeltest"
	"github.com/commitea/commitea/worker/reginald"
	"github.com/commitea/commitea/worker/tools"
)

// askStack serves the tools plus Reginald's ask over a scripted small
// model (nil: no small model).
func askStack(t *testing.T, small *modeltest.Server) *httptest.Server {
	t.Helper()
	s := newToolStack(t, true)
	s.srv.Close()
	base := tools.NewService(s.pool, []store.Project{s.project}, quietLog()).Registry()
	router, _, _ := modeltest.Router(t, small, nil)
	r := &reginald.Reginald{Tools: base, Models: router, Pool: s.pool, Log: quietLog(), Now: func() time.Time { return toolNow }}
	srv := toolServer(t, Config{Tools: reginald.Registry(base, r), Tokens: testTokens, Version: "test", Log: quietLog()})
	t.Cleanup(srv.Close)
	return srv
}

func postAsk(t *testing.T, srv *httptest.Server, secret, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/ask", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("body %s: %v", raw, err)
	}
	return resp.StatusCode, v
}

// TestAskOverHTTPAndMCP: POST /v1/ask answers with the envelope; the same
// tool is listed and callable over MCP (not on the read-only endpoint).
func TestAskOverHTTPAndMCP(t *testing.T) {
	t.Parallel()
	small := modeltest.NewOpenAI(t,
		modeltest.Reply{Calls: []modeltest.Call{{Name: "query_project", Arguments: `{"view":"issue","filters":{"issueId":1001}}`}}},
		modeltest.Text("#1001 is the flaky login on Safari.", 0, 0),
		modeltest.Text("Nothing to add.", 0, 0))
	srv := askStack(t, small)
	status, v := postAsk(t, srv, readerSecret, `{"question":"What is #1001 about?","conversationId":"conv-1"}`)
	if status != http.StatusOK || str(t, v, "data.answer") != "#1001 is the flaky login on Safari." || get(t, v, "data.confirmed") != true ||
		str(t, v, "data.conversationId") != "conv-1" || str(t, v, "instruction") == "" {
		t.Fatalf("%d %v", status, v)
	}
	// The text reached the model as delimited data.
	if c := small.Requests()[1].Messages; !strings.Contains(c[len(c)-1].Content, `<data tool="query_project">`) {
		t.Errorf("tool result not delimited: %.100s", c[len(c)-1].Content)
	}
	// ask is listed on /mcp; /mcp/readonly serves query_project alone
	// (TestReadOnlyEndpointIsReadOnly).
	cs := mcpConnect(t, srv.URL+"/mcp", readerSecret)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tl := range list.Tools {
		found = found || tl.Name == "ask"
	}
	if !found {
		t.Fatal("/mcp does not list ask")
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: json.RawMessage(`{"question":"anything else?"}`)})
	if err != nil || res.IsError {
		t.Fatalf("mcp ask: %v %+v", err, res)
	}
	if status, v := postAsk(t, srv, readerSecret, `{}`); status != http.StatusBadRequest || str(t, v, "error.code") != tools.CodeInvalidInput {
		t.Fatalf("empty question: %d %v", status, v)
	}
}

// TestAskWithoutSmallModel: 503 MODEL_UNAVAILABLE naming query_project.
func TestAskWithoutSmallModel(t *testing.T) {
	t.Parallel()
	srv := askStack(t, nil)
	status, v := postAsk(t, srv, readerSecret, `{"question":"What next?"}`)
	if status != http.StatusServiceUnavailable || str(t, v, "error.code") != tools.CodeModelUnavailable || !strings.Contains(str(t, v, "error.message"), "query_project") {
		t.Fatalf("%d %v", status, v)
	}
}
