package tools

import (
	"fmt"
	"strings"

	"github.com/commitea/commitea/scheduler"
)

// CommiTea's label namespaces (DESIGN section 3): est/xs..est/xl, p/0..p/3
// and deadline/hard, matched case-insensitively and written lowercase. The
// write tools touch no other label.

// labelColors are the colours of the labels CommiTea creates, by scope.
var labelColors = map[string]string{"est/": "#0077bb", "p/": "#ee0701", "deadline/": "#000000"}

var labelDescriptions = map[string]string{"est/": "estimate (CommiTea)", "p/": "priority (CommiTea)", "deadline/": "hard deadline (CommiTea)"}

// canonicalLabel returns the lowercase CommiTea label that name spells, or
// the reason it is not one (starting with the error code that fits).
func canonicalLabel(name string) (string, string) {
	l := strings.ToLower(strings.TrimSpace(name))
	switch {
	case strings.HasPrefix(l, "est/"):
		if scheduler.Size(strings.TrimPrefix(l, "est/")).Valid() {
			return l, ""
		}
		return "", fmt.Sprintf("%s: %q is not an estimate; use one of est/xs, est/s, est/m, est/l, est/xl", CodeInvalidInput, name)
	case strings.HasPrefix(l, "p/"):
		if len(l) == 3 && l[2] >= '0' && l[2] <= '3' {
			return l, ""
		}
		return "", fmt.Sprintf("%s: %q is not a priority; use one of p/0, p/1, p/2, p/3", CodeInvalidInput, name)
	case l == "deadline/hard":
		return l, ""
	}
	return "", fmt.Sprintf("%s: label %q is outside CommiTea's namespaces (est/*, p/*, deadline/hard); CommiTea never touches other labels",
		CodeNamespaceForbidden, name)
}

// labelScope is the exclusive scope of a CommiTea label ("est/", "p/",
// "deadline/"), or "" for any other label.
func labelScope(name string) string {
	l := strings.ToLower(strings.TrimSpace(name))
	for _, s := range []string{"est/", "p/", "deadline/"} {
		if strings.HasPrefix(l, s) {
			return s
		}
	}
	return ""
}
