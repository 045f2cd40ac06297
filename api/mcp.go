package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
		// Stateless HTTP cannot push, so no list is said to change here;
		// the stdio relay (api/mcpstdio) sends resources/list_changed and
		// says so in its own initialize answer.
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Tools: &mcp.ToolCapabilities{}, Resources: &mcp.ResourceCapabilities{}},
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
	// Resources: each kind is a template (resources/templates/list, and
	// what resources/read matches a URI against); resources/list names
	// every instance, which changes with the snapshot, so it is answered
	// from the registry rather than from registrations.
	for _, k := range run.Resources() {
		srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: k.URITemplate(), Name: k.Name, Title: k.Title,
			Description: k.Description, MIMEType: k.MIMEType}, mcpResourceHandler(run))
	}
	srv.AddReceivingMiddleware(mcpResourceList(run))
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

// mcpCaller is the caller the bearer middleware attached to a request.
func mcpCaller(extra *mcp.RequestExtra) tools.Caller {
	if extra == nil || extra.TokenInfo == nil {
		return tools.Caller{}
	}
	return tools.Caller{Name: extra.TokenInfo.UserID, Scopes: extra.TokenInfo.Scopes}
}

func mcpToolHandler(run ToolRunner, name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c := mcpCaller(req.Extra)
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

// mcpResourceList answers resources/list from the registry: every
// resource of every kind, each with the time it last changed, so a client
// (or the stdio relay) that lists again sees a new snapshot.
func mcpResourceList(run ToolRunner) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "resources/list" {
				return next(ctx, method, req)
			}
			refs, terr := run.ListResources(ctx, mcpCaller(req.GetExtra()))
			if terr != nil {
				return nil, resourceError("", terr)
			}
			res := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
			for _, r := range refs {
				mr := &mcp.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType}
				if !r.LastModified.IsZero() {
					mr.Annotations = &mcp.Annotations{LastModified: r.LastModified.UTC().Format(time.RFC3339Nano)}
				}
				res.Resources = append(res.Resources, mr)
			}
			return res, nil
		}
	}
}

func mcpResourceHandler(run ToolRunner) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		content, terr := run.ReadResource(ctx, mcpCaller(req.Extra), req.Params.URI)
		if terr != nil {
			return nil, resourceError(req.Params.URI, terr)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: content.URI, MIMEType: content.MIMEType, Text: content.Text}}}, nil
	}
}

// resourceError is a JSON-RPC error for a resource request, as the
// specification's resources page has them: a resource not found is the
// SDK's resource-not-found code, malformed input invalid params, and any
// other refusal a server error; the message starts with CommiTea's code
// and the data carries the error envelope, so a client sees what it would
// see from the tool.
func resourceError(uri string, e *tools.Error) error {
	code := int64(-32000) // implementation-defined server error
	switch e.Code {
	case tools.CodeNotFound:
		code = mcp.CodeResourceNotFound
	case tools.CodeInvalidInput:
		code = jsonrpc.CodeInvalidParams
	case tools.CodeInternal:
		code = jsonrpc.CodeInternalError
	}
	data := map[string]any{"error": e}
	if uri != "" {
		data["uri"] = uri
	}
	raw, _ := json.Marshal(data)
	return &jsonrpc.Error{Code: code, Message: e.Code + ": " + e.Message, Data: raw}
}
