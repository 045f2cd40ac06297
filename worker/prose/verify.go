package prose

import (
	"math"
	"slices"
	"strings"
	"time"
)

// Verifying a claim: where its value may come from (bind) and whether it
// is there (grounds), status words and lateness against the forecast.

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
