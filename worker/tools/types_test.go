package tools

import "testing"

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
		if tl.ReadOnly != (tl.Name == "query_project") || tl.Destructive != (tl.Name == "apply_changes") {
			t.Errorf("%s: readOnly %v destructive %v", tl.Name, tl.ReadOnly, tl.Destructive)
		}
		if !tl.HasInput("project") {
			t.Errorf("%s takes no project", tl.Name)
		}
	}
}
