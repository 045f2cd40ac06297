package standup

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/commitea/commitea/worker/prose"
)

// Phraser turns a standup's facts into short prose; the small model does it
// (package worker/models). It may fail or return anything: Text checks the
// answer and falls back to the template.
type Phraser interface {
	Phrase(ctx context.Context, req PhraseRequest) (string, error)
}

// PhraseRequest is one phrasing task: instructions and the deterministic
// template, which the model rewrites. The template holds every fact of the
// report in readable form, so the facts are not sent a second time as
// JSON: a 4B local model's context is small.
type PhraseRequest struct {
	Instructions string
	Draft        string
}

// Tokens estimates the request's size in tokens (about 4 bytes a token for
// English text), for budgets and logs.
func (r PhraseRequest) Tokens() int { return (len(r.Instructions) + len(r.Draft) + 3) / 4 }

// Text sources.
const (
	SourceTemplate = "template"
	SourceModel    = "model"
)

// phraseInstructions tell the model what it may and may not do.
const phraseInstructions = `Rewrite the daily standup below as a short, friendly message for the team.
Use only the facts in it. Do not add, compute or round any number or date: copy them exactly as written.
Keep issue numbers as #N. Mention every milestone at risk with its chance and critical chain, every milestone that drifted and its causes, each person's plan (say when next work is on a critical chain), and the stale blockers.
Answer with the message text only.`

// Prompt returns the phrasing request for a report.
func Prompt(r Report) PhraseRequest {
	return PhraseRequest{Instructions: phraseInstructions, Draft: Template(r)}
}

// factsOf is the report without its baseline, which is bookkeeping for the
// next standup and not something prose may cite. Every other field is a
// fact, sections added later included.
func factsOf(r Report) (any, error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("facts of standup: %w", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("facts of standup: %w", err)
	}
	delete(m, "baseline")
	return m, nil
}

// Facts are the numbers and dates a standup's prose may state; "tomorrow"
// and "next week" count from the standup's day.
func Facts(r Report, loc *time.Location) (*prose.Facts, error) {
	shown, err := factsOf(r)
	if err != nil {
		return nil, err
	}
	f, err := prose.FactsOf(loc, shown)
	if err != nil {
		return nil, err
	}
	if day, err := time.ParseInLocation(time.DateOnly, r.Day, f.Location()); err == nil {
		f.SetToday(day)
	}
	return f, nil
}

// Text phrases a report: the model's prose when p is set and its answer
// passes the check, the template otherwise. It never fails.
func Text(ctx context.Context, r Report, loc *time.Location, p Phraser, log *slog.Logger) (string, string) {
	tmpl := Template(r)
	if p == nil {
		return tmpl, SourceTemplate
	}
	out, err := p.Phrase(ctx, PhraseRequest{Instructions: phraseInstructions, Draft: tmpl})
	if err != nil {
		log.WarnContext(ctx, "standup phrasing failed, using the template", slog.String("project", r.Project), slog.Any("error", err))
		return tmpl, SourceTemplate
	}
	out = strings.TrimSpace(out)
	if out == "" {
		return tmpl, SourceTemplate
	}
	facts, err := Facts(r, loc)
	if err == nil {
		err = prose.Check(out, facts)
	}
	if err != nil {
		log.WarnContext(ctx, "standup prose rejected, using the template", slog.String("project", r.Project), slog.Any("error", err))
		return tmpl, SourceTemplate
	}
	return out, SourceModel
}

// Template renders a report as plain text (readable as Markdown too), one
// block per section: each entry on a line with its flags in brackets, its
// sub-entries of one role on one indented line, others on lines of their
// own.
func Template(r Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Standup for %s, %s %s\n", r.Project, r.Weekday, r.Day)
	for _, s := range r.Sections() {
		b.WriteString("\n" + s.Heading)
		if s.Intro != "" {
			b.WriteString(" " + s.Intro)
		}
		if len(s.Entries) == 0 {
			b.WriteString(": " + s.Empty + "\n")
			continue
		}
		b.WriteString(":\n")
		for _, e := range s.Entries {
			b.WriteString("- " + entryLine(e) + "\n")
			for _, g := range e.Groups() {
				if g.Role == "" {
					b.WriteString("  - " + entryLine(g.Entries[0]) + "\n")
					continue
				}
				parts := make([]string, len(g.Entries))
				for i, sub := range g.Entries {
					parts[i] = entryLine(sub)
				}
				b.WriteString("  " + g.Role + ": " + strings.Join(parts, "; ") + "\n")
			}
		}
	}
	return b.String()
}

// entryLine is an entry's subject, text and flags on one line.
func entryLine(e Entry) string {
	line := e.Subject.Label() + e.Text
	for _, f := range e.Flags {
		line += " [" + f.Text + "]"
	}
	return line
}

func causeText(c Cause) string {
	switch c.Kind {
	case CauseScopeAdded:
		return fmt.Sprintf("scope added: %s (%s h nominal)", refs(c.Issues), num(c.Hours))
	case CauseScopeRemoved:
		return fmt.Sprintf("scope removed: %s (%s h nominal)", refs(c.Issues), num(c.Hours))
	case CauseReestimated:
		parts := make([]string, 0, len(c.Reestimates))
		for _, r := range c.Reestimates {
			from := string(r.From)
			if from == "" {
				from = "none"
			}
			to := string(r.To)
			if to == "" {
				to = "none"
			}
			parts = append(parts, fmt.Sprintf("#%d est/%s -> est/%s", r.Issue, from, to))
		}
		return fmt.Sprintf("re-estimated: %s (%s h nominal)", strings.Join(parts, ", "), signed(c.Hours))
	case CauseCalibration:
		return fmt.Sprintf("calibration changed: multiplier %s -> %s, spread %s -> %s",
			num(c.MultiplierBefore), num(c.MultiplierAfter), num(c.SigmaBefore), num(c.SigmaAfter))
	case CauseNoProgress:
		return fmt.Sprintf("no progress: %s passed and no issue of the milestone moved forward", workingDays(c.WorkingDays))
	case CauseProgress:
		return fmt.Sprintf("progress: %s done", refs(c.Issues))
	case CauseElsewhere:
		return "work it shares people or dependencies with moved it (its own scope and estimates did not change)"
	}
	return c.Kind
}

func refs(ns []int64) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = "#" + strconv.FormatInt(n, 10)
	}
	return strings.Join(parts, ", ")
}

func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

func signed(x float64) string {
	if x > 0 {
		return "+" + num(x)
	}
	return num(x)
}

func signedDays(x float64) string {
	if x == 1 || x == -1 {
		return signed(x) + " working day"
	}
	return signed(x) + " working days"
}

func workingDays(x float64) string {
	if x == 1 {
		return "1 working day"
	}
	return num(x) + " working days"
}
