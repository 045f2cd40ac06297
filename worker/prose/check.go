package prose

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Reasons a claim is refused.
const (
	// ReasonUngrounded: nothing in the data has the value.
	ReasonUngrounded = "ungrounded"
	// ReasonWrongSubject: the data has the value, but not for the subject
	// the text says it of.
	ReasonWrongSubject = "wrong_subject"
	// ReasonStatus: a status word or a lateness the chance, slack and
	// dates do not bear out.
	ReasonStatus = "status"
	// ReasonUnknownIssue: an issue number the project does not have.
	ReasonUnknownIssue = "unknown_issue"
)

// Problem is one refused claim.
type Problem struct {
	Text string
	// Subject is what the claim was said of ("#432", "v1.0", "@bruno"),
	// or "" for the whole.
	Subject string
	Reason  string
}

func (p Problem) String() string {
	s := p.Text
	if p.Subject != "" {
		s += " (of " + p.Subject + ")"
	}
	switch p.Reason {
	case ReasonStatus:
		s += ": not what the forecast says"
	case ReasonUnknownIssue:
		s += ": no such issue"
	case ReasonWrongSubject:
		s += ": another subject's value"
	}
	return s
}

// UngroundedError lists what a text states that its data does not.
type UngroundedError struct {
	// Tokens are the refused claims as written.
	Tokens   []string
	Problems []Problem
}

func (e *UngroundedError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return "prose states what the data does not: " + strings.Join(parts, ", ")
}

// Reason is the reason of the first refused claim.
func (e *UngroundedError) Reason() string {
	if len(e.Problems) == 0 {
		return ReasonUngrounded
	}
	return e.Problems[0].Reason
}

// Check returns nil when every claim of text is a value of its subject
// (see the package comment), and an *UngroundedError naming the rest
// otherwise.
func Check(text string, f *Facts) error {
	c := f.newCheck(text)
	var probs []Problem
	for _, cl := range c.claims {
		if p, ok := c.verify(cl); !ok {
			probs = append(probs, p)
		}
	}
	if len(probs) == 0 {
		return nil
	}
	e := &UngroundedError{Problems: probs}
	for _, p := range probs {
		e.Tokens = append(e.Tokens, p.Text)
	}
	return e
}

// Missing returns the refs that text never mentions, by number, title or
// login, in the order given.
func (f *Facts) Missing(text string, refs []Ref) []Ref {
	c := f.newCheck(text)
	seen := map[*subject]bool{}
	for _, m := range c.mentions {
		if m.subj != nil && !m.pronoun {
			seen[m.subj] = true
		}
	}
	var out []Ref
	for _, r := range refs {
		if s := f.lookup(r); s == nil || !seen[s] {
			out = append(out, r)
		}
	}
	return out
}

func (f *Facts) lookup(r Ref) *subject {
	switch r.Kind {
	case KindIssue:
		return f.issues[r.Number]
	case KindPerson:
		return f.people[strings.ToLower(r.Name)]
	case KindMilestone:
		for _, m := range f.milestones {
			if strings.EqualFold(m.title, r.Name) {
				return m
			}
		}
	}
	return nil
}

// name is one way a subject is written.
type name struct {
	text          string // lower case unless caseSensitive
	subj          *subject
	caseSensitive bool
}

// nameIndex lists every name, the longest first, so that "Beta 2" is
// found before "Beta".
func (f *Facts) nameIndex() []name {
	if f.names != nil {
		return f.names
	}
	var out []name
	add := func(text string, s *subject) {
		text = strings.TrimSpace(text)
		if text == "" {
			return
		}
		out = append(out, name{text: strings.ToLower(text), subj: s, caseSensitive: len(text) <= 3})
		if len(text) <= 3 {
			out[len(out)-1].text = text
		}
		for _, tok := range scan(text, nil) {
			if tok.kind == tokIdent {
				f.idents[strings.ToLower(tok.text)] = true
			}
		}
	}
	for _, s := range f.issues {
		// One-word titles are ordinary words too often ("Search").
		if strings.Contains(strings.TrimSpace(s.title), " ") || len(s.title) >= 12 {
			add(s.title, s)
		}
	}
	aliases := map[string][]*subject{}
	for _, m := range f.milestones {
		add(m.title, m)
		if first, _, ok := strings.Cut(m.title, " "); ok && strings.ContainsAny(first, "0123456789") {
			aliases[strings.ToLower(first)] = append(aliases[strings.ToLower(first)], m)
		}
	}
	for a, ms := range aliases {
		taken := slices.ContainsFunc(f.milestones, func(m *subject) bool { return strings.EqualFold(m.title, a) })
		if len(ms) == 1 && !taken {
			add(a, ms[0])
		}
	}
	for _, p := range f.people {
		if len(p.title) >= 3 || strings.ContainsAny(p.title, "0123456789") {
			out = append(out, name{text: strings.ToLower(p.title), subj: p})
		}
	}
	slices.SortStableFunc(out, func(a, b name) int {
		if c := len(b.text) - len(a.text); c != 0 {
			return c
		}
		return strings.Compare(a.text, b.text)
	})
	f.names = out
	return out
}

// mention is a subject named in the text.
type mention struct {
	start, end int
	subj       *subject
	group      int  // mentions of one run share it
	modifier   bool // "for the v1.0 Launch" after another mention
	pronoun    bool
	subs       []*subject // what a pronoun stands for
	clause     int
}

// claim is one thing the text states.
type claim struct {
	tok    token
	role   roles // the role word next to a date
	status statusClaim
	late   *latenessClaim
	bad    string // a problem found while reading (unknown issue)
	unit   units  // what the number is written as counting
	list   string // the list a count is of ("3 stale blockers")
	// noun is the key a count names by the words after it ("24 open
	// issues": "open").
	noun string
	// to is the date a move went to ("slipped 2 working days to Dec 4"):
	// the days and the date are one claim.
	to     *token
	prev   bool // a date a move started from ("from Dec 3", "Dec 3 -> Dec 5")
	weeks  bool // a number of weeks: N×5 working days match too
	clause int
}

type statusKind int

const (
	statusNone statusKind = iota
	statusOnTrack
	statusAtRisk
	statusLate
	statusAhead
	statusSlipped
	statusEarlier
)

type statusClaim struct {
	kind    statusKind
	negated bool
	others  bool // "everything else", "the other milestones"
}

type latenessClaim struct {
	n     float64
	weeks bool
	work  bool // working days
	early bool
	// fromToday: "in two weeks", "3 days from now": a date of the
	// subject that far from today (ahead), or a duration.
	fromToday, ahead bool
}

// clause is a sentence, or the part of one between semicolons, or a line.
type clause struct {
	start, end int
	line       int
	indent     int
	mentions   []int // indexes into check.mentions
	carried    []*subject
	// carriedIssue is the issue of the clause carried from, for a person
	// carried ("Sven picked up #35. He should be done Friday").
	carriedIssue *subject
}

type check struct {
	f        *Facts
	text     string
	mentions []mention
	claims   []claim
	clauses  []clause
}

var (
	reIssueRef    = regexp.MustCompile(`#(\d+)\b`)
	reAtLogin     = regexp.MustCompile(`@([A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9]|[A-Za-z0-9])`)
	reJoin        = regexp.MustCompile(`(?i)^\s*(?:,|&|\band\b|\bor\b|,\s*and\b|,\s*or\b|/)\s*$`)
	reSameSubj    = regexp.MustCompile(`^[\s():\-–,]*$`)
	reModifier    = regexp.MustCompile(`(?i)^\s*,?\s*(?:for|in|of|towards?|within|under|part of)\s+(?:the\s+)?$`)
	rePronoun     = regexp.MustCompile(`(?i)^[\s\-*•]*(?:(?:and|but|so|also)\s+)?(it|its|it's|they|their|they're|this|that|these|those|he|she|his|her)\b`)
	reNegatedVerb = regexp.MustCompile(`(?i)(?:\bnot|n't|\bno|\bnever)\s+(?:[a-z]+\s+){0,3}$`)
	reChanceWord  = regexp.MustCompile(`(?i)\b(?:chance|odds|likely|likelihood|probab\w*|confiden\w*)\b`)
	reQuantifier  = regexp.MustCompile(`(?i)\b(?:all|every|everything|everyone|each|nothing|none|else|other|others|the rest|overall)\b`)
	reOthers      = regexp.MustCompile(`(?i)\b(?:else|other|others|the rest)\b`)
	reNegation    = regexp.MustCompile(`(?i)(?:\bnot|n't|\bno longer|\bnever|\bno|\bnothing|\bnone of (?:the|them|our)?)\s+(?:[a-z0-9.]+\s+){0,2}$`)
	// "At risk: none" says nothing is.
	reNoneAfter  = regexp.MustCompile(`(?i)^\s*:\s*(?:none|nothing|no milestone)\b`)
	reHeading    = regexp.MustCompile(`^[\s#*\-]*$`)
	reHeadingEnd = regexp.MustCompile(`^[\s*]*:\s*(?:\n|$)`)
	reQualifier  = regexp.MustCompile(`(?i)\b(p10|p50|p80|p90|due)\b`)
	reStatus     = regexp.MustCompile(`(?i)\b(on[ -]track|on schedule|on time|on target|at risk|in danger|in trouble|` +
		`ahead of (?:schedule|plan|its (?:due )?date)|behind schedule|behind|running late|late|overdue|` +
		`slipped|slipping|slips|pushed (?:back|out)|moved earlier|pulled in)\b`)
	reDaysUnit       = regexp.MustCompile(`^\s*(?:working\s+|business\s+)?days?\b`)
	reHoursUnit      = regexp.MustCompile(`^\s*(?:h|hrs?|hours?)\b`)
	reWeeksUnit      = regexp.MustCompile(`^\s*(?:working\s+)?weeks?\b`)
	reMove           = regexp.MustCompile(`(?i)\b(?:slipp?\w*|moved|moves|shift\w*|push\w*(?:\s+(?:out|back))?|pull\w*(?:\s+in)?|gain\w*|lost|loses)(?:\s+(?:earlier|later|back|out|up))?(?:\s+by)?(?:\s+(?:about|around|another|roughly|some))?\s+[+-]?$`)
	reAdjacentBefore = regexp.MustCompile(`^[\s:(]*$`)
	reAdjacentAfter  = regexp.MustCompile(`(?i)^\s*(?:\(|at|at the|at its)?\s*$`)
	reChain          = regexp.MustCompile(`(?i)^\s*(?:->|→|to|then|and then)\s*$`)
	reFrame          = regexp.MustCompile(`\b(?:since|as of)\s+$`)
	reLeadingFrame   = regexp.MustCompile(`\b(?:until|for|from)\s+$`)
	reMoreUnit       = regexp.MustCompile(`^\s*(?:more|others?)\b`)
	reMoveTo         = regexp.MustCompile(`(?i)^\s*(?:working\s+|business\s+)?days?\s+(?:later\s+|earlier\s+)?(?:to|until|->|→)\s+(?:on\s+)?$`)
	reOfTrials       = regexp.MustCompile(`(?i)^\s*(?:of\s+(?:the\s+)?)?(?:trials|runs|simulations)\b`)
	reFromDate       = regexp.MustCompile(`\b(?:from|was|previously|before)\s+$`)
	reToDate         = regexp.MustCompile(`^\s*(?:->|→|to)\s*\S`)
	reFromToday      = regexp.MustCompile(`(?i)\bin\s+` + numberPattern + `\s+(working\s+days?|days?|weeks?)(?:'|’)?(?:\s+time)?\b|\b` +
		numberPattern + `\s+(working\s+days?|days?|weeks?)\s+(?:from\s+(?:now|today)|away)\b`)
	reLateness = regexp.MustCompile(`(?i)\b` + numberPattern +
		`\s+(working\s+days?|business\s+days?|days?|weeks?)\s+` +
		`(late|behind(?:\s+schedule)?|overdue|early|ahead(?:\s+of\s+schedule)?|(?:past|after|before)\s+(?:its|the)\s+due\s+date)\b`)
)

// numberPattern is a number in digits or words, as a group.
const numberPattern = `(\d+(?:\.\d+)?|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty)`

var statusWords = map[string]statusKind{
	"on track": statusOnTrack, "on-track": statusOnTrack, "on schedule": statusOnTrack, "on time": statusOnTrack, "on target": statusOnTrack,
	"at risk": statusAtRisk, "in danger": statusAtRisk, "in trouble": statusAtRisk,
	"behind schedule": statusLate, "behind": statusLate, "running late": statusLate, "late": statusLate, "overdue": statusLate,
	"slipped": statusSlipped, "slipping": statusSlipped, "slips": statusSlipped, "pushed back": statusSlipped, "pushed out": statusSlipped,
	"moved earlier": statusEarlier, "pulled in": statusEarlier,
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// boundary reports whether text[start:end] stands as a word of its own:
// "v1.0" in "v1.0 is late" but not in "v1.0.1" or "xv1.0".
func boundary(text string, start, end int) bool {
	if start > 0 && isWordByte(text[start-1]) {
		return false
	}
	if end < len(text) {
		c := text[end]
		if isWordByte(c) {
			return false
		}
		if (c == '.' || c == '-') && end+1 < len(text) && text[end+1] >= '0' && text[end+1] <= '9' {
			return false
		}
	}
	return true
}

func (f *Facts) newCheck(text string) *check {
	c := &check{f: f, text: text}
	used := make([]bool, len(text))
	mark := func(a, b int) {
		for i := a; i < b; i++ {
			used[i] = true
		}
	}
	free := func(a, b int) bool { return !slices.Contains(used[a:b], true) }

	// Issue numbers first: they are unambiguous.
	for _, m := range reIssueRef.FindAllStringSubmatchIndex(text, -1) {
		n, _ := strconv.ParseInt(text[m[2]:m[3]], 10, 64)
		mark(m[0], m[1])
		s := f.issues[n]
		if s == nil {
			c.claims = append(c.claims, claim{tok: token{text: text[m[0]:m[1]], start: m[0], end: m[1]}, bad: ReasonUnknownIssue})
			continue
		}
		c.mentions = append(c.mentions, mention{start: m[0], end: m[1], subj: s})
	}
	for _, m := range reAtLogin.FindAllStringSubmatchIndex(text, -1) {
		if p := f.people[strings.ToLower(text[m[2]:m[3]])]; p != nil && free(m[0], m[1]) {
			mark(m[0], m[1])
			c.mentions = append(c.mentions, mention{start: m[0], end: m[1], subj: p})
		}
	}
	lower := strings.ToLower(text)
	folded := len(lower) == len(text)
	for _, n := range f.nameIndex() {
		hay := text
		if !n.caseSensitive && folded {
			hay = lower
		}
		for from := 0; ; {
			i := strings.Index(hay[from:], n.text)
			if i < 0 {
				break
			}
			a, b := from+i, from+i+len(n.text)
			from = b
			if boundary(text, a, b) && free(a, b) {
				mark(a, b)
				c.mentions = append(c.mentions, mention{start: a, end: b, subj: n.subj})
			}
		}
	}
	slices.SortFunc(c.mentions, func(a, b mention) int { return a.start - b.start })

	// Lateness and status words, before numbers: "three weeks late" is one
	// claim, not the number three.
	for _, m := range reLateness.FindAllStringSubmatchIndex(text, -1) {
		if !free(m[0], m[1]) {
			continue
		}
		mark(m[0], m[1])
		num := strings.ToLower(text[m[2]:m[3]])
		n, err := strconv.ParseFloat(num, 64)
		if err != nil {
			n = numberWords[num]
			if num == "a" || num == "an" || num == "one" {
				n = 1
			}
		}
		unit := strings.ToLower(text[m[4]:m[5]])
		dir := strings.ToLower(text[m[6]:m[7]])
		lc := &latenessClaim{n: n, weeks: strings.HasPrefix(unit, "week"), work: strings.Contains(unit, " "),
			early: strings.HasPrefix(dir, "early") || strings.HasPrefix(dir, "ahead") || strings.HasPrefix(dir, "before")}
		c.claims = append(c.claims, claim{tok: token{text: text[m[0]:m[1]], start: m[0], end: m[1]}, late: lc})
	}
	for _, m := range reFromToday.FindAllStringSubmatchIndex(text, -1) {
		if !free(m[0], m[1]) || f.today == (civilDate{}) {
			continue
		}
		mark(m[0], m[1])
		numAt, unitAt := 2, 4
		if m[2] < 0 {
			numAt, unitAt = 6, 8
		}
		num := strings.ToLower(text[m[numAt]:m[numAt+1]])
		n, err := strconv.ParseFloat(num, 64)
		if err != nil {
			n = numberWords[num]
			if num == "a" || num == "an" || num == "one" {
				n = 1
			}
		}
		unit := strings.ToLower(text[m[unitAt]:m[unitAt+1]])
		// "has not moved in 8 days" is a duration, never a date ahead.
		ahead := !reNegatedVerb.MatchString(text[max(0, m[0]-40):m[0]])
		lc := &latenessClaim{n: n, weeks: strings.HasPrefix(unit, "week"), work: strings.Contains(unit, " "), fromToday: true, ahead: ahead}
		c.claims = append(c.claims, claim{tok: token{kind: tokRelative, text: text[m[0]:m[1]], start: m[0], end: m[1]}, late: lc})
	}
	for _, m := range reStatus.FindAllStringIndex(text, -1) {
		if !free(m[0], m[1]) {
			continue
		}
		mark(m[0], m[1])
		w := strings.ToLower(text[m[0]:m[1]])
		k, ok := statusWords[w]
		if !ok && strings.HasPrefix(w, "ahead of") {
			k, ok = statusAhead, true
		}
		if !ok {
			continue
		}
		if reHeading.MatchString(text[strings.LastIndexByte(text[:m[0]], '\n')+1:m[0]]) && reHeadingEnd.MatchString(text[m[1]:]) {
			// "At risk:" heading a list is no claim; its entries are.
			continue
		}
		sc := statusClaim{kind: k, negated: reNegation.MatchString(text[max(0, m[0]-40):m[0]]) || reNoneAfter.MatchString(text[m[1]:])}
		c.claims = append(c.claims, claim{tok: token{text: text[m[0]:m[1]], start: m[0], end: m[1]}, status: sc})
	}
	for _, t := range scan(text, used) {
		cl := claim{tok: t}
		if t.kind == tokNumber {
			rest := strings.ToLower(text[t.end:])
			switch {
			case reDaysUnit.MatchString(rest):
				cl.unit = unitDays
			case reHoursUnit.MatchString(rest):
				cl.unit = unitHours
			case reWeeksUnit.MatchString(rest):
				cl.unit, cl.weeks = unitWeeks, true
			case reMoreUnit.MatchString(rest):
				cl.unit = unitMore
			case t.percent && reChanceWord.MatchString(text[max(0, t.start-30):min(len(text), t.end+30)]):
				// "a 20% chance", "85% likely": the due date's chance,
				// not a share of trials.
				cl.unit = unitChance
			case t.percent:
				cl.unit = unitFraction | unitPercent | unitPlain
			default:
				cl.unit = unitPlain
			}
			if cl.unit == unitPlain {
				cl.list = phraseAfter(rest, f.lists)
				cl.noun = phraseAfter(rest, f.countPhrases)
			}
			if t.percent && reOfTrials.MatchString(rest) {
				cl.unit = unitShare
			}
			// "slipped 3 working days" is a move, not any number of days.
			if cl.unit == unitDays && reMove.MatchString(text[c.lineStart(t.start):t.start]) {
				cl.unit = unitShift
			}
		}
		if t.kind == tokDate || t.kind == tokAmbiguousDate {
			cl.prev = reFromDate.MatchString(strings.ToLower(text[max(0, t.start-12):t.start])) ||
				reToDate.MatchString(text[t.end:])
		}
		c.claims = append(c.claims, cl)
	}
	slices.SortFunc(c.claims, func(a, b claim) int { return a.tok.start - b.tok.start })
	c.dropWeekdaysOfDates()
	for i := range c.claims {
		cl := &c.claims[i]
		if cl.unit != unitShift || i+1 == len(c.claims) {
			continue
		}
		next := c.claims[i+1].tok
		if (next.kind == tokDate || next.kind == tokAmbiguousDate) && reMoveTo.MatchString(text[cl.tok.end:next.start]) {
			cl.to = &next
		}
	}

	c.clauses = c.splitClauses(used)
	c.relateMentions()
	c.findPronouns()
	for i := range c.claims {
		c.claims[i].clause = c.clauseAt(c.claims[i].tok.start)
	}
	c.readQualifiers()
	for i := range c.claims {
		if c.claims[i].status.kind != statusNone {
			cl := c.clauses[c.claims[i].clause]
			c.claims[i].status.others = reOthers.MatchString(text[cl.start:c.claims[i].tok.start])
		}
	}
	return c
}

// phraseAfter is the key a count names by the words after it, among
// phrases: "3 stale blockers" is the length of "staleBlockers", "24 open
// issues" a subject's "open".
func phraseAfter[V any](rest string, phrases map[string]V) string {
	if !strings.HasPrefix(rest, " ") {
		return ""
	}
	rest = strings.ToLower(strings.TrimLeft(rest, " "))
	best := ""
	for phrase := range phrases {
		singular := strings.TrimSuffix(phrase, "s")
		if (strings.HasPrefix(rest, phrase) && boundary(rest, 0, len(phrase))) ||
			(strings.HasPrefix(rest, singular) && boundary(rest, 0, len(singular))) {
			if len(phrase) > len(best) {
				best = phrase
			}
		}
	}
	return best
}

// lineStart is where the sentence holding pos starts, roughly: after the
// last full stop, semicolon or line break before it.
func (c *check) lineStart(pos int) int {
	return strings.LastIndexAny(c.text[:pos], ".;\n!?") + 1
}

// dropWeekdaysOfDates reads "Saturday, November 7, 2026" as one date: the
// weekday goes when the date falls on it (or has no year to tell).
func (c *check) dropWeekdaysOfDates() {
	out := c.claims[:0]
	for i, cl := range c.claims {
		if cl.tok.kind == tokWeekday && i+1 < len(c.claims) {
			d := c.claims[i+1].tok
			gap := strings.TrimSpace(c.text[cl.tok.end:d.start])
			if d.kind == tokDate && (gap == "," || gap == "") &&
				(d.year == 0 || time.Date(d.year, d.month, d.day, 12, 0, 0, 0, time.UTC).Weekday() == cl.tok.weekday) {
				continue
			}
		}
		out = append(out, cl)
	}
	c.claims = out
}

// splitClauses cuts the text at sentence ends, semicolons and line
// breaks; a full stop inside a number, date or name does not end one.
func (c *check) splitClauses(used []bool) []clause {
	inToken := make([]bool, len(c.text))
	for _, cl := range c.claims {
		for i := cl.tok.start; i < cl.tok.end && i < len(inToken); i++ {
			inToken[i] = true
		}
	}
	for i := range used {
		inToken[i] = inToken[i] || used[i]
	}
	var out []clause
	line, start := 0, 0
	indentOf := func(pos int) int {
		n := 0
		for pos+n < len(c.text) && (c.text[pos+n] == ' ' || c.text[pos+n] == '\t') {
			n++
		}
		return n
	}
	indent := indentOf(0)
	cut := func(end int) {
		if strings.TrimSpace(c.text[start:end]) != "" {
			out = append(out, clause{start: start, end: end, line: line, indent: indent})
		}
		start = end
	}
	for i := 0; i < len(c.text); i++ {
		ch := c.text[i]
		switch {
		case ch == '\n':
			cut(i)
			start = i + 1
			line++
			indent = indentOf(i + 1)
		case ch == ';' && !inToken[i]:
			cut(i + 1)
		case (ch == '.' || ch == '!' || ch == '?') && !inToken[i] &&
			(i+1 == len(c.text) || c.text[i+1] == ' ' || c.text[i+1] == '\n' || c.text[i+1] == '"' || c.text[i+1] == ')'):
			cut(i + 1)
		}
	}
	cut(len(c.text))
	if len(out) == 0 {
		out = append(out, clause{start: 0, end: len(c.text)})
	}
	return out
}

func (c *check) clauseAt(pos int) int {
	for i, cl := range c.clauses {
		if pos < cl.end || i == len(c.clauses)-1 {
			if pos >= cl.start || i == 0 {
				return i
			}
		}
	}
	return len(c.clauses) - 1
}

// relateMentions merges a subject written twice in a row ("#12 Fix
// login", "Export (#31)"), joins runs into groups and marks modifiers.
func (c *check) relateMentions() {
	var out []mention
	for _, m := range c.mentions {
		m.clause = c.clauseAt(m.start)
		if n := len(out); n > 0 {
			prev := &out[n-1]
			gap := c.text[prev.end:m.start]
			if prev.clause == m.clause && prev.subj == m.subj && reSameSubj.MatchString(gap) {
				prev.end = m.end
				continue
			}
		}
		out = append(out, m)
	}
	group := 0
	for i := range out {
		group++
		out[i].group = group
		if i == 0 || out[i-1].clause != out[i].clause {
			continue
		}
		prev, m := &out[i-1], &out[i]
		gap := c.text[prev.end:m.start]
		switch {
		case prev.subj.kind == m.subj.kind && reJoin.MatchString(gap):
			m.group = prev.group
			group--
		case (m.subj.kind == KindMilestone || m.subj.kind == KindPerson) && reModifier.MatchString(gap):
			m.modifier = true
		}
	}
	c.mentions = out
	for i, m := range c.mentions {
		c.clauses[m.clause].mentions = append(c.clauses[m.clause].mentions, i)
	}
}

// findPronouns carries subjects from clause to clause: a clause that
// starts with a pronoun, or mentions nothing, is about the first subject
// of the clause before it on its line, or of the line it is indented
// under.
func (c *check) findPronouns() {
	for i := range c.clauses {
		cl := &c.clauses[i]
		var from *clause
		switch {
		case i > 0 && c.clauses[i-1].line == cl.line:
			from = &c.clauses[i-1]
		default:
			for j := i - 1; j >= 0; j-- {
				if c.clauses[j].line != cl.line && c.clauses[j].indent < cl.indent {
					from = &c.clauses[j]
					break
				}
			}
		}
		if from != nil {
			cl.carried = c.head(from)
			if len(cl.carried) == 1 && cl.carried[0].kind == KindPerson {
				cl.carriedIssue = c.nearestIssue(from, from.end, cl.carried[0])
			}
		}
		if len(cl.carried) == 0 {
			continue
		}
		if m := rePronoun.FindStringSubmatchIndex(c.text[cl.start:cl.end]); m != nil {
			a, b := cl.start+m[2], cl.start+m[3]
			if len(cl.mentions) > 0 && c.mentions[cl.mentions[0]].start < b {
				continue
			}
			subs := cl.carried
			if w := strings.ToLower(c.text[a:b]); strings.HasPrefix(w, "it") && cl.carriedIssue != nil {
				// "it" is never a person: "Sven picked up #35. It …" is #35.
				subs = []*subject{cl.carriedIssue}
			}
			pm := mention{start: a, end: b, subj: subs[0], subs: subs, pronoun: true, clause: i, group: -1 - i}
			c.mentions = append(c.mentions, pm)
			cl.mentions = append([]int{len(c.mentions) - 1}, cl.mentions...)
		}
	}
}

// head is the first subject (or group) a clause mentions, or what it
// carries.
func (c *check) head(cl *clause) []*subject {
	for _, i := range cl.mentions {
		m := c.mentions[i]
		if m.modifier {
			continue
		}
		return c.groupOf(cl, m)
	}
	return cl.carried
}

func (c *check) groupOf(cl *clause, m mention) []*subject {
	if m.pronoun {
		return m.subs
	}
	var out []*subject
	for _, i := range cl.mentions {
		if o := c.mentions[i]; o.group == m.group && !slices.Contains(out, o.subj) {
			out = append(out, o.subj)
		}
	}
	return out
}

// readQualifiers finds the role word of each date: the nearest p10, p50,
// p80, p90 or due before it in its clause with no other date between, or
// right after it ("Dec 3 (p50)", "Dec 3 at p50").
func (c *check) readQualifiers() {
	quals := reQualifier.FindAllStringSubmatchIndex(c.text, -1)
	roleWord := map[string]roles{"p10": roleP10, "p50": roleP50, "p80": roleP80, "p90": roleP90, "due": roleDue}
	isDate := func(cl claim) bool {
		switch cl.tok.kind {
		case tokDate, tokAmbiguousDate, tokWeekday, tokRelative:
			return cl.late == nil && cl.status.kind == statusNone && cl.bad == ""
		}
		return false
	}
	word := func(q []int) roles { return roleWord[strings.ToLower(c.text[q[2]:q[3]])] }
	prevDate := -1
	for i := range c.claims {
		cl := &c.claims[i]
		if !isDate(*cl) {
			continue
		}
		span := c.clauses[cl.clause]
		var before, after []int // the nearest qualifiers around the date, in its clause
		for _, q := range quals {
			if q[1] <= cl.tok.start && q[0] >= span.start {
				before = q
			}
			if q[0] >= cl.tok.end && q[0] < span.end && after == nil {
				after = q
			}
		}
		var prev *claim
		if prevDate >= 0 && c.claims[prevDate].clause == cl.clause {
			prev = &c.claims[prevDate]
		}
		prevDate = i
		switch {
		// "p50 Dec 3", "due: Dec 3".
		case before != nil && reAdjacentBefore.MatchString(c.text[before[1]:cl.tok.start]):
			cl.role = word(before)
		// "Dec 3 (p50)", "Dec 3 at p50".
		case after != nil && reAdjacentAfter.MatchString(c.text[cl.tok.end:after[0]]):
			cl.role = word(after)
		// "p50 Dec 3 -> Dec 5": the second is a p50 too.
		case prev != nil && reChain.MatchString(c.text[prev.tok.end:cl.tok.start]):
			cl.role = prev.role
		// "At p80, Beta ships on Dec 3", with no other date between.
		case before != nil && (prev == nil || prev.tok.end <= before[0]):
			cl.role = word(before)
		}
	}
}

// scope is one place a claim's value may come from.
type scope struct {
	vals *values
	all  []*subject // a group: every member must have the value
	subj []*subject // what the scope is of, for status words and messages
}

func (c *check) subjectScopes(subs []*subject) []scope {
	var out []scope
	if len(subs) == 1 {
		out = append(out, scope{vals: &subs[0].values, subj: subs})
	} else if len(subs) > 1 {
		out = append(out, scope{all: subs, subj: subs})
	}
	// Objects that list them all: a cause's hours, a blocker's count.
	var nums []int64
	for _, s := range subs {
		if s.kind != KindIssue {
			return out
		}
		nums = append(nums, s.number)
	}
	for gi := range c.f.groups {
		g := &c.f.groups[gi]
		if !slices.ContainsFunc(nums, func(n int64) bool { return !slices.Contains(g.members, n) }) {
			out = append(out, scope{vals: &g.values, subj: subs})
		}
	}
	return out
}

// nearestIssue is the issue a person's claim is about: the nearest issue
// mention before pos in the clause ("#53 Schema (elif): idle 4 days"),
// else the nearest after it, the person's own first ("Tomorrow Bruno
// finishes #432").
func (c *check) nearestIssue(cl *clause, pos int, person *subject) *subject {
	var before, after *subject
	afterOwn, afterDist := false, math.MaxInt
	for _, i := range cl.mentions {
		m := c.mentions[i]
		if m.subj.kind != KindIssue {
			continue
		}
		if m.end <= pos {
			before = m.subj
			continue
		}
		dist := m.start - pos
		own := m.subj.owner == person
		if (own && !afterOwn) || (own == afterOwn && dist < afterDist) {
			after, afterOwn, afterDist = m.subj, own, dist
		}
	}
	if before != nil {
		return before
	}
	return after
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// bind returns where a claim's value may come from, and the subjects it
// is said of (nil: the whole).
func (c *check) bind(cl claim) ([]scope, []*subject) {
	clause := &c.clauses[cl.clause]
	var prev, next *mention
	for _, i := range clause.mentions {
		m := &c.mentions[i]
		if m.modifier {
			continue
		}
		if m.end <= cl.tok.start {
			prev = m
		} else if next == nil && m.start >= cl.tok.end {
			next = m
		}
	}
	withPerson := func(subs []*subject, pos int) []scope {
		out := c.subjectScopes(subs)
		if len(subs) == 1 && subs[0].kind == KindPerson {
			is := c.nearestIssue(clause, pos, subs[0])
			if is == nil {
				is = clause.carriedIssue
			}
			if is != nil {
				out = append(out, c.subjectScopes([]*subject{is})...)
			}
		}
		return out
	}
	global := scope{vals: &c.f.global}
	switch {
	case prev != nil:
		subs := c.groupOf(clause, *prev)
		out := withPerson(subs, cl.tok.start)
		if c.frame(cl, false) {
			out = append(out, global)
		}
		return out, subs
	case next != nil:
		subs := c.groupOf(clause, *next)
		out := withPerson(subs, cl.tok.end)
		if c.frame(cl, true) {
			out = append([]scope{global}, out...)
		}
		return out, subs
	case len(clause.mentions) == 0 && len(clause.carried) > 0 &&
		!((cl.status.kind != statusNone || cl.late != nil) && reQuantifier.MatchString(c.text[clause.start:cl.tok.start])):
		// A status word after "all", "everything", "else" is said of
		// every milestone, not of the subject before.
		return append([]scope{global}, withPerson(clause.carried, cl.tok.start)...), clause.carried
	}
	return []scope{global}, nil
}

// frame reports whether a date sets the time of its clause ("Since Nov
// 30, v1.0 slipped", "v1.0 slipped since Monday"; "From Monday, …" before
// any subject): then it may be a date of the whole.
func (c *check) frame(cl claim, leading bool) bool {
	switch cl.tok.kind {
	case tokDate, tokAmbiguousDate, tokWeekday, tokRelative:
		before := strings.ToLower(c.text[max(0, cl.tok.start-12):cl.tok.start])
		return reFrame.MatchString(before) || (leading && reLeadingFrame.MatchString(before))
	}
	return false
}

// verify checks one claim; when it fails, it says why.
func (c *check) verify(cl claim) (Problem, bool) {
	p := Problem{Text: cl.tok.text, Reason: ReasonUngrounded}
	if cl.bad != "" {
		p.Reason = cl.bad
		return p, false
	}
	scopes, subs := c.bind(cl)
	if len(subs) > 0 {
		labels := make([]string, len(subs))
		for i, s := range subs {
			labels[i] = s.label()
		}
		p.Subject = strings.Join(labels, ", ")
	}
	if cl.late != nil && cl.late.fromToday {
		// "in 8 working days" is a date that far ahead, or a duration of
		// the subject ("has not moved in 8 working days").
		unit := unitDays
		if cl.late.weeks {
			unit = unitWeeks
		}
		n := token{kind: tokNumber, value: cl.late.n, decimals: decimals(cl.late.n)}
		for _, s := range scopes {
			if (cl.late.ahead && c.fromToday(s, *cl.late)) || (s.vals != nil && s.vals.groundsNumber(n, unit)) {
				return p, true
			}
		}
		return p, false
	}
	if cl.status.kind != statusNone || cl.late != nil {
		ms := c.milestonesFor(cl, subs)
		if len(ms) == 0 {
			// "No milestone is at risk" with none to check holds; "all
			// work is on track" with none to check says nothing true.
			p.Reason = ReasonStatus
			return p, cl.status.negated && len(subs) == 0
		}
		for _, m := range ms {
			var ok bool
			if cl.late != nil {
				ok = lateness(m, *cl.late)
			} else {
				ok = status(m, cl.status.kind)
				if cl.status.negated {
					ok = verifiable(m, cl.status.kind) && !ok
				}
			}
			if !ok {
				p.Reason, p.Subject = ReasonStatus, m.label()
				return p, false
			}
		}
		return p, true
	}
	switch cl.tok.kind {
	case tokIdent:
		return p, c.f.idents[strings.ToLower(cl.tok.text)] || quantileNames[strings.ToLower(cl.tok.text)]
	case tokClock:
		return p, c.f.clocks[cl.tok.text]
	case tokRelative:
		if c.f.today == (civilDate{}) {
			return p, true
		}
	}
	if cl.to != nil {
		// "slipped 2 working days to Dec 4": one percentile moved that
		// far, to that date.
		for _, sc := range scopes {
			for _, s := range sc.subj {
				for _, mv := range s.moves {
					if math.Abs(math.Abs(mv.days)-cl.tok.value) < 1e-9 && dateIs(*cl.to, mv.after) {
						return p, true
					}
				}
			}
		}
		return p, false
	}
	if cl.unit == unitShare {
		// "#46 is on the critical chain of v3.1 in 55% of trials": a share
		// of trials is an issue's place on a chain, whichever subject the
		// clause names last.
		clause := &c.clauses[cl.clause]
		for _, i := range clause.mentions {
			if m := c.mentions[i]; m.subj.kind == KindIssue && m.end <= cl.tok.start {
				scopes = append(scopes, scope{vals: &m.subj.values, subj: []*subject{m.subj}})
			}
		}
	}
	if cl.unit == unitMore {
		// "and 3 more" after a person's issues is the person's count: a
		// list's holder has what the list left out.
		for _, sc := range scopes {
			for _, s := range sc.subj {
				for _, h := range []*subject{s.owner, s.milestone} {
					if h != nil {
						scopes = append(scopes, scope{vals: &h.values, subj: []*subject{h}})
					}
				}
			}
		}
	}
	for _, s := range scopes {
		if c.grounds(s, cl) {
			return p, true
		}
	}
	// Said of the wrong subject, or of nothing at all?
	for _, s := range c.allScopes() {
		if c.grounds(s, cl) {
			p.Reason = ReasonWrongSubject
			break
		}
	}
	return p, false
}

func (c *check) allScopes() []scope {
	out := []scope{{vals: &c.f.global}}
	for _, s := range c.f.issues {
		out = append(out, scope{vals: &s.values})
	}
	for _, s := range c.f.milestones {
		out = append(out, scope{vals: &s.values})
	}
	for _, s := range c.f.people {
		out = append(out, scope{vals: &s.values})
	}
	for i := range c.f.groups {
		out = append(out, scope{vals: &c.f.groups[i].values})
	}
	return out
}

// milestonesFor resolves the milestones a status word or lateness is said
// of: the subject's, or the milestone mentioned in the clause, or every
// milestone (but those named before, for "else") when the clause names
// nothing.
func (c *check) milestonesFor(cl claim, subs []*subject) []*subject {
	var out []*subject
	for _, s := range subs {
		if s.kind == KindMilestone {
			out = append(out, s)
		}
	}
	if len(out) > 0 {
		return out
	}
	clause := &c.clauses[cl.clause]
	bestDist := math.MaxInt
	for _, i := range clause.mentions {
		m := c.mentions[i]
		if d := min(abs(m.start-cl.tok.start), abs(m.end-cl.tok.start)); m.subj.kind == KindMilestone && d < bestDist {
			out, bestDist = []*subject{m.subj}, d
		}
	}
	if len(out) > 0 || len(subs) > 0 {
		return out
	}
	named := map[*subject]bool{}
	if cl.status.others {
		for _, m := range c.mentions {
			if m.start < cl.tok.start {
				named[m.subj] = true
			}
		}
	}
	for _, m := range c.f.milestones {
		if (m.chance != nil || m.slack != nil) && !named[m] {
			out = append(out, m)
		}
	}
	return out
}

// verifiable reports whether the milestone has what the status word needs.
func verifiable(m *subject, k statusKind) bool {
	switch k {
	case statusSlipped, statusEarlier:
		return len(m.shifts) > 0 || m.chance != nil || m.slack != nil
	case statusLate:
		return m.chance != nil || (m.p50 != civilDate{} && m.due != civilDate{})
	}
	return m.chance != nil || m.slack != nil
}

func status(m *subject, k statusKind) bool {
	if !verifiable(m, k) {
		return false
	}
	onTrack := (m.slack == nil || *m.slack >= 0) && (m.chance == nil || *m.chance >= 0.8)
	switch k {
	case statusOnTrack:
		return onTrack
	case statusAtRisk:
		return !onTrack
	case statusLate:
		if m.chance != nil {
			return *m.chance < 0.5
		}
		return m.p50.after(m.due)
	case statusAhead:
		return m.slack != nil && *m.slack > 0 && m.chance != nil && *m.chance >= 0.9
	case statusSlipped, statusEarlier:
		if len(m.shifts) == 0 {
			return k == statusSlipped && !onTrack
		}
		for _, s := range m.shifts {
			if (k == statusSlipped && s > 0) || (k == statusEarlier && s < 0) {
				return true
			}
		}
	}
	return false
}

func decimals(x float64) int {
	for d := 0; d < 6; d++ {
		if p := math.Pow(10, float64(d)); math.Round(x*p) == x*p {
			return d
		}
	}
	return 6
}

// fromToday checks "in two weeks" against the scope's dates.
func (c *check) fromToday(s scope, l latenessClaim) bool {
	if len(s.all) > 0 {
		for _, m := range s.all {
			if !c.fromToday(scope{vals: &m.values}, l) {
				return false
			}
		}
		return true
	}
	for d, r := range s.vals.dates {
		if r&roleNow == 0 {
			continue
		}
		days := d.sub(c.f.today)
		switch {
		case days <= 0:
		case l.weeks && math.Round(days/7) == l.n:
			return true
		case l.work && workingDaysBetween(c.f.today, d) == l.n:
			return true
		case !l.weeks && !l.work && days == l.n:
			return true
		}
	}
	return false
}

// lateness checks "N weeks late" against the due date and the p50.
func lateness(m *subject, l latenessClaim) bool {
	if m.due == (civilDate{}) || m.p50 == (civilDate{}) {
		return false
	}
	days := m.p50.sub(m.due)
	if (days > 0) == l.early || days == 0 {
		return false
	}
	work := workingDaysBetween(m.due, m.p50)
	days, work = math.Abs(days), math.Abs(work)
	eq := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	switch {
	case l.weeks:
		return eq(math.Round(days/7), l.n) || eq(math.Round(work/5), l.n)
	case l.work:
		return eq(work, l.n)
	}
	return eq(days, l.n) || eq(work, l.n)
}

func (c civilDate) time() time.Time { return time.Date(c.y, c.m, c.d, 12, 0, 0, 0, time.UTC) }

func (c civilDate) after(o civilDate) bool { return c.time().After(o.time()) }

// sub is c - o in days.
func (c civilDate) sub(o civilDate) float64 { return math.Round(c.time().Sub(o.time()).Hours() / 24) }

// workingDaysBetween counts Monday-to-Friday days from a to b, negative
// when b is before a.
func workingDaysBetween(a, b civilDate) float64 {
	sign := 1.0
	if b.time().Before(a.time()) {
		a, b, sign = b, a, -1
	}
	n := 0
	for d := a.time(); d.Before(b.time()); d = d.AddDate(0, 0, 1) {
		if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday {
			n++
		}
	}
	return sign * float64(n)
}

// grounds reports whether scope s holds the claim's value.
func (c *check) grounds(s scope, cl claim) bool {
	if len(s.all) > 0 {
		for _, m := range s.all {
			if !c.grounds(scope{vals: &m.values}, cl) {
				return false
			}
		}
		return true
	}
	v := s.vals
	t := cl.tok
	role := cl.role
	if role == roleDue && len(s.subj) == 1 && s.subj[0].kind == KindIssue && s.subj[0].due == (civilDate{}) {
		// An issue has no due date of its own: "due tomorrow" is its
		// forecast.
		role |= roleP50
	}
	hasRole := func(r roles) bool {
		if r&roleNow == 0 && (r&rolePrev == 0 || !cl.prev) {
			return false // only a date things moved from, and not said so
		}
		return role == 0 || r&role != 0
	}
	switch t.kind {
	case tokNumber:
		if cl.list != "" && (v == &c.f.global || cl.noun == "") {
			return slices.Contains(c.f.lists[cl.list], t.value)
		}
		if cl.noun != "" && len(s.subj) == 1 && v == &s.subj[0].values {
			// "24 open issues" of a subject is its "open", not any count.
			return slices.Contains(s.subj[0].counts[cl.noun], t.value)
		}
		if cl.weeks {
			for x, u := range v.numbers {
				if u&unitDays != 0 && math.Round(x/5) == t.value && x >= 5 {
					return true
				}
			}
		}
		return v.groundsNumber(t, cl.unit)
	case tokDate:
		if t.year == 0 {
			return hasRole(v.monthDays[[2]int{int(t.month), t.day}]) && v.hasMonthDay(t.month, t.day)
		}
		if r, ok := v.dates[civilDate{t.year, t.month, t.day}]; ok && hasRole(r) {
			return true
		}
		// 03/04/2026 reads either way round.
		r, ok := v.dates[civilDate{t.year, time.Month(t.day), int(t.month)}]
		return t.swappable && ok && hasRole(r)
	case tokAmbiguousDate:
		for _, md := range [][2]int{{int(t.month), t.day}, {t.day, int(t.month)}} {
			if r, ok := v.monthDays[md]; ok && hasRole(r) {
				return true
			}
		}
		return false
	case tokWeekday:
		for d, r := range v.dates {
			if d.time().Weekday() != t.weekday || !hasRole(r) {
				continue
			}
			if c.f.today == (civilDate{}) || math.Abs(d.sub(c.f.today)) <= 6 {
				return true
			}
		}
		return false
	case tokRelative:
		from, to := c.f.span(t.text)
		for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
			if r, ok := v.dates[civilOf(d)]; ok && hasRole(r) {
				return true
			}
		}
		return false
	}
	return false
}

// dateIs reports whether a date token names day.
func dateIs(t token, day civilDate) bool {
	switch {
	case t.kind == tokDate && t.year == 0:
		return t.month == day.m && t.day == day.d
	case t.kind == tokDate:
		return civilDate{t.year, t.month, t.day} == day || (t.swappable && civilDate{t.year, time.Month(t.day), int(t.month)} == day)
	case t.kind == tokAmbiguousDate:
		return (t.month == day.m && t.day == day.d) || (time.Month(t.day) == day.m && int(t.month) == day.d)
	}
	return false
}

func (v *values) hasMonthDay(m time.Month, d int) bool {
	_, ok := v.monthDays[[2]int{int(m), d}]
	return ok
}

// span is the days a relative date names, counted from today.
func (f *Facts) span(text string) (time.Time, time.Time) {
	day := func(n int) time.Time { return time.Date(f.today.y, f.today.m, f.today.d+n, 12, 0, 0, 0, time.UTC) }
	words := strings.Fields(strings.ToLower(text))
	switch words[0] {
	case "tomorrow":
		return day(1), day(1)
	case "yesterday":
		return day(-1), day(-1)
	}
	shift := map[string]int{"this": 0, "next": 1, "last": -1}[words[0]]
	if words[1] == "week" {
		monday := -((int(day(0).Weekday()) + 6) % 7)
		return day(monday + 7*shift), day(monday + 7*shift + 6)
	}
	from := time.Date(f.today.y, f.today.m+time.Month(shift), 1, 12, 0, 0, 0, time.UTC)
	return from, from.AddDate(0, 1, -1)
}

func (v *values) groundsNumber(t token, unit units) bool {
	want := math.Abs(t.value)
	scale := math.Pow(10, float64(t.decimals))
	round := func(x float64) float64 { return math.Round(x*scale) / scale }
	for x, u := range v.numbers {
		if u&unit == 0 {
			continue
		}
		if t.percent {
			// 85% is a fraction's 0.853, or a percentage's 85.
			if (u&(unitFraction|unitChance) != 0 || (u&unitPlain != 0 && x <= 1)) && round(x*100) == want {
				return true
			}
			if u&unitPercent == 0 {
				continue
			}
		}
		if x == want || round(x) == want {
			return true
		}
	}
	return false
}
