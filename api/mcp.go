package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/commitea/commitea/worker/tools"
)

// The MCP adapter serves the same declared tools over MCP's streamable
// HTTP transport: /mcp has all of them, /mcp/readonly only the read-only
// ones. Sessions are stateless, so any API replica can answer any request.
//
// The wire form of an answer follows the specification's tools page: a
// success carries the envelope as structuredContent, which conforms to
// the tool's outputSchema, and the same JSON as text content for clients
// that read only text. A failure is a tool execution error: isError set,
// the error envelope {"error": {code, message, field?, preview?}} as JSON
// text content, and no structuredContent. The output schema describes
// successful results only, and the official TypeScript SDK validates any
// structuredContent it receives against it even when isError is set, so
// a failure sent as structured content reaches its caller as an unrelated
// schema exception instead of the error (api/testdata/mcpclient pins the
// SDK and the tests assert this wire form itself).

// mcpHandler builds one MCP endpoint over the tools that keep returns true
// for.
func mcpHandler(run ToolRunner, version string, log *slog.Logger, keep func(tools.Tool) bool) http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "commitea", Version: version}, &mcp.ServerOptions{
		Logger:       log,
		Instructions: "CommiTea is the project plan's source of truth. Read it with query_project; every date is a range the scheduler computed.",
	})
	for _, t := range run.Tools() {
		if !keep(t) {
			continue
		}
		srv.AddTool(&mcp.Tool{
			Name:         t.Name,
			Description:  t.Description,
			InputSchema:  t.InputSchema,
			OutputSchema: t.OutputSchema,
			Annotations:  annotations(t.Hints),
		}, mcpToolHandler(run, t.Name))
	}
	// The SDK's DNS-rebinding guard refuses loopback connections whose Host
	// is not loopback, which is every request a reverse proxy on the same
	// machine forwards. Rebinding attacks ride on ambient credentials; every
	// request here must carry a bearer token, so the guard is off.
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: log, DisableLocalhostProtection: true})
}

// annotations are a tool's hints as MCP tool annotations, each stated
// (readOnlyHint and idempotentHint are omitted when false, which is their
// default).
func annotations(h tools.Hints) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{
		ReadOnlyHint:    h.ReadOnly,
		DestructiveHint: new(h.Destructive),
		IdempotentHint:  h.Idempotent,
		OpenWorldHint:   new(h.OpenWorld),
	}
}

func mcpToolHandler(run ToolRunner, name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var c tools.Caller
		if req.Extra != nil && req.Extra.TokenInfo != nil {
			c = tools.Caller{Name: req.Extra.TokenInfo.UserID, Scopes: req.Extra.TokenInfo.Scopes}
		}
		var args json.RawMessage
		if req.Params != nil {
			args = req.Params.Arguments
		}
		env, terr := run.Call(ctx, c, name, args)
		if terr != nil {
			return mcpFailure(terr), nil
		}
		text, err := json.Marshal(env)
		if err != nil {
			return mcpFailure(tools.Errorf(tools.CodeInternal, "", "could not encode the answer of %s", name)), nil
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: string(text)}},
			StructuredContent: json.RawMessage(text),
		}, nil
	}
}

// mcpFailure is a tool execution error: the envelope as text, isError,
// no structured content.
func mcpFailure(e *tools.Error) *mcp.CallToolResult {
	text, err := json.Marshal(tools.Failure{Error: e})
	if err != nil {
		text = []byte(`{"error":{"code":"INTERNAL","message":"could not encode the error"}}`)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, IsError: true}
}
