package api

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/commitea/commitea/worker/tools"
)

// readOnlyRunner is the tool registry as /mcp/readonly serves it: only the
// tools that answer from CommiTea's own data and change nothing, and every
// call made with at most the read scope, whatever the token holds. A
// client configured with the read-only endpoint skips the person on every
// call, so the endpoint must not be a way to a write: ask has the read
// scope but reaches a model and hands directives on to record_directive,
// which writes a ledger row with the caller's scopes. Capping the caller
// as well as filtering the list means no path inside a served tool can
// reach a write either.
type readOnlyRunner struct{ ToolRunner }

// servedReadOnly reports whether the read-only endpoint serves t: read
// scope, read-only, and not open-world (no model, no Gitea). Today that is
// query_project alone.
func servedReadOnly(t tools.Tool) bool {
	return t.Scope == tools.ScopeRead && t.Hints.ReadOnly && !t.Hints.OpenWorld
}

// readScopeOnly is c with every scope but read dropped.
func readScopeOnly(c tools.Caller) tools.Caller {
	if slices.Contains(c.Scopes, tools.ScopeRead) {
		c.Scopes = []string{tools.ScopeRead}
	} else {
		c.Scopes = nil
	}
	return c
}

func (r readOnlyRunner) Tools() []tools.Tool {
	var out []tools.Tool
	for _, t := range r.ToolRunner.Tools() {
		if servedReadOnly(t) {
			out = append(out, t)
		}
	}
	return out
}

func (r readOnlyRunner) Lookup(name string) (tools.Tool, bool) {
	t, ok := r.ToolRunner.Lookup(name)
	if !ok || !servedReadOnly(t) {
		return tools.Tool{}, false
	}
	return t, true
}

func (r readOnlyRunner) Call(ctx context.Context, c tools.Caller, name string, input json.RawMessage) (tools.Envelope, *tools.Error) {
	if _, ok := r.Lookup(name); !ok {
		return tools.Envelope{}, tools.Errorf(tools.CodeNotFound, "", "no tool %q on the read-only endpoint; it serves query_project only", name)
	}
	return r.ToolRunner.Call(ctx, readScopeOnly(c), name, input)
}

func (r readOnlyRunner) ListResources(ctx context.Context, c tools.Caller) ([]tools.ResourceRef, *tools.Error) {
	return r.ToolRunner.ListResources(ctx, readScopeOnly(c))
}

func (r readOnlyRunner) ReadResource(ctx context.Context, c tools.Caller, uri string) (tools.ResourceContent, *tools.Error) {
	return r.ToolRunner.ReadResource(ctx, readScopeOnly(c), uri)
}
