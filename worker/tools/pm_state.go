package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/commitea/commitea/scheduler"
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
				fmt.Fprintf(&b, "  - %s: %s\n", m.Title, bandMove(m.Before, m.After))
			}
		}
		writeRealization(&b, d)
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

// bandMove prints a milestone's band before and after, as people read it.
func bandMove(before, after Band) string {
	return fmt.Sprintf("p50 %s → %s, p80 %s → %s, pDue %.2f → %.2f", orDash(before.P50), orDash(after.P50),
		orDash(before.P80), orDash(after.P80), before.PDue, after.PDue)
}

// writeRealization prints what an applied directive's quote predicted and
// what the snapshot after it realized: the milestones the quote moved, and
// any that came out otherwise than quoted.
func writeRealization(b *strings.Builder, d store.Directive) {
	var predicted []BeforeAfter
	if len(d.Predicted) == 0 || json.Unmarshal(d.Predicted, &predicted) != nil {
		return
	}
	b.WriteString("- predicted when applied:")
	moved := 0
	for _, m := range predicted {
		if m.Before != m.After {
			moved++
			fmt.Fprintf(b, "\n  - %s: %s", m.Title, bandMove(m.Before, m.After))
		}
	}
	if moved == 0 {
		b.WriteString(" no milestone moves")
	}
	b.WriteString("\n")
	var realized []scheduler.MilestoneBand
	if len(d.Realized) == 0 || json.Unmarshal(d.Realized, &realized) != nil || d.RealizedVersion == nil {
		b.WriteString("- realized: waiting for the next snapshot\n")
		return
	}
	mismatches := scheduler.RealizedMismatches(predicted, realized)
	if len(mismatches) == 0 {
		fmt.Fprintf(b, "- realized in snapshot %d: as predicted, every milestone (%d)\n", *d.RealizedVersion, len(predicted))
		return
	}
	fmt.Fprintf(b, "- realized in snapshot %d: otherwise than predicted for %d milestone(s)\n", *d.RealizedVersion, len(mismatches))
	for _, m := range mismatches {
		fmt.Fprintf(b, "  - %s\n", m)
	}
}
