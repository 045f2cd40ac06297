package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/commitea/commitea/worker/tools"
)

// GET /v1/openapi.json describes the HTTP transport as OpenAPI 3.1, built
// from the same tool declarations as /v1/tools and MCP, so that a
// framework that consumes OpenAPI can call the tools without MCP. Each
// tool is an operation of its own (operationId: the tool's name), because
// a generated client wants one typed call per tool rather than one
// /v1/tools/{name} taking anything. Request and response bodies are the
// declared schemas, unchanged; every failure is the one error envelope,
// under each status the error table (errors.go) maps a code to. The
// schemas are JSON Schema 2020-12, OpenAPI 3.1's own dialect, and use no
// $ref, so they embed as they are. The tests validate the document with
// an OpenAPI 3.1 validator from npm and every /v1 request and response
// the api tests exchange against it.

// openAPIDoc is the top of the document, in the order readers expect.
type openAPIDoc struct {
	OpenAPI    string                                 `json:"openapi"`
	Info       openAPIInfo                            `json:"info"`
	Servers    []map[string]string                    `json:"servers,omitempty"`
	Security   []map[string][]string                  `json:"security"`
	Paths      map[string]map[string]openAPIOperation `json:"paths"`
	Components openAPIComponents                      `json:"components"`
}

type openAPIInfo struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Description string `json:"description"`
}

type openAPIComponents struct {
	SecuritySchemes map[string]any             `json:"securitySchemes"`
	Schemas         map[string]json.RawMessage `json:"schemas"`
	Responses       map[string]any             `json:"responses"`
}

// openAPIOperation is one operation. Scope and Annotations are extensions:
// the scope a token needs and the MCP annotations, as GET /v1/tools has
// them.
type openAPIOperation struct {
	OperationID string          `json:"operationId"`
	Summary     string          `json:"summary,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  []openAPIParam  `json:"parameters,omitempty"`
	RequestBody *openAPIBody    `json:"requestBody,omitempty"`
	Responses   map[string]any  `json:"responses"`
	Scope       string          `json:"x-commitea-scope,omitempty"`
	Annotations json.RawMessage `json:"x-mcp-annotations,omitempty"`
}

type openAPIParam struct {
	Name        string          `json:"name"`
	In          string          `json:"in"`
	Description string          `json:"description,omitempty"`
	Required    bool            `json:"required,omitempty"`
	Schema      json.RawMessage `json:"schema"`
}

type openAPIBody struct {
	Required bool                      `json:"required"`
	Content  map[string]map[string]any `json:"content"`
}

// errorSchema is the one error envelope; its code enum is every code the
// error table maps, so a new code is documented when it gets a status.
func errorSchema() json.RawMessage {
	var codes []string
	for code := range statusOf {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	enum, _ := json.Marshal(codes)
	return json.RawMessage(`{
  "type": "object",
  "required": ["error"],
  "properties": {
    "error": {
      "type": "object",
      "required": ["code", "message"],
      "properties": {
        "code": {"enum": ` + string(enum) + `},
        "message": {"type": "string"},
        "field": {"type": "string", "description": "the input field (or header) at fault"},
        "preview": {"type": "string", "description": "NEEDS_APPROVAL: the engine's consequence preview, for the person who must approve"}
      }
    }
  }
}`)
}

// errorResponses are the error statuses, each a reference to its
// response component.
func errorResponses() map[string]any {
	out := map[string]any{}
	for _, status := range statusOf {
		out[fmt.Sprint(status)] = map[string]string{"$ref": "#/components/responses/" + errorResponseName(status)}
	}
	return out
}

func errorResponseName(status int) string { return fmt.Sprintf("Error%d", status) }

// errorResponseComponents are the error responses, each naming the codes
// that map to its status and answering the error envelope.
func errorResponseComponents() map[string]any {
	byStatus := map[int][]string{}
	for code, status := range statusOf {
		byStatus[status] = append(byStatus[status], code)
	}
	out := map[string]any{}
	for status, codes := range byStatus {
		slices.Sort(codes)
		out[errorResponseName(status)] = map[string]any{
			"description": http.StatusText(status) + ": " + strings.Join(codes, ", "),
			"content":     map[string]any{"application/json": map[string]any{"schema": map[string]string{"$ref": "#/components/schemas/Error"}}},
		}
	}
	return out
}

func jsonContent(schema any) map[string]map[string]any {
	return map[string]map[string]any{"application/json": {"schema": schema}}
}

func ref(name string) map[string]string {
	return map[string]string{"$ref": "#/components/schemas/" + name}
}

// toolInfoSchema is one entry of GET /v1/tools.
const toolInfoSchema = `{
  "type": "object",
  "required": ["name", "description", "scope", "annotations", "inputSchema", "outputSchema"],
  "properties": {
    "name": {"type": "string"},
    "description": {"type": "string"},
    "scope": {"enum": ["read", "write"]},
    "annotations": {"type": "object", "properties": {
      "readOnlyHint": {"type": "boolean"}, "destructiveHint": {"type": "boolean"},
      "idempotentHint": {"type": "boolean"}, "openWorldHint": {"type": "boolean"}}},
    "inputSchema": {"type": "object"},
    "outputSchema": {"type": "object"}
  }
}`

// openAPIDocument builds the document for the tools run declares; ask
// adds POST /v1/ask and a ledger renderer GET /v1/pm-state.md, as
// mountTools serves them.
func openAPIDocument(cfg Config) openAPIDoc {
	doc := openAPIDoc{
		OpenAPI: "3.1.0",
		Info: openAPIInfo{Title: "CommiTea", Version: cfg.Version,
			Description: "CommiTea's tools over plain HTTP: the same declarations as GET /v1/tools and MCP at /mcp. " +
				"Every success is an envelope {data, instruction, safety?}; every failure {error: {code, message, field?, preview?}}."},
		Security: []map[string][]string{{"bearer": {}}},
		Paths:    map[string]map[string]openAPIOperation{},
		Components: openAPIComponents{
			SecuritySchemes: map[string]any{"bearer": map[string]string{"type": "http", "scheme": "bearer",
				"description": "a token's secret from the configuration; its scopes (read, write, approve) decide which tools it may call"}},
			Schemas:   map[string]json.RawMessage{"Error": errorSchema(), "ToolInfo": json.RawMessage(toolInfoSchema)},
			Responses: errorResponseComponents(),
		},
	}
	if cfg.Version == "" {
		doc.Info.Version = "dev"
	}
	if cfg.PublicURL != "" {
		doc.Servers = []map[string]string{{"url": strings.TrimRight(cfg.PublicURL, "/")}}
	}
	errs := errorResponses()
	authErrors := map[string]any{"401": errs["401"], "403": errs["403"]}

	doc.Paths["/v1/tools"] = map[string]openAPIOperation{"get": {OperationID: "listTools",
		Summary: "every tool's name, description, scope, MCP annotations and JSON schemas", Scope: tools.ScopeRead,
		Responses: withMap(authErrors, "200", map[string]any{"description": "the tools",
			"content": jsonContent(map[string]any{"type": "object", "required": []string{"tools"},
				"properties": map[string]any{"tools": map[string]any{"type": "array", "items": ref("ToolInfo")}}})})}}
	doc.Paths["/v1/openapi.json"] = map[string]openAPIOperation{"get": {OperationID: "openAPI",
		Summary: "this document", Scope: tools.ScopeRead,
		Responses: withMap(authErrors, "200", map[string]any{"description": "the OpenAPI document",
			"content": jsonContent(map[string]string{"type": "object"})})}}

	for _, t := range cfg.Tools.Tools() {
		in, out := t.Name+"Input", t.Name+"Output"
		doc.Components.Schemas[in] = t.InputSchema
		doc.Components.Schemas[out] = t.OutputSchema
		ann, _ := json.Marshal(annotations(t.Hints))
		op := openAPIOperation{OperationID: t.Name, Summary: t.Name, Description: t.Description, Scope: t.Scope,
			Annotations: ann,
			RequestBody: &openAPIBody{Required: true, Content: jsonContent(ref(in))},
			Responses:   union(errs, map[string]any{"200": map[string]any{"description": "the envelope", "content": jsonContent(ref(out))}})}
		if t.HasInput("idempotencyKey") {
			op.Parameters = append(op.Parameters, openAPIParam{Name: "Idempotency-Key", In: "header",
				Description: "the input's idempotencyKey, when the body has none", Schema: json.RawMessage(`{"type": "string"}`)})
		}
		doc.Paths["/v1/tools/"+t.Name] = map[string]openAPIOperation{"post": op}
		if t.Name == "ask" {
			alias := op
			alias.OperationID = "askPath"
			alias.Summary = "ask, under a path of its own"
			doc.Paths["/v1/ask"] = map[string]openAPIOperation{"post": alias}
		}
	}
	if cfg.PMState != nil {
		doc.Paths["/v1/pm-state.md"] = map[string]openAPIOperation{"get": {OperationID: "pmState",
			Summary: "the directive ledger as Markdown", Scope: tools.ScopeRead,
			Parameters: []openAPIParam{{Name: "project", In: "query", Description: "owner/repo, when several are configured",
				Schema: json.RawMessage(`{"type": "string"}`)}},
			Responses: withMap(errs, "200", map[string]any{"description": "the ledger",
				"content": map[string]any{"text/markdown": map[string]any{"schema": map[string]string{"type": "string"}}}})}}
	}
	return doc
}

// withMap is a copy of m with k set to v.
func withMap(m map[string]any, k string, v any) map[string]any {
	out := union(m)
	out[k] = v
	return out
}

// union is a fresh map holding every entry of ms (the later wins).
func union(ms ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// openAPI is GET /v1/openapi.json.
func openAPI(cfg Config) http.HandlerFunc {
	doc, err := json.Marshal(openAPIDocument(cfg))
	return func(w http.ResponseWriter, _ *http.Request) {
		if err != nil {
			writeError(w, CodeInternal, "could not encode the OpenAPI document", "")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(doc)
	}
}
