// Package prose checks text that a language model wrote from deterministic
// data: every claim in the text must be a value of the subject it is said
// of, or the text is rejected and the caller falls back to its own
// template. The model phrases; it never gets to state a figure of its own,
// nor one that belongs to something else.
//
// # Subjects
//
// The data (any JSON-encodable value, as FactsOf reads it) holds subjects:
// an object with a "number" or an integer "issue" is an issue, one with a
// "login" or a "who" is a person, one with a "title" and an integer
// "milestone" or "id" is a milestone. Everything inside a subject's object
// that is not itself a subject belongs to it (a drift's causes, a
// milestone's stats and band, an issue's forecast); everything outside any
// subject belongs to the whole (the standup's day, the snapshot). The same
// subject seen twice (an issue in a plan and among the stale blockers, a
// milestone in the drift and in the milestone list) is one subject. An
// issue inside a person's object, or with an "assignee" or "scheduledFor",
// belongs to that person; inside a milestone's, or with a "milestone" id,
// to that milestone. A list of issue numbers ("blocks", "issues",
// "blockedBy", …) refers to those issues: the object holding it is their
// context (see binding). Some keys mean something: "due", "p10", "p50",
// "p80", "p90" (and "p50After", "freeFromP50", …) are the dates of those
// roles; "pDue" or "chance" is the chance of the due date; "slack" or
// "slackDays" the working days from the p80 to the due date; "p50Days" and
// "p80Days" a drift. A list's length is a value of its holder, and so is
// the count beyond a capped list ("blocksCount" less the length of
// "blocks").
//
// # Names are not claims
//
// Issue numbers (#123), issue titles, milestone titles and logins of the
// data, and those AddNames adds (the project's, beyond one report), are
// mentions of their subject: the digits in "v1.0 Launch" or "Upgrade to Go
// 1.26" are names. A milestone whose title starts with a word with digits
// in it ("v1.0 Launch") is also mentioned by that word, when no other
// milestone claims it. A #N the project does not have is refused.
//
// # Claims
//
// Dates (2026-12-01, 12/01, Dec 1, 1 December 2026, "Saturday, November
// 7, 2026", weekday names), relative dates (tomorrow, yesterday,
// this/next/last week or month, "in two weeks", "3 days from now"), clock
// times (09:00), numbers (42, 3.5, 5,000, 85%, the words two to twenty),
// words with digits in them (v1.0, dev03) that are not names, status words
// ("on track", "at risk", "late", "ahead of schedule", …) and lateness
// ("three weeks late", "2 working days behind").
//
// A number matches a value when the value, rounded to the decimals the
// text shows, equals it; signs are ignored ("+2 working days" matches a
// shift of 2). Units must agree, as the data's keys say them: a number
// written with days ("4.5 working days") matches only days ("idleDays",
// "slack", "p50Days"), and after a verb of moving ("slipped 2 working
// days") only a move ("p50Days", "p80Days"); hours ("11 h") only hours;
// "N weeks" days by fives or weeks; "N more" only what a list left out
// ("moreNow", a capped list), of the subject or of the person or milestone
// whose list it is; a percentage a chance (0.85 for 85%), a fraction or a
// percentage; a bare number only counts and other plain numbers. A count
// before the words of one of the data's lists ("3 stale blockers") is that
// list's length.
//
// A date without a year matches a date on that month and day; a weekday a
// date on that weekday within six days of today; a relative date some
// date in the span it names, counted from the day SetToday gives in the
// facts' time zone (without SetToday relative dates are not checked;
// "today" and "now" always pass). A date with a role word next to it ("p50
// Dec 3", "lands Dec 3 at p50", "due Dec 10", and "p50 Dec 1 -> Dec 3" for
// both) must be a date of that role; an issue has no due date, so its
// "due" is its forecast. A date the data has only as where something
// moved from ("p50Before") counts only when the text says so ("from Dec
// 1", "Dec 1 -> Dec 3"). Timestamps in the data are read as dates in the
// facts' time zone only: the UTC date of 23:30 in Berlin is not a date of
// the subject. "In 8 working days" is a date that far ahead or a duration
// of the subject; after a negation ("has not moved in 8 working days")
// only a duration.
//
// Status words are about milestones, with their chance p and slack s: "on
// track" (or on schedule, on time, on target) means s ≥ 0 and p ≥ 80%;
// "at risk" (in danger, in trouble) the opposite; "late" (behind, behind
// schedule, overdue, running late) p < 50%; "ahead of schedule" (ahead of
// its date) s > 0 and p ≥ 90%; "slipped" (slipping, pushed back) a drift
// later, or at risk when there is no drift; "moved earlier" (pulled in) a
// drift earlier. "not", "n't", "no longer" and "never" before them negate
// them. "N weeks late" (days, working days; behind, early, ahead, past or
// before its due date) counts from the due date to the p50, in calendar
// days, working days (Monday to Friday), or calendar weeks rounded.
//
// # Binding
//
// Text is cut into clauses at sentence ends, semicolons and line breaks.
// A claim is said of the nearest subject mentioned before it in its
// clause: "Bruno finishes #432 tomorrow" is about #432. A mention after
// "for", "in", "of" or "towards" right behind another is a modifier, not a
// new subject: in "#471 for the v1.0 Launch (likely done Dec 16)" the
// date is #471's. A run of mentions joined by commas and "and" is one
// group, whose claims are values of every member, or of an object that
// lists them all ("#20 and #21 were added (11 h nominal)"); an object
// that is a subject lends the issues it lists only what the list left out
// ("blocks #13, #14 and 2 more"). A claim said of a person who holds no
// such value is said of the nearest issue of the clause (theirs first):
// in "Tomorrow Bruno finishes #432" the date is #432's. Before any mention
// in its clause, a claim is a value of the first subject after it; a date
// after "since" or "as of" anywhere, or after "from", "for" or "until"
// before any mention, may also be a date of the whole ("Since Nov 30,
// v1.0 slipped"). A clause that starts with a pronoun ("It lands Dec 3"),
// or that mentions nothing (the next sentence, an indented line under a
// mention), is about the first subject of the clause before it on its
// line, or of the line it is indented under, or the whole; "it" after a
// person is that clause's issue. A status word with no milestone in its
// clause is said of every milestone ("All work is on track"), or of every
// milestone not named earlier when "else", "other" or "the rest" says so
// ("everything else is on track").
//
// Facts.Missing reports which subjects a text never mentions: the
// standup's completeness check.
package prose

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Facts are the subjects a text may talk about, with their values, and
// the values of the whole.
type Facts struct {
	loc   *time.Location
	today civilDate // zero: relative dates are not checked

	global     values
	issues     map[int64]*subject
	milestones []*subject
	people     map[string]*subject
	order      []*subject // subjects with an object in the data, as first seen
	groups     []refGroup
	clocks     map[string]bool
	idents     map[string]bool
	// lists are the lengths of the whole's lists of subjects by their key
	// in words ("stale blockers"), for counts said of them; countPhrases
	// the keys in words of subjects' plain numbers and lists.
	lists        map[string][]float64
	countPhrases map[string]bool
	// pendingMilestone relates issues to milestone ids seen before the
	// milestone itself.
	pendingMilestone map[*subject]int64
	names            []name // built by Check, reset when subjects change
}

// NewFacts returns empty facts; timestamps added later are read as dates in
// loc (nil means UTC).
func NewFacts(loc *time.Location) *Facts {
	if loc == nil {
		loc = time.UTC
	}
	return &Facts{loc: loc, global: newValues(), issues: map[int64]*subject{}, people: map[string]*subject{},
		clocks: map[string]bool{}, idents: map[string]bool{}, lists: map[string][]float64{}, countPhrases: map[string]bool{}, pendingMilestone: map[*subject]int64{}}
}

// FactsOf collects the facts of values: each is encoded to JSON and walked
// for subjects and their values (see the package comment). Object keys are
// not facts.
func FactsOf(loc *time.Location, values ...any) (*Facts, error) {
	f := NewFacts(loc)
	for _, v := range values {
		if err := f.AddValue(v); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// AddValue adds the subjects and values of one value, as FactsOf does.
func (f *Facts) AddValue(v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("facts: encode: %w", err)
	}
	var tree any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return fmt.Errorf("facts: decode: %w", err)
	}
	local := newValues()
	w := walker{f: f, node: &local, holder: true, top: true}
	w.value("", tree, &f.global, nil)
	f.resolve()
	f.names = nil
	return nil
}

// Names are what a project calls things beyond the data at hand: every
// issue's title, every milestone's title, every login. A mention of one is
// a name; a claim said of it must still be one of its values.
type Names struct {
	Issues     map[int64]string
	Milestones []string
	People     []string
}

// AddNames adds names.
func (f *Facts) AddNames(n Names) {
	for num, title := range n.Issues {
		s := f.issue(num)
		if s.title == "" {
			s.title = strings.TrimSpace(title)
		}
	}
	for _, t := range n.Milestones {
		if t = strings.TrimSpace(t); t != "" {
			f.milestone(0, t)
		}
	}
	for _, p := range n.People {
		if p = strings.TrimSpace(p); p != "" {
			f.person(p)
		}
	}
	f.names = nil
}

// Location is the time zone the facts read timestamps in.
func (f *Facts) Location() *time.Location { return f.loc }

// SetToday anchors relative dates ("tomorrow", "next week") at t's date in
// the facts' location. It adds no date: today is a reference, not a fact.
func (f *Facts) SetToday(t time.Time) { f.today = civilOf(t.In(f.loc)) }

// AddNumber adds one number to the whole.
func (f *Facts) AddNumber(x float64) { f.global.addNumber(x, unitPlain) }

// AddDate adds the date of t, in the facts' location, to the whole.
func (f *Facts) AddDate(t time.Time) {
	if !t.IsZero() {
		f.global.addDate(civilOf(t.In(f.loc)), roleNow)
	}
}

// AddText adds what a string states to the whole: a timestamp, or the
// dates, clock times and numbers written in it.
func (f *Facts) AddText(s string) {
	local := newValues()
	w := walker{f: f, node: &local}
	w.text("", s, &f.global, nil)
}

// Kind is what a subject is.
type Kind string

// The kinds of subjects.
const (
	KindIssue     Kind = "issue"
	KindMilestone Kind = "milestone"
	KindPerson    Kind = "person"
)

// Ref names a subject: an issue by number (and title), a milestone by
// title, a person by login.
type Ref struct {
	Kind   Kind
	Number int64
	Name   string
}

func (r Ref) String() string {
	switch r.Kind {
	case KindIssue:
		return fmt.Sprintf("#%d", r.Number)
	case KindPerson:
		return "@" + r.Name
	}
	return r.Name
}

// Subjects lists the items of the data, in the order they were first
// seen: the subjects whose objects are reached from the top through lists
// and other subjects' objects only (a plan's people and their issues, the
// milestones), not those inside an object that is no subject (an issue a
// drift's cause names).
func (f *Facts) Subjects() []Ref {
	out := make([]Ref, 0, len(f.order))
	for _, s := range f.order {
		out = append(out, s.ref())
	}
	return out
}
