package tools

import (
	"strings"
	"testing"
)

func TestCanonicalLabel(t *testing.T) {
	t.Parallel()
	ok := map[string]string{"est/M": "est/m", " EST/xl ": "est/xl", "p/0": "p/0", "P/3": "p/3", "Deadline/Hard": "deadline/hard"}
	for in, want := range ok {
		if got, reason := canonicalLabel(in); got != want || reason != "" {
			t.Errorf("canonicalLabel(%q) = %q, %q", in, got, reason)
		}
	}
	bad := map[string]string{"bug": CodeNamespaceForbidden, "est/huge": CodeInvalidInput, "p/4": CodeInvalidInput, "p/10": CodeInvalidInput,
		"deadline/soft": CodeNamespaceForbidden, "": CodeNamespaceForbidden, "estimate/m": CodeNamespaceForbidden}
	for in, code := range bad {
		if got, reason := canonicalLabel(in); got != "" || !strings.HasPrefix(reason, code+":") {
			t.Errorf("canonicalLabel(%q) = %q, %q; want %s", in, got, reason, code)
		}
	}
}
