// Package tools holds CommiTea's four agent tools: query_project,
// capture_work, apply_changes and record_directive. Each tool is declared
// once (name, description, input and output Go types, JSON schemas, the
// scope it needs, its hints, its handler) in a Registry that every
// transport serves from: plain HTTP, MCP over HTTP and stdio, and the
// OpenAPI document. Every answer is an Envelope {data, instruction,
// safety?}; every failure is an *Error {code, message, field?, preview?}.
// Read tools answer from the latest snapshot and the mirror in Postgres,
// never from Gitea or a model on the request path.
//
// What a model reads. A client puts every tool's name, description, input
// schema and annotations in the model's context on every turn, so they
// are kept within a budget (6,000 bytes for the five tools with ask, held
// by api's TestToolListBudgetAndSnapshot, which also keeps a snapshot in
// api/testdata): descriptions say what the tool does and what needs a
// person, once; inputs are enums where the values are known, documented
// in a few words, and generated from the declarations they stand for
// (apply_changes' ops from opFields, record_directive's kinds and params
// from directiveKinds). Only the top level of an input schema refuses
// unknown properties: the strict decoding refuses them everywhere and
// names the field, which is cheaper than saying it in every nested
// object. Output schemas are for clients, not models, and are not
// counted; keep them accurate (the OpenAPI test validates real answers
// against them).
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"strings"

	"github.com/commitea/commitea/worker/metrics"
)

// Error codes. The HTTP transport maps each to a status; MCP marks the
// answer isError and carries the same body.
const (
	CodeInvalidInput       = "INVALID_INPUT"
	CodeNotFound           = "NOT_FOUND"
	CodeNotReady           = "NOT_READY"
	CodeNeedsApproval      = "NEEDS_APPROVAL"
	CodeNamespaceForbidden = "NAMESPACE_FORBIDDEN"
	CodeModelUnavailable   = "MODEL_UNAVAILABLE"
	CodeBudgetExhausted    = "BUDGET_EXHAUSTED"
	CodeModelInvalidOutput = "MODEL_INVALID_OUTPUT"
	CodeGiteaUnavailable   = "GITEA_UNAVAILABLE"
	CodeUnauthorized       = "UNAUTHORIZED"
	CodeForbidden          = "FORBIDDEN"
	CodeNotImplemented     = "NOT_IMPLEMENTED"
	CodeInternal           = "INTERNAL"
)

// ProjectSchema is the optional project input every tool shares (ask
// too): without it a tool answers for the only configured project, and
// with several configured it says which to name. ProjectProperty is it as
// a property of an input schema.
const (
	ProjectSchema   = `{"type": "string", "description": "owner/repo"}`
	ProjectProperty = `"project": ` + ProjectSchema
)

// Scopes a bearer token may grant.
const (
	ScopeRead    = "read"
	ScopeWrite   = "write"
	ScopeApprove = "approve"
)

// Error is a tool failure as the caller sees it. Preview is the
// engine's consequence preview of a NEEDS_APPROVAL batch, apart from the
// message so that a client can show it to the person who must approve.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	Preview string `json:"preview,omitempty"`
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Code, e.Message, e.Field)
	}
	return e.Code + ": " + e.Message
}

// Failure is the body of every failed call: {"error": {...}}.
type Failure struct {
	Error *Error `json:"error"`
}

// Errorf builds a tool error.
func Errorf(code, field, format string, args ...any) *Error {
	return &Error{Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Envelope is every successful answer: the payload, one sentence telling the
// calling agent its sensible next step, and a safety note when an action
// needs a person. Instructions are CommiTea's own words: they name issues
// and milestones by number and never quote issue text, which is data that
// anyone with a Gitea account can write.
type Envelope struct {
	Data        any    `json:"data"`
	Instruction string `json:"instruction"`
	Safety      string `json:"safety,omitempty"`
}

// Caller is who calls a tool: the name of their bearer token and its
// scopes. Handlers record the name (the ledger, the audit table).
type Caller struct {
	Name   string
	Scopes []string
}

// Has reports whether the caller holds scope.
func (c Caller) Has(scope string) bool { return slices.Contains(c.Scopes, scope) }

// Tool is one tool's single declaration; every transport serves it (HTTP,
// MCP over HTTP and stdio, the OpenAPI document).
type Tool struct {
	Name        string
	Description string
	// Scope is the scope a call needs: read or write (an approved
	// apply_changes batch needs approve as well, checked by the tool).
	Scope string
	// Hints say what a call does to the world, as MCP tool annotations.
	Hints        Hints
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	// InputType and OutputType name the Go types the schemas describe.
	InputType  string
	OutputType string
	inputs     map[string]bool // top-level input properties
	call       func(ctx context.Context, c Caller, raw json.RawMessage) (Envelope, error)
}

// Hints are a tool's behaviour as MCP describes it to clients deciding
// whether to ask a person before a call (readOnlyHint, destructiveHint,
// idempotentHint, openWorldHint). They must be true of every call: a
// client that trusts readOnly skips the person.
type Hints struct {
	// ReadOnly: the call changes nothing, in Gitea or in CommiTea.
	ReadOnly bool
	// Destructive: the call may remove or overwrite (meaningful only when
	// not ReadOnly).
	Destructive bool
	// Idempotent: repeating a call with the same input changes nothing
	// more.
	Idempotent bool
	// OpenWorld: the call reaches beyond CommiTea's own data (Gitea, a
	// language model).
	OpenWorld bool
}

// HasInput reports whether the tool's input has a top-level property name,
// so a transport knows where it may put, say, an Idempotency-Key header.
func (t Tool) HasInput(name string) bool { return t.inputs[name] }

// Answer is what a typed handler returns; the core wraps it in an Envelope.
type Answer[Out any] struct {
	Data        Out
	Instruction string
	Safety      string
}

// Handler is a tool's typed handler.
type Handler[In, Out any] func(ctx context.Context, c Caller, in In) (Answer[Out], error)

// Declare makes a Tool from its declaration (name, description, scope,
// hints and schemas set in t) and a typed handler: the input is decoded
// strictly (unknown fields are refused, with the field named) before h
// runs.
func Declare[In, Out any](t Tool, h Handler[In, Out]) Tool {
	for _, s := range []json.RawMessage{t.InputSchema, t.OutputSchema} {
		if !json.Valid(s) {
			panic(fmt.Sprintf("tools: %s: schema is not valid JSON", t.Name))
		}
	}
	if t.Scope != ScopeRead && t.Scope != ScopeWrite {
		panic(fmt.Sprintf("tools: %s: scope must be %s or %s", t.Name, ScopeRead, ScopeWrite))
	}
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(t.InputSchema, &schema); err != nil || schema.Type != "object" {
		panic(fmt.Sprintf("tools: %s: the input schema must be an object schema", t.Name))
	}
	t.inputs = map[string]bool{}
	for k := range schema.Properties {
		t.inputs[k] = true
	}
	t.InputType, t.OutputType = reflect.TypeFor[In]().String(), reflect.TypeFor[Out]().String()
	t.call = func(ctx context.Context, c Caller, raw json.RawMessage) (Envelope, error) {
		var in In
		if err := decodeStrict(raw, &in); err != nil {
			return Envelope{}, err
		}
		a, err := h(ctx, c, in)
		if err != nil {
			return Envelope{}, err
		}
		return Envelope{Data: a.Data, Instruction: a.Instruction, Safety: a.Safety}, nil
	}
	return t
}

// decodeStrict decodes one JSON object into v, naming the offending field
// when it can.
func decodeStrict(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage(`{}`)
	}
	if field, ok := nulString(raw); ok {
		return Errorf(CodeInvalidInput, field, "%s contains the NUL character (\\u0000), which no text here may hold", orInput(field))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, extra := dec.Token(); extra != io.EOF {
			return Errorf(CodeInvalidInput, "", "input must be a single JSON object")
		}
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := typeErr.Field
		return Errorf(CodeInvalidInput, field, "%s must be a %s, not a JSON %s", orInput(field), typeErr.Type.String(), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return Errorf(CodeInvalidInput, "", "input is not valid JSON: %v", err)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return Errorf(CodeInvalidInput, field, "unknown field %q; see the tool's input schema", field)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return Errorf(CodeInvalidInput, "", "input is not valid JSON: %v", err)
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	return Errorf(CodeInvalidInput, "", "invalid input: %v", err)
}

// nulString finds a string (key or value) in raw that holds NUL and names
// the object key it sits under. Postgres text and jsonb refuse NUL, so an
// input holding one would fail deep in a handler as INTERNAL, on every
// retry; it is the caller's to fix, so it is refused up front.
func nulString(raw []byte) (string, bool) {
	if !bytes.Contains(raw, []byte(`\u0000`)) {
		return "", false
	}
	type level struct {
		object, wantKey bool
		key             string
	}
	var stack []level
	path := func() string {
		var keys []string
		for _, l := range stack {
			if l.object && l.key != "" {
				keys = append(keys, l.key)
			}
		}
		return strings.Join(keys, ".")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false // malformed input is reported by the decoding
		}
		top := len(stack) - 1
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				stack = append(stack, level{object: d == '{', wantKey: d == '{'})
			default:
				stack = stack[:top]
				if top > 0 && stack[top-1].object {
					stack[top-1].wantKey = true // the container was a value
				}
			}
			continue
		}
		str, isString := tok.(string)
		if top >= 0 && stack[top].object && stack[top].wantKey {
			stack[top].key, stack[top].wantKey = str, false
			if strings.IndexByte(str, 0) >= 0 {
				return path(), true
			}
			continue
		}
		if isString && strings.IndexByte(str, 0) >= 0 {
			return path(), true
		}
		if top >= 0 && stack[top].object {
			stack[top].wantKey = true
		}
	}
}

func orInput(field string) string {
	if field == "" {
		return "input"
	}
	return field
}

// Registry holds the declared tools and resource kinds, in a stable
// order.
type Registry struct {
	tools     []Tool
	resources []Resource
	log       *slog.Logger
}

// NewRegistry makes a registry of tools.
func NewRegistry(log *slog.Logger, tools ...Tool) *Registry {
	return &Registry{tools: tools, log: log}
}

// Tools lists the declared tools.
func (r *Registry) Tools() []Tool { return slices.Clone(r.tools) }

// WithTools is the registry with tools ts added, its resources kept.
func (r *Registry) WithTools(ts ...Tool) *Registry {
	return &Registry{tools: append(slices.Clone(r.tools), ts...), resources: slices.Clone(r.resources), log: r.log}
}

// Lookup finds a tool by name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	for _, t := range r.tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// Call runs one tool for a caller: it checks the tool exists and the
// caller's scope before anything else, so a refused call does nothing. An
// error that is not an *Error is logged and answered as INTERNAL without
// its text, which may hold details the caller should not see.
func (r *Registry) Call(ctx context.Context, c Caller, name string, raw json.RawMessage) (Envelope, *Error) {
	env, err := r.call(ctx, c, name, raw)
	outcome := "ok"
	if err != nil {
		outcome = err.Code
	}
	if _, known := r.Lookup(name); !known {
		name = "unknown" // keep made-up names out of the metric's labels
	}
	metrics.ToolCall(name, outcome)
	return env, err
}

func (r *Registry) call(ctx context.Context, c Caller, name string, raw json.RawMessage) (Envelope, *Error) {
	t, ok := r.Lookup(name)
	if !ok {
		return Envelope{}, Errorf(CodeNotFound, "", "no tool %q; GET /v1/tools lists them", name)
	}
	if !c.Has(t.Scope) {
		return Envelope{}, Errorf(CodeForbidden, "", "token %q lacks the %s scope that %s needs", c.Name, t.Scope, name)
	}
	env, err := t.call(ctx, c, raw)
	if err != nil {
		return Envelope{}, r.failure(ctx, c, name, err)
	}
	return env, nil
}

// failure is err as the caller sees it: an *Error as it is; anything else
// is logged and answered INTERNAL without its text, which may hold details
// the caller should not see.
func (r *Registry) failure(ctx context.Context, c Caller, what string, err error) *Error {
	var te *Error
	if errors.As(err, &te) {
		return te
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Errorf(CodeInternal, "", "the call was cancelled or timed out")
	}
	r.log.ErrorContext(ctx, "tool failed", slog.String("tool", what), slog.String("caller", c.Name), slog.Any("error", err))
	return Errorf(CodeInternal, "", "%s failed inside CommiTea; the error is logged", what)
}
