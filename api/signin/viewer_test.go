package signin

import (
	"testing"

	"github.com/commitea/commitea/worker/tools"
)

func TestLevel(t *testing.T) {
	for _, c := range []struct {
		mode    string
		private bool
		want    string
	}{
		{"owner", true, tools.ScopeApprove},
		{"admin", true, tools.ScopeApprove},
		{"write", true, tools.ScopeWrite},
		{"read", true, tools.ScopeRead},
		{"none", true, ""},
		{"none", false, tools.ScopeRead},
		{"", false, tools.ScopeRead},
		{"write", false, tools.ScopeWrite},
		{"something new", true, ""},
	} {
		if got := Level(c.mode, c.private); got != c.want {
			t.Errorf("Level(%q, private=%v) = %q, want %q", c.mode, c.private, got, c.want)
		}
	}
}

func TestViewerCan(t *testing.T) {
	person := Viewer{Name: "dev", SignedIn: true, levels: lowerKeys(map[string]string{"Ceo/Demo": tools.ScopeWrite, "ceo/docs": tools.ScopeRead})}
	for _, c := range []struct {
		project, scope string
		want           bool
	}{
		{"ceo/demo", tools.ScopeRead, true},
		{"CEO/demo", tools.ScopeWrite, true},
		{"ceo/demo", tools.ScopeApprove, false},
		{"ceo/docs", tools.ScopeWrite, false},
		{"ceo/secret", tools.ScopeRead, false},
		{"ceo/demo", "unknown", false},
	} {
		if got := person.Can(c.project, c.scope); got != c.want {
			t.Errorf("Can(%s, %s) = %v", c.project, c.scope, got)
		}
	}
	if person.CanAll([]string{"ceo/demo", "ceo/docs"}, tools.ScopeWrite) || !person.CanAll([]string{"ceo/demo", "ceo/docs"}, tools.ScopeRead) {
		t.Error("CanAll")
	}
	token := TokenViewer("ops", []string{tools.ScopeApprove})
	if !token.Can("any/project", tools.ScopeApprove) || token.Can("any/project", tools.ScopeRead) {
		t.Error("a token's scopes are its own, on every project")
	}
}
