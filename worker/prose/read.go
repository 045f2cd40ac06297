package prose

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Reading a text: the mentions of subjects, the claims, the clauses, and
// what binds them (see the package comment).

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
	used     []bool // what was read already, byte by byte
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
	c := &check{f: f, text: text, used: make([]bool, len(text))}
	c.readMentions()
	// Durations and status words before numbers: "three weeks late" is
	// one claim, not the number three.
	c.readDurations()
	c.readStatusWords()
	c.readScanned()
	slices.SortFunc(c.claims, func(a, b claim) int { return a.tok.start - b.tok.start })
	c.dropWeekdaysOfDates()
	c.pairMoves()

	c.clauses = c.splitClauses()
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

// mark records that text[a:b] was read; free reports whether none of it
// was.
func (c *check) mark(a, b int) {
	for i := a; i < b; i++ {
		c.used[i] = true
	}
}

func (c *check) free(a, b int) bool { return !slices.Contains(c.used[a:b], true) }

// readMentions finds the subjects the text names: issue numbers first
// (they are unambiguous), then @logins, then names, the longest first.
func (c *check) readMentions() {
	text, f := c.text, c.f
	for _, m := range reIssueRef.FindAllStringSubmatchIndex(text, -1) {
		n, _ := strconv.ParseInt(text[m[2]:m[3]], 10, 64)
		c.mark(m[0], m[1])
		s := f.issues[n]
		if s == nil {
			c.claims = append(c.claims, claim{tok: token{text: text[m[0]:m[1]], start: m[0], end: m[1]}, bad: ReasonUnknownIssue})
			continue
		}
		c.mentions = append(c.mentions, mention{start: m[0], end: m[1], subj: s})
	}
	for _, m := range reAtLogin.FindAllStringSubmatchIndex(text, -1) {
		if p := f.people[strings.ToLower(text[m[2]:m[3]])]; p != nil && c.free(m[0], m[1]) {
			c.mark(m[0], m[1])
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
			if boundary(text, a, b) && c.free(a, b) {
				c.mark(a, b)
				c.mentions = append(c.mentions, mention{start: a, end: b, subj: n.subj})
			}
		}
	}
	slices.SortFunc(c.mentions, func(a, b mention) int { return a.start - b.start })
}

// countOf reads a number written in digits or words ("a week" is one).
func countOf(word string) float64 {
	word = strings.ToLower(word)
	if n, err := strconv.ParseFloat(word, 64); err == nil {
		return n
	}
	if word == "a" || word == "an" || word == "one" {
		return 1
	}
	return numberWords[word]
}

// readDurations finds lateness ("three weeks late") and durations from
// today ("in two weeks").
func (c *check) readDurations() {
	text := c.text
	for _, m := range reLateness.FindAllStringSubmatchIndex(text, -1) {
		if !c.free(m[0], m[1]) {
			continue
		}
		c.mark(m[0], m[1])
		unit := strings.ToLower(text[m[4]:m[5]])
		dir := strings.ToLower(text[m[6]:m[7]])
		lc := &latenessClaim{n: countOf(text[m[2]:m[3]]), weeks: strings.HasPrefix(unit, "week"), work: strings.Contains(unit, " "),
			early: strings.HasPrefix(dir, "early") || strings.HasPrefix(dir, "ahead") || strings.HasPrefix(dir, "before")}
		c.claims = append(c.claims, claim{tok: token{text: text[m[0]:m[1]], start: m[0], end: m[1]}, late: lc})
	}
	for _, m := range reFromToday.FindAllStringSubmatchIndex(text, -1) {
		if !c.free(m[0], m[1]) || c.f.today == (civilDate{}) {
			continue
		}
		c.mark(m[0], m[1])
		numAt, unitAt := 2, 4
		if m[2] < 0 {
			numAt, unitAt = 6, 8
		}
		unit := strings.ToLower(text[m[unitAt]:m[unitAt+1]])
		// "has not moved in 8 days" is a duration, never a date ahead.
		ahead := !reNegatedVerb.MatchString(text[max(0, m[0]-40):m[0]])
		lc := &latenessClaim{n: countOf(text[m[numAt]:m[numAt+1]]), weeks: strings.HasPrefix(unit, "week"), work: strings.Contains(unit, " "),
			fromToday: true, ahead: ahead}
		c.claims = append(c.claims, claim{tok: token{kind: tokRelative, text: text[m[0]:m[1]], start: m[0], end: m[1]}, late: lc})
	}
}

// readStatusWords finds "on track", "at risk" and the like, with their
// negations; a heading ("At risk:") is none.
func (c *check) readStatusWords() {
	text := c.text
	for _, m := range reStatus.FindAllStringIndex(text, -1) {
		if !c.free(m[0], m[1]) {
			continue
		}
		c.mark(m[0], m[1])
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
}

// readScanned takes the dates, numbers, clock times and words with digits
// left, with what the words around a number say it counts.
func (c *check) readScanned() {
	text, f := c.text, c.f
	for _, t := range scan(text, c.used) {
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
}

// pairMoves joins a move to the date it went to: "slipped 2 working days
// to Dec 4" is one claim.
func (c *check) pairMoves() {
	for i := range c.claims {
		cl := &c.claims[i]
		if cl.unit != unitShift || i+1 == len(c.claims) {
			continue
		}
		next := c.claims[i+1].tok
		if (next.kind == tokDate || next.kind == tokAmbiguousDate) && reMoveTo.MatchString(c.text[cl.tok.end:next.start]) {
			cl.to = &next
		}
	}
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
func (c *check) splitClauses() []clause {
	inToken := make([]bool, len(c.text))
	for _, cl := range c.claims {
		for i := cl.tok.start; i < cl.tok.end && i < len(inToken); i++ {
			inToken[i] = true
		}
	}
	for i := range c.used {
		inToken[i] = inToken[i] || c.used[i]
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
