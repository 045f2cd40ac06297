package api

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/commitea/commitea/store"
)

// TestResources: the ledger, the standup and every milestone's forecast
// are listed and read over MCP, on /mcp and /mcp/readonly, at read scope,
// in the commitea://{owner}/{repo}/ scheme.
func TestResources(t *testing.T) {
	t.Parallel()
	s := newToolStack(t, true)
	ctx := context.Background()
	if _, err := store.AppendDirective(ctx, s.pool, store.Directive{ProjectID: s.project.ID, Kind: "note", Quote: "Alice is out next Friday.",
		Caller: "writer", Status: store.DirectiveApplied, AppliedAt: &toolNow}); err != nil {
		t.Fatal(err)
	}
	content := json.RawMessage(`{"project":"ceo/demo","day":"2026-11-30","drift":[],"plan":[{"login":"alice"}],"staleBlockers":[]}`)
	if _, _, err := store.InsertStandupOnce(ctx, s.pool, store.DailyStandup{ProjectID: s.project.ID, Day: toolNow, SnapshotVersion: 1, Content: content, Text: "Nothing moved."}); err != nil {
		t.Fatal(err)
	}
	for _, endpoint := range []string{"/mcp", "/mcp/readonly"} {
		t.Run(strings.TrimPrefix(endpoint, "/"), func(t *testing.T) {
			cs := mcpConnect(t, s.srv.URL+endpoint, readerSecret)
			if caps := cs.InitializeResult().Capabilities; caps.Resources == nil || caps.Resources.ListChanged {
				t.Fatalf("resources capability = %+v; stateless HTTP sends no list_changed", caps.Resources)
			}
			templates, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var uriTemplates []string
			for _, tm := range templates.ResourceTemplates {
				uriTemplates = append(uriTemplates, tm.URITemplate)
			}
			for _, want := range []string{"commitea://{owner}/{repo}/ledger", "commitea://{owner}/{repo}/standup", "commitea://{owner}/{repo}/milestones/{id}"} {
				if !slices.Contains(uriTemplates, want) {
					t.Fatalf("templates = %v, want %s", uriTemplates, want)
				}
			}
			list, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			byURI := map[string]*mcp.Resource{}
			for _, r := range list.Resources {
				byURI[r.URI] = r
			}
			for uri, mime := range map[string]string{
				"commitea://ceo/demo/ledger": "text/markdown", "commitea://ceo/demo/standup": "application/json",
				"commitea://ceo/demo/milestones/1": "application/json", "commitea://ceo/demo/milestones/2": "application/json",
			} {
				r := byURI[uri]
				if r == nil || r.MIMEType != mime || r.Name == "" || r.Title == "" {
					t.Fatalf("%s listed as %+v (all: %v)", uri, r, uriTemplates)
				}
				if r.Annotations == nil || r.Annotations.LastModified == "" {
					t.Fatalf("%s has no lastModified", uri)
				}
			}

			read := func(uri string) *mcp.ResourceContents {
				t.Helper()
				res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				if err != nil {
					t.Fatalf("read %s: %v", uri, err)
				}
				if len(res.Contents) != 1 || res.Contents[0].URI != uri {
					t.Fatalf("read %s = %+v", uri, res.Contents)
				}
				return res.Contents[0]
			}
			if c := read("commitea://ceo/demo/ledger"); c.MIMEType != "text/markdown" || !strings.Contains(c.Text, "> Alice is out next Friday.") {
				t.Fatalf("ledger = %s %.200s", c.MIMEType, c.Text)
			}
			var standup struct {
				Standup struct {
					Day  string `json:"day"`
					Text string `json:"text"`
				} `json:"standup"`
			}
			if c := read("commitea://ceo/demo/standup"); json.Unmarshal([]byte(c.Text), &standup) != nil || standup.Standup.Day != "2026-11-30" || standup.Standup.Text != "Nothing moved." {
				t.Fatalf("standup = %.300s", c.Text)
			}
			var milestone struct {
				ID   int64 `json:"id"`
				Cone *struct {
					P50 string `json:"p50"`
					P80 string `json:"p80"`
				} `json:"cone"`
				Snapshot struct {
					Version int64 `json:"version"`
				} `json:"snapshot"`
			}
			if c := read("commitea://ceo/demo/milestones/1"); json.Unmarshal([]byte(c.Text), &milestone) != nil || milestone.ID != 1 || milestone.Cone == nil || milestone.Snapshot.Version < 1 {
				t.Fatalf("milestone = %.300s", c.Text)
			}

			for uri, code := range map[string]int64{
				"commitea://ceo/demo/milestones/99": mcp.CodeResourceNotFound,
				"commitea://ceo/demo/milestones/x":  mcp.CodeResourceNotFound,
				"commitea://ceo/other/ledger":       mcp.CodeResourceNotFound,
				"commitea://ceo/demo/nothing":       mcp.CodeResourceNotFound,
			} {
				_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				var rpc *jsonrpc.Error
				if !errors.As(err, &rpc) || rpc.Code != code || !strings.HasPrefix(rpc.Message, "NOT_FOUND") && uri != "commitea://ceo/demo/nothing" {
					t.Fatalf("read %s: %v, want code %d", uri, err, code)
				}
			}
		})
	}
	// Resources need the read scope, on /mcp as well.
	cs := mcpConnect(t, s.srv.URL+"/mcp", writeOnly)
	_, err := cs.ListResources(ctx, nil)
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || !strings.HasPrefix(rpc.Message, "FORBIDDEN") || !strings.Contains(string(rpc.Data), `"code":"FORBIDDEN"`) {
		t.Fatalf("list with a write-only token: %v", err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "commitea://ceo/demo/ledger"}); !errors.As(err, &rpc) || !strings.HasPrefix(rpc.Message, "FORBIDDEN") {
		t.Fatalf("read with a write-only token: %v", err)
	}
}
