package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/commitea/commitea/worker/tools"
)

// ToolRunner is what the tool endpoints need: the declared tools and a way
// to call one, and the declared resource kinds and a way to list and read
// them. *tools.Registry is one.
type ToolRunner interface {
	Tools() []tools.Tool
	Lookup(name string) (tools.Tool, bool)
	Call(ctx context.Context, c tools.Caller, name string, input json.RawMessage) (tools.Envelope, *tools.Error)
	Resources() []tools.Resource
	ListResources(ctx context.Context, c tools.Caller) ([]tools.ResourceRef, *tools.Error)
	ReadResource(ctx context.Context, c tools.Caller, uri string) (tools.ResourceContent, *tools.Error)
}

// toolInfo is one entry of GET /v1/tools: the declaration as MCP lists it,
// with the scope a call needs.
type toolInfo struct {
	Name         string               `json:"name"`
	Description  string               `json:"description"`
	Scope        string               `json:"scope"`
	Annotations  *mcp.ToolAnnotations `json:"annotations"`
	InputSchema  json.RawMessage      `json:"inputSchema"`
	OutputSchema json.RawMessage      `json:"outputSchema"`
}

func listTools(run ToolRunner) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		var out []toolInfo
		for _, t := range run.Tools() {
			out = append(out, toolInfo{Name: t.Name, Description: t.Description, Scope: t.Scope, Annotations: annotations(t.Hints),
				InputSchema: t.InputSchema, OutputSchema: t.OutputSchema})
		}
		writeJSON(w, http.StatusOK, map[string]any{"tools": out})
	}
}

// maxToolBodyBytes bounds a tool call's input.
const maxToolBodyBytes = 1 << 20

// toolBodies are the bounds of a tool call's body (bodies.go).
type toolBodies struct {
	limit   int64
	timeout time.Duration
	budget  *byteBudget
}

func (b toolBodies) read(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	buffered, err := readBounded(w, r, b.limit, b.timeout, b.budget)
	defer buffered.release()
	if err != nil {
		writeReadError(w, err, "tool input")
		return nil, false
	}
	return buffered.Bytes(), true
}

// buffer reads the body within the bounds before the MCP handler sees it.
func (b toolBodies) buffer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, ok := b.read(w, r)
		if !ok {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// callTool is POST /v1/tools/{name}: the body is the tool's input.
func callTool(run ToolRunner, bodies toolBodies) http.HandlerFunc {
	return callNamed(run, bodies, func(r *http.Request) string { return chi.URLParam(r, "name") })
}

// callNamed calls the tool nameOf names with the body as its input.
func callNamed(run ToolRunner, bodies toolBodies, nameOf func(*http.Request) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, ok := callerFrom(r.Context())
		if !ok {
			writeError(w, CodeUnauthorized, "missing bearer token", "")
			return
		}
		body, ok := bodies.read(w, r)
		if !ok {
			return
		}
		name := nameOf(r)
		var err error
		if key := r.Header.Get("Idempotency-Key"); key != "" {
			if body, err = withIdempotencyKey(run, name, body, key); err != nil {
				writeError(w, CodeInvalidInput, err.Error(), "Idempotency-Key")
				return
			}
		}
		env, terr := run.Call(r.Context(), c, name, body)
		if terr != nil {
			writeToolError(w, terr)
			return
		}
		writeJSON(w, http.StatusOK, env)
	}
}

// withIdempotencyKey puts the Idempotency-Key header into the input as
// idempotencyKey, for the tools whose input has one (apply_changes); a key
// in the body wins over the header. Other tools refuse the header rather
// than ignore it.
func withIdempotencyKey(run ToolRunner, name string, body []byte, key string) ([]byte, error) {
	t, ok := run.Lookup(name)
	if !ok {
		return body, nil // the call answers NOT_FOUND
	}
	if !t.HasInput("idempotencyKey") {
		return nil, fmt.Errorf("%s does not take an Idempotency-Key", name)
	}
	var in map[string]json.RawMessage
	if len(bytes.TrimSpace(body)) == 0 {
		in = map[string]json.RawMessage{}
	} else if err := json.Unmarshal(body, &in); err != nil || in == nil {
		return body, nil // the call reports the malformed input
	}
	if _, set := in["idempotencyKey"]; !set {
		in["idempotencyKey"], _ = json.Marshal(key)
	}
	return json.Marshal(in)
}
