package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/commitea/commitea/worker/tools"
)

// ToolRunner is what the tool endpoints need: the declared tools and a way
// to call one. *tools.Registry is one.
type ToolRunner interface {
	Tools() []tools.Tool
	Call(ctx context.Context, c tools.Caller, name string, input json.RawMessage) (tools.Envelope, *tools.Error)
}

// toolInfo is one entry of GET /v1/tools.
type toolInfo struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	ReadOnly     bool            `json:"readOnly"`
	Destructive  bool            `json:"destructive,omitempty"`
	Scope        string          `json:"scope"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

func listTools(run ToolRunner) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		var out []toolInfo
		for _, t := range run.Tools() {
			out = append(out, toolInfo{Name: t.Name, Description: t.Description, ReadOnly: t.ReadOnly, Destructive: t.Destructive,
				Scope: t.Scope(), InputSchema: t.InputSchema, OutputSchema: t.OutputSchema})
		}
		writeJSON(w, http.StatusOK, map[string]any{"tools": out})
	}
}

// maxToolBodyBytes bounds a tool call's input.
const maxToolBodyBytes = 1 << 20

// callTool is POST /v1/tools/{name}: the body is the tool's input.
func callTool(run ToolRunner) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, ok := callerFrom(r.Context())
		if !ok {
			writeError(w, CodeUnauthorized, "missing bearer token", "")
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxToolBodyBytes))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				writeError(w, CodeTooLarge, "tool input larger than 1 MiB", "")
				return
			}
			writeError(w, CodeInvalidInput, "could not read body", "")
			return
		}
		env, terr := run.Call(r.Context(), c, chi.URLParam(r, "name"), body)
		if terr != nil {
			writeToolError(w, terr)
			return
		}
		writeJSON(w, http.StatusOK, env)
	}
}
