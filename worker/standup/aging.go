package standup

import (
	"fmt"

	"github.com/commitea/commitea/scheduler"
)

// The aging section: work in progress older than the team's service level
// expectation (the cycle time most of its finished work met; see the
// scheduler's package doc, "Flow"), oldest first. The recompute computes
// ages and the SLE with the snapshot; the standup only lists them.

// SectionAging is the aging section's key.
const SectionAging = "aging"

// maxAging caps the aging list; More counts the rest.
const maxAging = 10

// Aging is the standup's aging work.
type Aging struct {
	// SLE is the service level expectation: SLE.Percentile% of the issues
	// finished in the last WindowDays days took at most SLE.Days calendar
	// days; Days is 0 when too few finished to say.
	SLE        scheduler.SLE `json:"sle"`
	WindowDays int           `json:"windowDays,omitempty"`
	// MinSamples is how many cycle times an SLE needs.
	MinSamples int         `json:"minSamples"`
	Items      []AgingItem `json:"items"`
	More       int         `json:"more,omitempty"`
}

// AgingItem is one open, started issue older than the SLE.
type AgingItem struct {
	Number   int64           `json:"number"`
	Title    string          `json:"title"`
	Assignee string          `json:"assignee,omitempty"`
	State    scheduler.State `json:"state"`
	// AgeDays counts calendar days since it started (the start day is day
	// one), Since is that day.
	AgeDays int    `json:"ageDays"`
	Since   string `json:"since"`
	// Past is the highest cycle-time percentile (50, 70, 85, 95) the age
	// exceeds.
	Past int `json:"past"`
}

// agingWork lists the snapshot's aging issues, oldest first (the order the
// snapshot keeps them in).
func agingWork(in Input, issues map[int64]*Issue) Aging {
	a := Aging{SLE: in.Snapshot.SLE, WindowDays: in.Snapshot.FlowWindowDays, MinSamples: scheduler.MinSLESamples, Items: []AgingItem{}}
	for _, w := range in.Snapshot.Age {
		if !w.Aging {
			continue
		}
		if len(a.Items) == maxAging {
			a.More++
			continue
		}
		it := AgingItem{Number: w.Number, State: w.State, AgeDays: w.Days, Since: w.StartDay, Past: w.Past}
		if is := issues[w.Number]; is != nil {
			it.Title, it.Assignee = is.Title, is.Assignee
		}
		a.Items = append(a.Items, it)
	}
	return a
}

func (r Report) agingSection() Section {
	s := Section{Key: SectionAging, Heading: "Aging work", Entries: []Entry{}}
	sle := r.Aging.SLE
	expectation := fmt.Sprintf("%d%% of finished work took at most %s", sle.Percentile, calendarDays(sle.Days))
	switch {
	case sle.Days == 0:
		s.Empty = fmt.Sprintf("no service level expectation yet: %d finished issues with a cycle time, %d needed.", sle.N, r.Aging.MinSamples)
	case len(r.Aging.Items) == 0:
		s.Empty = "none; all work in progress is within the service level expectation (" + expectation + ")."
	default:
		s.Intro = "older than the service level expectation (" + expectation + ")"
	}
	for _, it := range r.Aging.Items {
		who := it.Assignee
		if who == "" {
			who = "unassigned"
		}
		e := Entry{Subject: issueSubject(it.Number, it.Title),
			Text: fmt.Sprintf(" (%s, %s): %s in progress, since %s", who, it.State, calendarDays(it.AgeDays), it.Since)}
		if it.Past > 0 {
			e.Flags = append(e.Flags, Flag{Kind: FlagAging, Text: fmt.Sprintf("past the %dth percentile", it.Past)})
		}
		s.Entries = append(s.Entries, e)
	}
	if r.Aging.More > 0 {
		s.Entries = append(s.Entries, Entry{Text: fmt.Sprintf("%d more", r.Aging.More)})
	}
	return s
}

// FlagAging marks work older than the service level expectation.
const FlagAging = "aging"

func calendarDays(n int) string {
	if n == 1 {
		return "1 day"
	}
	return fmt.Sprintf("%d days", n)
}
