package tools

import (
	"strings"
	"testing"
)

func TestWithHardLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		hard bool
		want string
	}{
		{"", true, "deadline: hard"},
		{"", false, ""},
		{"first release", true, "first release\ndeadline: hard"},
		{"first release\n", true, "first release\ndeadline: hard\n"},
		{"first release\ndeadline: hard", true, "first release\ndeadline: hard"},
		{"first release\n  Deadline: HARD  ", true, "first release\n  Deadline: HARD  "},
		{"first release\ndeadline: hard", false, "first release"},
		{"first release\ndeadline: hard\n", false, "first release\n"},
		{"deadline: hard\nnotes below", false, "notes below"},
		{"a\r\ndeadline: hard\r\nb", false, "a\r\nb"},
		{"deadline: hard", false, ""},
		{"the deadline: hard, they say", false, "the deadline: hard, they say"},
		{"first release", false, "first release"},
	}
	for _, c := range cases {
		if got := withHardLine(c.in, c.hard); got != c.want {
			t.Errorf("withHardLine(%q, %v) = %q, want %q", c.in, c.hard, got, c.want)
		}
		// Adding then removing gives back what was there.
		if !c.hard && !strings.Contains(strings.ToLower(c.in), "deadline: hard") {
			if got := withHardLine(withHardLine(c.in, true), false); got != c.in {
				t.Errorf("round trip of %q = %q", c.in, got)
			}
		}
	}
}

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
