package tools

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/models"
)

// The capture_work prompt: a fixed system text (prompts/capture_work_system.txt)
// and one user message holding compact project context and the PM's words,
// each in its own delimited block. The context is small on purpose (open
// milestones with their forecast, the label namespaces, the team, the
// titles of a few similar open issues): a 4B local model must hold the
// whole prompt in well under 6,000 tokens, and ticket data beyond that is
// fetched through query_project, never piled into the prompt.

//go:embed prompts/capture_work_system.txt
var captureSystemPrompt string

// captureTemperature keeps decomposition steady from one call to the next.
const captureTemperature = 0.2

// captureMaxTokens caps the answer: fifteen issues with short bodies.
const captureMaxTokens = 3000

// CapturePromptFloor is about the fewest tokens a capture_work request
// takes: its system prompt and answer schema, before any project context
// or braindump. A token budget below it can never capture work.
func CapturePromptFloor() int {
	return models.RequestTokens(models.Request{Messages: []models.Message{{Role: models.System, Content: captureSystemPrompt}},
		Schema: captureAnswerSchema(false)})
}

func captureRequest(v *projectView, similar []similarIssue, in CaptureWorkInput, proposalOnly bool) models.Request {
	t := captureTemperature
	system := captureSystemPrompt
	if proposalOnly {
		system += "\nThe interview is over: propose now, with what you know (kind \"proposal\")."
	}
	return models.Request{
		Tool: "capture_work",
		Messages: []models.Message{
			{Role: models.System, Content: system},
			{Role: models.User, Content: captureUserMessage(v, similar, in)},
		},
		Schema:      captureAnswerSchema(proposalOnly),
		Check:       checkCaptureAnswer,
		SchemaName:  "capture_work",
		MaxTokens:   captureMaxTokens,
		Temperature: &t,
	}
}

func captureUserMessage(v *projectView, similar []similarIssue, in CaptureWorkInput) string {
	var b strings.Builder
	b.WriteString("<project>\n")
	fmt.Fprintf(&b, "name: %s\ntoday: %s\n", v.Project.FullName(), day(v.Data.ComputedAt))
	b.WriteString("labels: estimate est/xs est/s est/m est/l est/xl; priority p/0 p/1 p/2 p/3 (default p/2)\n")
	if team := captureTeam(v); team != "" {
		fmt.Fprintf(&b, "team: %s\n", team)
	}
	ms := openMilestones(v.Milestones)
	if len(ms) == 0 {
		b.WriteString("open milestones: none\n")
	} else {
		b.WriteString("open milestones (id: title, due, forecast p80):\n")
		for _, m := range ms {
			fmt.Fprintf(&b, "- %d: %s", m.ID, quoteData(m.Title))
			if m.DueOn != nil {
				fmt.Fprintf(&b, ", due %s", day(*m.DueOn))
			} else {
				b.WriteString(", no due date")
			}
			if f := v.Milestone[m.ID]; f != nil {
				if f.Hard {
					b.WriteString(" (hard)")
				}
				fmt.Fprintf(&b, ", p80 %s", day(f.P80))
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("</project>\n")
	b.WriteString("<similar_open_issues>\n")
	if len(similar) == 0 {
		b.WriteString("none found\n")
	}
	for _, s := range similar {
		fmt.Fprintf(&b, "- #%d %s\n", s.Number, quoteData(s.Title))
	}
	b.WriteString("</similar_open_issues>\n")
	b.WriteString("<braindump>\n")
	b.WriteString(neutraliseTags(strings.TrimSpace(in.Braindump)))
	b.WriteString("\n</braindump>\n")
	if len(in.Answers) > 0 {
		b.WriteString("<answers>\n")
		for _, a := range in.Answers {
			fmt.Fprintf(&b, "Q: %s\nA: %s\n", neutraliseTags(flatLine(a.Question)), neutraliseTags(strings.TrimSpace(a.Answer)))
		}
		b.WriteString("</answers>\n")
	}
	b.WriteString("Answer with the JSON object now.")
	return b.String()
}

// captureTeam lists who carries the scheduled work, with their open
// issues, so that the model can judge how to split.
func captureTeam(v *projectView) string {
	load := v.Data.Forecast.Load
	parts := make([]string, 0, min(len(load), maxContextPeople))
	for _, l := range load {
		if len(parts) == maxContextPeople {
			parts = append(parts, fmt.Sprintf("and %d more", len(load)-maxContextPeople))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%d open issues)", neutraliseTags(l.Login), l.Issues))
	}
	return strings.Join(parts, ", ")
}

// openMilestones are the open milestones, soonest due first (no due date
// last), at most maxContextMilestone.
func openMilestones(all []store.Milestone) []store.Milestone {
	var out []store.Milestone
	for _, m := range all {
		if m.State == "open" {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b store.Milestone) int {
		switch {
		case a.DueOn == nil && b.DueOn == nil:
			return cmp.Compare(a.ID, b.ID)
		case a.DueOn == nil:
			return 1
		case b.DueOn == nil:
			return -1
		}
		if c := a.DueOn.Compare(*b.DueOn); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if len(out) > maxContextMilestone {
		out = out[:maxContextMilestone]
	}
	return out
}

// captureTags are the prompt's delimiters. People's text cannot open or
// close one: neutraliseTags swaps the angle bracket of anything that looks
// like one of them for a look-alike.
var captureTags = regexp.MustCompile(`(?i)<\s*/?\s*(project|similar_open_issues|braindump|answers)\b`)

func neutraliseTags(s string) string {
	return captureTags.ReplaceAllStringFunc(s, func(m string) string {
		return "‹" + strings.TrimPrefix(m, "<")
	})
}

// quoteData renders a one-line title as a JSON string, so its end is
// unambiguous.
func quoteData(s string) string {
	b, err := json.Marshal(neutraliseTags(flatLine(Truncate(s, 200))))
	if err != nil {
		return `""`
	}
	return string(b)
}

func flatLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
