package dashboard

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The board's filters are server-rendered and live in the query string
// (?milestone=1&assignee=dana&label=bug&flag=blocked), so a filtered board
// is a link a PM can send. "none" as a milestone or assignee picks the
// issues without one. Each filter narrows; together they all must hold.

type boardFilter struct {
	Milestone, Assignee, Label, Flag string
}

// Active reports whether any filter is set.
func (f boardFilter) Active() bool { return f != boardFilter{} }

// Query is the filter as a query string, for links that keep it.
func (f boardFilter) Query() string {
	v := url.Values{}
	for k, x := range map[string]string{"milestone": f.Milestone, "assignee": f.Assignee, "label": f.Label, "flag": f.Flag} {
		if x != "" {
			v.Set(k, x)
		}
	}
	return v.Encode()
}

func boardFilterOf(r *http.Request) boardFilter {
	q := r.URL.Query()
	return boardFilter{Milestone: strings.TrimSpace(q.Get("milestone")), Assignee: strings.TrimSpace(q.Get("assignee")),
		Label: strings.TrimSpace(q.Get("label")), Flag: strings.TrimSpace(q.Get("flag"))}
}

func (f boardFilter) matches(c card) bool {
	switch f.Milestone {
	case "":
	case "none":
		if c.MilestoneID != 0 {
			return false
		}
	default:
		if strconv.FormatInt(c.MilestoneID, 10) != f.Milestone {
			return false
		}
	}
	switch f.Assignee {
	case "":
	case "none":
		if len(c.Assignees) > 0 {
			return false
		}
	default:
		if !slices.ContainsFunc(c.Assignees, func(a string) bool { return strings.EqualFold(a, f.Assignee) }) {
			return false
		}
	}
	if f.Label != "" && !slices.ContainsFunc(c.Labels, func(l string) bool { return strings.EqualFold(l, f.Label) }) {
		return false
	}
	if f.Flag != "" && !slices.ContainsFunc(c.Flags, func(x flag) bool { return x.Key == f.Flag }) {
		return false
	}
	return true
}

// boardChoices are the values each filter offers: the milestones of the
// forecast, and the assignees and labels the board's issues carry.
type boardChoices struct {
	Milestones []choice
	Assignees  []string
	Labels     []string
	Flags      []choice
}

type choice struct{ Value, Name string }

func boardOptions(s *snapshot, cards []card) boardChoices {
	var out boardChoices
	for _, m := range s.Forecast.Milestones {
		out.Milestones = append(out.Milestones, choice{strconv.FormatInt(m.ID, 10), m.Title})
	}
	seenA, seenL := map[string]bool{}, map[string]bool{}
	for _, c := range cards {
		for _, a := range c.Assignees {
			if !seenA[a] {
				seenA[a] = true
				out.Assignees = append(out.Assignees, a)
			}
		}
		for _, l := range c.Labels {
			if !seenL[l] {
				seenL[l] = true
				out.Labels = append(out.Labels, l)
			}
		}
	}
	slices.Sort(out.Assignees)
	slices.Sort(out.Labels)
	for _, f := range flagFilters {
		out.Flags = append(out.Flags, choice{f.Key, f.Name})
	}
	return out
}

// legendEntry explains one of the five lifecycle states in the tea words
// the board uses.
type legendEntry struct{ Name, Means string }

var legend = []legendEntry{
	{"Diagnosis", "open, and nobody has understood it yet: no assignee, estimate, priority or milestone"},
	{"Triage", "open and understood (it has an estimate, a priority or a milestone), but nobody has taken it"},
	{"Steeping", "being brewed: open with an assignee, in progress"},
	{"In review", "an open pull request closes it (\"fixes #N\") or works on its branch"},
	{"Done", "closed; closed as wontfix, duplicate, invalid or not-planned it counts as discarded"},
}
