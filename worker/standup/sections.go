package standup

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/commitea/commitea/scheduler"
)

// A report is read as sections: at-risk milestones, drift, each person's
// plan, stale blockers, and whatever later parts add. The template
// (Template), the dashboard's standup page and any check that prose
// carries everything the report does all walk Sections, so a section is
// declared once and shows up everywhere. See the package doc for how to
// add one.

// Section keys, stable: pages anchor on them and checks name them.
const (
	SectionAtRisk        = "atRisk"
	SectionDrift         = "drift"
	SectionPlan          = "plan"
	SectionStaleBlockers = "staleBlockers"
)

// Section is one part of a report as a reader sees it.
type Section struct {
	Key     string `json:"key"`
	Heading string `json:"heading"`
	// Empty is the sentence shown instead of entries when there are none;
	// Intro, when set, precedes the entries.
	Empty   string  `json:"empty,omitempty"`
	Intro   string  `json:"intro,omitempty"`
	Entries []Entry `json:"entries"`
}

// Subject kinds: what an entry is about, by the name prose uses for it.
const (
	SubjectIssue     = "issue"     // by number: #433
	SubjectPerson    = "person"    // by login: dana
	SubjectMilestone = "milestone" // by title: v1.0 Launch
)

// Subject is what an entry is about. An entry without one (Kind "") is a
// detail of its parent, such as one cause of a drift.
type Subject struct {
	Kind      string `json:"kind,omitempty"`
	Issue     int64  `json:"issue,omitempty"`
	Person    string `json:"person,omitempty"`
	Milestone int64  `json:"milestone,omitempty"`
	// Title is the issue's or milestone's title.
	Title string `json:"title,omitempty"`
}

// Mention is how a text names the subject, and what a completeness check
// looks for: "#433", "dana", "v1.0 Launch"; "" for no subject.
func (s Subject) Mention() string {
	switch s.Kind {
	case SubjectIssue:
		return "#" + strconv.FormatInt(s.Issue, 10)
	case SubjectPerson:
		return s.Person
	case SubjectMilestone:
		return s.Title
	}
	return ""
}

// Label is how a list shows the subject: the mention, and an issue's
// title after its number.
func (s Subject) Label() string {
	if s.Kind == SubjectIssue && s.Title != "" {
		return s.Mention() + " " + s.Title
	}
	return s.Mention()
}

// Entry is one item of a section: its subject, the rest of its line, flags
// that call for attention, and sub-entries (a milestone's critical chain, a
// person's done/now/next work, a drift's causes). Role groups sub-entries:
// the template writes consecutive sub-entries of one role on one line.
type Entry struct {
	Subject Subject `json:"subject"`
	Role    string  `json:"role,omitempty"`
	// Text follows the subject's label, e.g. " (p50 2027-03-02)"; for an
	// entry without a subject it is the whole line.
	Text    string  `json:"text,omitempty"`
	Flags   []Flag  `json:"flags,omitempty"`
	Entries []Entry `json:"entries,omitempty"`
}

// Flag kinds.
const (
	// FlagCriticalChain: planned work on a milestone's critical chain; its
	// Milestone is set.
	FlagCriticalChain = "critical_chain"
	FlagHardDeadline  = "hard_deadline"
	FlagLate          = "late"
	FlagBlocked       = "blocked"
	// FlagPartTime: critical-chain work planned on a person with under half
	// the team's median hours a week.
	FlagPartTime = "part_time"
)

// Roles of sub-entries.
const (
	RoleCriticalChain = "critical chain"
	RoleDone          = "done"
	RoleNow           = "now"
	RoleNext          = "next"
	RoleBlocked       = "blocked"
	// RoleRescue: an at-risk milestone's best rescue option.
	RoleRescue = "best rescue"
)

// Group is a run of sub-entries of one role; an entry without a role is a
// group of its own.
type Group struct {
	Role    string
	Entries []Entry
}

// Groups returns the entry's sub-entries as the template and the page show
// them: consecutive sub-entries of one role together.
func (e Entry) Groups() []Group {
	var out []Group
	for _, sub := range e.Entries {
		if n := len(out); n > 0 && sub.Role != "" && out[n-1].Role == sub.Role {
			out[n-1].Entries = append(out[n-1].Entries, sub)
			continue
		}
		out = append(out, Group{Role: sub.Role, Entries: []Entry{sub}})
	}
	return out
}

// Flag is something about an entry that needs attention.
type Flag struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
	// Milestone is the flag's milestone, when it has one.
	Milestone *Subject `json:"milestone,omitempty"`
}

// Sections returns the report as a reader sees it, in reading order. This
// list is the extension point: a new section adds its data to Report and
// its function here.
func (r Report) Sections() []Section {
	return []Section{
		r.atRiskSection(),
		r.driftSection(),
		r.planSection(),
		r.staleBlockersSection(),
		r.agingSection(),
	}
}

// Subjects lists every subject of the report's sections, sub-entries
// included, once each in reading order: everything a complete text of the
// report names.
func (r Report) Subjects() []Subject {
	seen := map[Subject]bool{}
	var out []Subject
	var walk func([]Entry)
	walk = func(es []Entry) {
		for _, e := range es {
			if e.Subject.Kind != "" && !seen[e.Subject] {
				seen[e.Subject] = true
				out = append(out, e.Subject)
			}
			walk(e.Entries)
		}
	}
	for _, s := range r.Sections() {
		walk(s.Entries)
	}
	return out
}

func issueSubject(n int64, title string) Subject {
	return Subject{Kind: SubjectIssue, Issue: n, Title: title}
}

func milestoneSubject(id int64, title string) Subject {
	return Subject{Kind: SubjectMilestone, Milestone: id, Title: title}
}

func pct(x float64) string { return strconv.Itoa(int(x*100+0.5)) + "%" }

func (r Report) atRiskSection() Section {
	s := Section{Key: SectionAtRisk, Heading: "At risk", Entries: []Entry{},
		Empty: "none; every milestone with a due date should make it by its p80."}
	for _, m := range r.AtRisk {
		e := Entry{Subject: milestoneSubject(m.Milestone, m.Title),
			Text: fmt.Sprintf(" (due %s): %s chance to make it; p50 %s, p80 %s, slack %s, %d open",
				m.Due, pct(m.Chance), m.P50, m.P80, signedDays(m.SlackDays), m.Open)}
		if m.Hard {
			e.Flags = append(e.Flags, Flag{Kind: FlagHardDeadline, Text: "hard deadline"})
		}
		if m.Late {
			e.Flags = append(e.Flags, Flag{Kind: FlagLate, Text: "p50 after the due date"})
		}
		for _, c := range m.Chain {
			text := " (" + pct(c.Share) + " of trials"
			if c.Assignee != "" {
				text += ", " + c.Assignee
			}
			e.Entries = append(e.Entries, Entry{Subject: issueSubject(c.Number, c.Title), Role: RoleCriticalChain, Text: text + ")"})
		}
		if m.MoreChain > 0 {
			e.Entries = append(e.Entries, Entry{Role: RoleCriticalChain, Text: fmt.Sprintf("%d more", m.MoreChain)})
		}
		if o := m.Rescue; o != nil {
			// One clause, the milestone first: the prose check binds the
			// figures to it, not to the issues or person named after.
			text := fmt.Sprintf(" reaches %s chance, p80 %s, %s", pct(o.Chance), o.P80, o.words())
			if !o.Makes {
				text = fmt.Sprintf(" reaches at best %s chance, p80 %s, %s: nothing within the rules makes the date", pct(o.Chance), o.P80, o.words())
			}
			e.Entries = append(e.Entries, Entry{Subject: milestoneSubject(m.Milestone, m.Title), Role: RoleRescue, Text: text})
		} else if m.RescuePending {
			e.Entries = append(e.Entries, Entry{Subject: milestoneSubject(m.Milestone, m.Title), Role: RoleRescue, Text: RescuePendingText})
		}
		s.Entries = append(s.Entries, e)
	}
	return s
}

// RescuePendingText is the best-rescue line of an at-risk milestone while
// the snapshot's rescue options are still being computed: honest that
// there may be one, rather than silent as if there were none.
const RescuePendingText = ": rescue options are still being computed for this snapshot; query_project lists them once stored"

// words says what the option does, naming only subjects and the new due
// date.
func (o Rescue) words() string {
	issues := make([]string, len(o.Issues))
	for k, n := range o.Issues {
		issues[k] = fmt.Sprintf("#%d", n)
	}
	list := strings.Join(issues, ", ")
	if more := o.IssuesCount - len(o.Issues); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	switch scheduler.RescueKind(o.Kind) {
	case scheduler.RescueCutScope:
		if o.To == "" {
			return "if " + list + " leave the milestone"
		}
		return "if " + list + " move to " + o.To
	case scheduler.RescueResequence:
		if list == "" {
			return "if competing work of the same people waits"
		}
		return "if its critical chain (" + list + ") goes first"
	case scheduler.RescueReassign:
		return "if " + list + " change hands to someone free sooner"
	case scheduler.RescueCapacity:
		return "if " + o.Person + " gives more hours a day"
	case scheduler.RescueMoveDate:
		return "with the due date moved to " + o.Due
	}
	return "with " + o.Summary
}

func (r Report) driftSection() Section {
	s := Section{Key: SectionDrift, Heading: "Drift", Entries: []Entry{}}
	since := "since " + r.Since
	if r.Reconstructed {
		// No standup was stored then: the comparison is with the project
		// as its history shows it on that day.
		since += " (the forecast as of then, read back from the history; this is the first standup)"
	}
	switch {
	case r.FirstStandup && !r.Reconstructed:
		s.Empty = "first standup, nothing to compare against yet."
	case len(r.Drift) == 0:
		s.Empty = since + ": no milestone moved by a working day or more."
	default:
		s.Intro = since
	}
	for _, d := range r.Drift {
		var text string
		if d.Due != "" {
			text = " (due " + d.Due + ")"
		}
		text += fmt.Sprintf(": p50 %s -> %s (%s), p80 %s -> %s (%s)",
			d.P50Before, d.P50After, signedDays(d.P50Days), d.P80Before, d.P80After, signedDays(d.P80Days))
		e := Entry{Subject: milestoneSubject(d.Milestone, d.Title), Text: text}
		for _, c := range d.Causes {
			e.Entries = append(e.Entries, Entry{Text: causeText(c)})
		}
		s.Entries = append(s.Entries, e)
	}
	return s
}

func (r Report) planSection() Section {
	s := Section{Key: SectionPlan, Heading: "Plan", Entries: []Entry{},
		Empty: "nobody has assigned or scheduled work."}
	var hours []float64
	for _, p := range r.Plan {
		if p.HoursPerWeek > 0 {
			hours = append(hours, p.HoursPerWeek)
		}
	}
	slices.Sort(hours)
	var median float64
	if n := len(hours); n > 0 {
		median = (hours[(n-1)/2] + hours[n/2]) / 2
	}
	for _, p := range r.Plan {
		partTime := p.HoursPerWeek > 0 && p.HoursPerWeek < median/2
		e := Entry{Subject: Subject{Kind: SubjectPerson, Person: p.Login}}
		if p.HoursPerWeek > 0 {
			e.Text = fmt.Sprintf(" (%s h a week, %s of work, free from %s)", num(p.HoursPerWeek), weeks(p.LoadWeeks), p.FreeFrom)
		}
		add := func(role string, items []Item, more int, withP50 bool) {
			for _, it := range items {
				sub := Entry{Subject: issueSubject(it.Number, it.Title), Role: role}
				switch {
				case len(it.BlockedBy) > 0:
					sub.Flags = append(sub.Flags, Flag{Kind: FlagBlocked, Text: "waits for " + refs(it.BlockedBy)})
				case withP50 && it.P50 != "":
					sub.Text = " (p50 " + it.P50 + ")"
				}
				if c := it.Critical; c != nil {
					ms := milestoneSubject(c.Milestone, c.Title)
					text := "critical chain of " + c.Title + " in " + pct(c.Share) + " of trials"
					if c.AtRisk {
						text += ", which is at risk"
					}
					sub.Flags = append(sub.Flags, Flag{Kind: FlagCriticalChain, Text: text, Milestone: &ms})
					if partTime {
						sub.Flags = append(sub.Flags, Flag{Kind: FlagPartTime, Text: "part-time: " + p.Login + " has " + num(p.HoursPerWeek) + " h a week"})
					}
				}
				e.Entries = append(e.Entries, sub)
			}
			if more > 0 {
				e.Entries = append(e.Entries, Entry{Role: role, Text: fmt.Sprintf("%d more", more)})
			}
		}
		add(RoleDone, p.Done, p.MoreDone, false)
		add(RoleNow, p.Now, p.MoreNow, true)
		add(RoleNext, p.Next, 0, true)
		add(RoleBlocked, p.Blocked, p.MoreBlocked, false)
		s.Entries = append(s.Entries, e)
	}
	return s
}

func (r Report) staleBlockersSection() Section {
	s := Section{Key: SectionStaleBlockers, Heading: "Stale blockers", Entries: []Entry{}, Empty: "none."}
	for _, b := range r.StaleBlockers {
		who := b.Assignee
		if who == "" {
			who = "unassigned"
		}
		text := fmt.Sprintf(" (%s, %s): idle %s, blocks %s", who, b.State, workingDays(b.IdleDays), refs(b.Blocks))
		if extra := b.BlocksCount - len(b.Blocks); extra > 0 {
			text += fmt.Sprintf(" and %d more", extra)
		}
		s.Entries = append(s.Entries, Entry{Subject: issueSubject(b.Number, b.Title), Text: text})
	}
	return s
}

func weeks(x float64) string {
	if x == 1 {
		return "1 week"
	}
	return num(x) + " weeks"
}
