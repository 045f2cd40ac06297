package standup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/commitea/commitea/worker/metrics"
	"github.com/commitea/commitea/worker/models"
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
Use only the facts in it. Do not add, compute or round any number or date: copy them exactly as written, next to what they are about.
Name every issue by its #N, every person by login and every milestone by its title: each one in the standup must appear.
Mention every milestone at risk with its chance and critical chain, every milestone that drifted and its causes, each person's plan (say when next work is on a critical chain), the stale blockers, and the aging work.
Answer with the message text only.`

// PromptFloor is about the fewest tokens a standup's phrasing request
// takes: the instructions and the template of a report with nothing in it.
// A token budget below it can never phrase a standup.
func PromptFloor() int {
	p := Prompt(Report{Project: "owner/repo", Day: "2026-01-01", Weekday: "Thursday", FirstStandup: true})
	return models.RequestTokens(models.Request{Messages: []models.Message{
		{Role: models.System, Content: p.Instructions}, {Role: models.User, Content: p.Draft}}})
}

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

// Facts are what a standup's prose may state: the report, and what the
// project has beyond it (every milestone's forecast, every name);
// "tomorrow" and "next week" count from the standup's day in loc.
func Facts(r Report, known Known, loc *time.Location) (*prose.Facts, error) {
	shown, err := factsOf(r)
	if err != nil {
		return nil, err
	}
	f, err := prose.FactsOf(loc, shown)
	if err != nil {
		return nil, err
	}
	if len(known.Milestones) > 0 {
		if err := f.AddValue(map[string]any{"known": known.Milestones}); err != nil {
			return nil, err
		}
	}
	f.AddNames(known.Names)
	if day, err := time.ParseInLocation(time.DateOnly, r.Day, f.Location()); err == nil {
		f.SetToday(day)
	}
	return f, nil
}

// Refs are the report's subjects as the prose check names them: what a
// complete text mentions.
func Refs(r Report) []prose.Ref {
	var out []prose.Ref
	for _, s := range r.Subjects() {
		switch s.Kind {
		case SubjectIssue:
			out = append(out, prose.Ref{Kind: prose.KindIssue, Number: s.Issue, Name: s.Title})
		case SubjectPerson:
			out = append(out, prose.Ref{Kind: prose.KindPerson, Name: s.Person})
		case SubjectMilestone:
			out = append(out, prose.Ref{Kind: prose.KindMilestone, Name: s.Title})
		}
	}
	return out
}

// Phrasing is how Text phrases a report.
type Phrasing struct {
	// Phraser is the model; nil means the template.
	Phraser Phraser
	// Location is the standup's time zone; nil means UTC.
	Location *time.Location
	// Known is what the project has beyond the report.
	Known Known
	Log   *slog.Logger
}

// Why a standup's text is the template, or the model's prose was refused,
// beyond the prose check's reasons (prose.Reason…).
const (
	ReasonNoModel    = "no_model"
	ReasonModelError = "model_error"
	ReasonBudget     = "budget"
	ReasonEmpty      = "empty"
	// ReasonIncomplete: the prose leaves out a subject of the report.
	ReasonIncomplete = "incomplete"
)

// Text phrases a report: the model's prose when a phraser is set and its
// answer passes the check (every claim a value of its subject, every
// subject of the report mentioned), the template otherwise. It never
// fails; commitea_prose_total counts what happened.
func Text(ctx context.Context, r Report, ph Phrasing) (string, string) {
	log := ph.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tmpl := Template(r)
	template := func(outcome, reason string) (string, string) {
		metrics.Prose("standup", outcome, reason)
		return tmpl, SourceTemplate
	}
	if ph.Phraser == nil {
		return template(metrics.ProseTemplate, ReasonNoModel)
	}
	out, err := ph.Phraser.Phrase(ctx, PhraseRequest{Instructions: phraseInstructions, Draft: tmpl})
	if err != nil {
		reason := ReasonModelError
		if models.ErrorCode(err) == models.CodeBudgetExhausted {
			reason = ReasonBudget
		}
		log.WarnContext(ctx, "standup phrasing failed, using the template", slog.String("project", r.Project), slog.Any("error", err))
		return template(metrics.ProseTemplate, reason)
	}
	out = strings.TrimSpace(out)
	if out == "" {
		return template(metrics.ProseRejected, ReasonEmpty)
	}
	loc := ph.Location
	if loc == nil {
		loc = time.UTC
	}
	facts, err := Facts(r, ph.Known, loc)
	if err != nil {
		log.ErrorContext(ctx, "standup facts", slog.String("project", r.Project), slog.Any("error", err))
		return template(metrics.ProseTemplate, ReasonModelError)
	}
	if err := prose.Check(out, facts); err != nil {
		reason := prose.ReasonUngrounded
		var ue *prose.UngroundedError
		if errors.As(err, &ue) {
			reason = ue.Reason()
		}
		log.WarnContext(ctx, "standup prose rejected, using the template", slog.String("project", r.Project),
			slog.String("reason", reason), slog.Any("error", err))
		return template(metrics.ProseRejected, reason)
	}
	if missing := facts.Missing(out, Refs(r)); len(missing) > 0 {
		names := make([]string, len(missing))
		for i, m := range missing {
			names[i] = m.String()
		}
		log.WarnContext(ctx, "standup prose leaves out part of the report, using the template", slog.String("project", r.Project),
			slog.String("missing", strings.Join(names, ", ")))
		return template(metrics.ProseRejected, ReasonIncomplete)
	}
	metrics.Prose("standup", metrics.ProseKept, "")
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
