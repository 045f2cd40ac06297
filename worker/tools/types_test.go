package tools

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestDeclaredTypes(t *testing.T) {
	t.Parallel()
	want := map[string][2]string{
		"query_project":    {"tools.QueryProjectInput", "interface {}"},
		"capture_work":     {"tools.CaptureWorkInput", "tools.CaptureWorkOutput"},
		"apply_changes":    {"tools.ApplyChangesInput", "tools.ApplyChangesOutput"},
		"record_directive": {"tools.RecordDirectiveInput", "tools.RecordDirectiveOutput"},
	}
	for _, tl := range (&Service{}).Registry().Tools() {
		w, ok := want[tl.Name]
		if !ok || tl.InputType != w[0] || tl.OutputType != w[1] {
			t.Errorf("%s: types %s, %s; want %v", tl.Name, tl.InputType, tl.OutputType, w)
		}
		if want := map[bool]string{true: ScopeRead, false: ScopeWrite}[tl.Name == "query_project"]; tl.Scope != want {
			t.Errorf("%s: scope %s, want %s", tl.Name, tl.Scope, want)
		}
		if !tl.HasInput("project") {
			t.Errorf("%s takes no project", tl.Name)
		}
	}
}

// TestApplyChangesSchemaCoversEveryOp: the flat op schema documents every
// op the batch validation accepts, and every field one of them takes.
func TestApplyChangesSchemaCoversEveryOp(t *testing.T) {
	t.Parallel()
	var schema struct {
		Properties struct {
			Ops struct {
				Items struct {
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"items"`
			} `json:"ops"`
		} `json:"properties"`
	}
	if err := json.Unmarshal([]byte(applyChangesInputSchema), &schema); err != nil {
		t.Fatal(err)
	}
	props := schema.Properties.Ops.Items.Properties
	var op struct {
		Enum        []string `json:"enum"`
		Description string   `json:"description"`
	}
	if err := json.Unmarshal(props["op"], &op); err != nil {
		t.Fatal(err)
	}
	if len(op.Enum) != len(opFields) || len(opOrder) != len(opFields) {
		t.Fatalf("op enum %v, opOrder %v: every op of opFields must be in opOrder", op.Enum, opOrder)
	}
	used := map[string]bool{"op": true}
	for name, fields := range opFields {
		if !slices.Contains(op.Enum, name) || !strings.Contains(op.Description, name) {
			t.Errorf("op %s is not documented in the schema", name)
		}
		if opRequired[name] > len(fields) {
			t.Errorf("op %s requires %d of %d fields", name, opRequired[name], len(fields))
		}
		for _, f := range fields {
			used[f] = true
			if _, ok := props[f]; !ok {
				t.Errorf("field %s of %s has no property in the schema", f, name)
			}
		}
	}
	for f := range props {
		if !used[f] {
			t.Errorf("property %s is taken by no op", f)
		}
	}
}
