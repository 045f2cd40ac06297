package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/commitea/commitea/store"
)

// pm-state.md: the directive ledger as Markdown, for people and for agents
// that keep it as their memory of what the PM asked. Pending directives
// come first (they still need apply_changes), then the whole ledger, oldest
// first, each with the PM's words quoted verbatim.

// PMStateMarkdown renders a project's ledger ("" names the only configured
// project). Errors are *Error for an unknown project.
func (s *Service) PMStateMarkdown(ctx context.Context, project string) (string, error) {
	p, err := s.project(project)
	if err != nil {
		return "", err
	}
	ds, err := store.Ledger(ctx, s.Pool, p.ID)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# PM state: %s\n\n", p.FullName())
	fmt.Fprintf(&b, "Generated %s from CommiTea's directive ledger (%d directive(s)).\n\n", s.now().UTC().Format(time.RFC3339), len(ds))
	var pending []store.Directive
	for _, d := range ds {
		if d.Status == store.DirectivePending {
			pending = append(pending, d)
		}
	}
	b.WriteString("## Pending\n\n")
	if len(pending) == 0 {
		b.WriteString("No directive is waiting to be applied.\n\n")
	}
	for _, d := range pending {
		fmt.Fprintf(&b, "- #%d %s%s: %s\n", d.ID, d.Kind, targetText(d.Target), oneLine(d.Summary))
	}
	if len(pending) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("## Ledger\n\n")
	if len(ds) == 0 {
		b.WriteString("The ledger is empty: no directive has been recorded yet.\n")
	}
	for _, d := range ds {
		fmt.Fprintf(&b, "### #%d %s%s (%s)\n\n", d.ID, d.Kind, targetText(d.Target), d.Status)
		for line := range strings.SplitSeq(d.Quote, "\n") {
			fmt.Fprintf(&b, "> %s\n", line)
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "- recorded %s by %s\n", d.CreatedAt.UTC().Format(time.RFC3339), d.Caller)
		if d.AppliedAt != nil {
			fmt.Fprintf(&b, "- applied %s\n", d.AppliedAt.UTC().Format(time.RFC3339))
		}
		if len(d.Params) > 0 && d.NegotiatedBy != "" {
			fmt.Fprintf(&b, "- params: `%s`, read from the quote by %s\n", compactJSON(d.Params), d.NegotiatedBy)
		} else if len(d.Params) > 0 {
			fmt.Fprintf(&b, "- params: `%s`\n", compactJSON(d.Params))
		}
		if d.Rationale != "" {
			fmt.Fprintf(&b, "- rationale: %s\n", oneLine(d.Rationale))
		}
		if d.Summary != "" {
			fmt.Fprintf(&b, "- consequence: %s\n", oneLine(d.Summary))
		}
		var diff []BeforeAfter
		if json.Unmarshal(d.Consequence, &diff) == nil {
			for _, m := range diff {
				fmt.Fprintf(&b, "  - %s: p50 %s → %s, p80 %s → %s\n", m.Title, orDash(m.Before.P50), orDash(m.After.P50), orDash(m.Before.P80), orDash(m.After.P80))
			}
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

func targetText(raw json.RawMessage) string {
	var t Target
	if len(raw) == 0 || json.Unmarshal(raw, &t) != nil {
		return ""
	}
	var parts []string
	if t.Issue != nil {
		parts = append(parts, fmt.Sprintf("issue #%d", *t.Issue))
	}
	if t.Milestone != nil {
		parts = append(parts, fmt.Sprintf("milestone %d", *t.Milestone))
	}
	if t.Member != "" {
		parts = append(parts, "@"+t.Member)
	}
	if len(parts) == 0 {
		return ""
	}
	return " on " + strings.Join(parts, ", ")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func compactJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
