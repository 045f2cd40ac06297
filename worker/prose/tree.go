package prose

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"time"
)

// roles are what a date is of a subject; a date without a role word in
// the data has none.
type roles uint8

const (
	roleP10 roles = 1 << iota
	roleP50
	roleP80
	roleP90
	roleDue
	// rolePrev marks a date that was the role's before a move
	// ("p50Before"); roleNow any other.
	rolePrev
	roleNow
)

// roleOf reads a role from an object key: "p50", "p50After", "freeFromP50",
// "due", "dueOn".
func roleOf(key string) roles {
	k := strings.ToLower(key)
	switch {
	case strings.Contains(k, "p10"):
		return roleP10
	case strings.Contains(k, "p50"):
		return roleP50
	case strings.Contains(k, "p80"):
		return roleP80
	case strings.Contains(k, "p90"):
		return roleP90
	case strings.HasPrefix(k, "due"):
		return roleDue
	}
	return 0
}

// timeOf is rolePrev for a date a key says was before a move, roleNow
// otherwise.
func timeOf(key string) roles {
	if strings.HasSuffix(strings.ToLower(key), "before") {
		return rolePrev
	}
	return roleNow
}

// units are what a number counts, read from its key: "idleDays",
// "slack" and "p50Days" are days, "hours" hours, "pDue" a fraction. A
// number written with a unit ("4.5 working days", "11 h") matches only a
// value of that unit.
type units uint16

const (
	unitDays units = 1 << iota
	unitHours
	unitWeeks
	unitFraction
	// unitMore counts what a capped list left out ("and 2 more").
	unitMore
	// unitPlain is a number of nothing in particular: a count.
	unitPlain
	// unitShift is a move in days ("p50Days"); unitPercent a percentage;
	// unitChance the chance of a due date; unitShare a share of trials
	// (an issue's place on a critical chain).
	unitShift
	unitPercent
	unitChance
	unitShare
)

func unitOf(key string) units {
	k := strings.ToLower(key)
	switch {
	case strings.HasPrefix(k, "more"):
		return unitMore
	case k == "p50days" || k == "p80days" || k == "shiftdays" || k == "moveddays":
		return unitDays | unitShift
	case strings.Contains(k, "percent") || strings.Contains(k, "pct"):
		return unitPercent
	case strings.Contains(k, "day") || k == "slack":
		return unitDays
	case strings.Contains(k, "hour"):
		return unitHours
	case strings.Contains(k, "week"):
		return unitWeeks
	case k == "pdue" || k == "chance" || k == "probability":
		return unitFraction | unitChance
	case k == "share" || k == "criticalfreq":
		return unitFraction | unitShare
	}
	return unitPlain
}

// values are the numbers and dates of a subject, a list's holder or the
// whole.
type values struct {
	numbers   map[float64]units // absolute values
	dates     map[civilDate]roles
	monthDays map[[2]int]roles // dates written without a year
}

func newValues() values {
	return values{numbers: map[float64]units{}, dates: map[civilDate]roles{}, monthDays: map[[2]int]roles{}}
}

func (v *values) addNumber(x float64, u units) { v.numbers[math.Abs(x)] |= u }

func (v *values) addDate(c civilDate, r roles) {
	v.dates[c] |= r
	v.monthDays[[2]int{int(c.m), c.d}] |= r
}

func (v *values) addMonthDay(m time.Month, d int, r roles) { v.monthDays[[2]int{int(m), d}] |= r }

func (v *values) merge(o values) {
	for x, u := range o.numbers {
		v.numbers[x] |= u
	}
	for c, r := range o.dates {
		v.dates[c] |= r
	}
	for md, r := range o.monthDays {
		v.monthDays[md] |= r
	}
}

// subject is an issue, a milestone or a person.
type subject struct {
	kind   Kind
	number int64  // issue
	id     int64  // milestone, when the data gives one
	title  string // issue or milestone title, person's login
	values
	// What a milestone's status words are checked against.
	chance, slack *float64
	shifts        []float64
	due, p50, p80 civilDate
	owner         *subject // an issue's person
	milestone     *subject // an issue's milestone
	inData        bool
	// counts are the subject's plain numbers by their key in words ("open"
	// for "open", "stale blockers" for a list's length), for counts named
	// by the words after them ("24 open issues").
	counts map[string][]float64
	// moves pair a drift's days with where it moved to: p50Days with
	// p50After, p80Days with p80After.
	moves []move
}

// move is one percentile's drift: days moved (signed) and the date after.
type move struct {
	days  float64
	after civilDate
}

func (s *subject) count(phrase string, x float64) {
	if s.counts == nil {
		s.counts = map[string][]float64{}
	}
	s.counts[phrase] = append(s.counts[phrase], x)
}

func (s *subject) ref() Ref {
	if s.kind == KindIssue {
		return Ref{Kind: KindIssue, Number: s.number, Name: s.title}
	}
	return Ref{Kind: s.kind, Name: s.title}
}

func (s *subject) label() string { return s.ref().String() }

// refGroup is an object that lists issues (by number, or as objects of
// their own in a list of it): a claim said of all of them together may be
// one of its values. An object that is a subject itself lends only its
// counts: "#12 blocks #13, #14 and 2 more", not #12's dates.
type refGroup struct {
	members []int64
	values  values
}

func (f *Facts) issue(n int64) *subject {
	s := f.issues[n]
	if s == nil {
		s = &subject{kind: KindIssue, number: n, values: newValues()}
		f.issues[n] = s
	}
	return s
}

func (f *Facts) person(login string) *subject {
	k := strings.ToLower(login)
	s := f.people[k]
	if s == nil {
		s = &subject{kind: KindPerson, title: login, values: newValues()}
		f.people[k] = s
	}
	return s
}

// milestone finds a milestone by id (when not 0) or title, or adds it.
func (f *Facts) milestone(id int64, title string) *subject {
	for _, m := range f.milestones {
		if (id != 0 && m.id == id) || (title != "" && strings.EqualFold(m.title, title)) {
			if m.id == 0 {
				m.id = id
			}
			if m.title == "" {
				m.title = title
			}
			return m
		}
	}
	m := &subject{kind: KindMilestone, id: id, title: title, values: newValues()}
	f.milestones = append(f.milestones, m)
	return m
}

// resolve relates issues to milestones seen by id only.
func (f *Facts) resolve() {
	for is, id := range f.pendingMilestone {
		for _, m := range f.milestones {
			if m.id == id {
				is.milestone = m
				delete(f.pendingMilestone, is)
			}
		}
	}
}

// refKeys are the keys whose lists of integers are issue numbers.
var refKeys = map[string]bool{"issues": true, "blocks": true, "blockedby": true, "dependson": true, "dependsonother": true,
	"cites": true, "added": true, "removed": true, "done": true, "open": true, "criticalchain": true, "critical": true, "waitsfor": true}

// personKeys are the keys of an issue whose string is its person's login.
var personKeys = map[string]bool{"assignee": true, "scheduledfor": true, "owner": true}

// walker walks one decoded JSON value.
type walker struct {
	f *Facts
	// node collects the values of the object being walked, for the lists
	// of issues it holds.
	node *values
	// holder is true when that object is a subject's own, or the whole.
	holder bool
	// capped are the keys of lists whose full count is beside them.
	capped map[string]bool
	// top is true for the outermost value: the whole lists every subject,
	// it is no group.
	top bool
	// detail is true below an object that is not a subject (a cause, a
	// stats block): subjects there are details, not items.
	detail bool
}

func intOf(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

// identify returns the subject an object is, or nil.
func (w *walker) identify(m map[string]any) *subject {
	title, _ := m["title"].(string)
	if n, ok := intOf(m["number"]); ok {
		s := w.f.issue(n)
		if s.title == "" {
			s.title = title
		}
		return s
	}
	if n, ok := intOf(m["issue"]); ok {
		s := w.f.issue(n)
		if s.title == "" {
			s.title = title
		}
		return s
	}
	for _, k := range []string{"login", "who"} {
		if l, ok := m[k].(string); ok && strings.TrimSpace(l) != "" {
			return w.f.person(l)
		}
	}
	if title != "" {
		for _, k := range []string{"milestone", "id"} {
			if id, ok := intOf(m[k]); ok {
				return w.f.milestone(id, title)
			}
		}
	}
	return nil
}

// identityKeys are the keys that name a subject of the kind rather than
// state something about it.
func identityKey(k Kind, key string) bool {
	switch k {
	case KindIssue:
		return key == "number" || key == "issue" || key == "title"
	case KindPerson:
		return key == "login" || key == "who"
	case KindMilestone:
		return key == "milestone" || key == "id" || key == "title"
	}
	return false
}

// relate records that child was found inside parent's object.
func relate(child, parent *subject) {
	if parent == nil || child == parent {
		return
	}
	switch {
	case child.kind == KindIssue && parent.kind == KindPerson && child.owner == nil:
		child.owner = parent
	case child.kind == KindIssue && parent.kind == KindMilestone && child.milestone == nil:
		child.milestone = parent
	case child.kind == KindMilestone && parent.kind == KindIssue && parent.milestone == nil:
		parent.milestone = child
	}
}

// object walks one object; into collects the values of the subject (or the
// whole) it belongs to.
func (w *walker) object(m map[string]any, into *values, subj *subject) *subject {
	self := w.identify(m)
	if self != nil {
		relate(self, subj)
		if !self.inData && !w.detail {
			self.inData = true
			w.f.order = append(w.f.order, self)
		}
		into, subj = &self.values, self
	}
	local := newValues()
	keys := make([]string, 0, len(m))
	capped := map[string]bool{}
	for k := range m {
		keys = append(keys, k)
		if _, ok := m[k+"Count"]; ok {
			capped[k] = true
		}
	}
	slices.Sort(keys)
	inner := walker{f: w.f, node: &local, holder: self != nil || subj == nil, capped: capped,
		detail: w.detail || (self == nil && !w.top)}
	top := w.top
	var members, refs []int64
	for _, k := range keys {
		if self != nil && identityKey(self.kind, k) {
			continue
		}
		got := inner.value(k, m[k], into, subj)
		members = append(members, got...)
		if list, ok := m[k].([]any); ok && len(list) > 0 && len(got) == len(list) && refKeys[strings.ToLower(k)] {
			if _, isInt := intOf(list[0]); isInt {
				refs = append(refs, got...)
			}
		}
	}
	// A drift's moves: "p50Days" with "p50After".
	if subj != nil {
		for _, role := range []string{"p50", "p80", "p10", "p90"} {
			days, ok := m[role+"Days"].(json.Number)
			after, ok2 := m[role+"After"].(string)
			if !ok || !ok2 {
				continue
			}
			x, err := days.Float64()
			t, perr := time.Parse(time.DateOnly, after)
			if err == nil && perr == nil {
				subj.moves = append(subj.moves, move{days: x, after: civilOf(t)})
			}
		}
	}
	// The count beyond a capped list: "blocksCount" less len("blocks").
	for _, k := range keys {
		list, ok := m[k].([]any)
		if !ok {
			continue
		}
		if c, ok := intOf(m[k+"Count"]); ok && c > int64(len(list)) {
			more := float64(c - int64(len(list)))
			into.addNumber(more, unitMore)
			local.addNumber(more, unitMore)
		}
	}
	switch {
	case top:
	case self == nil && len(members) > 0:
		w.f.groups = append(w.f.groups, refGroup{members: members, values: local})
	case self != nil && len(refs) > 0:
		// A subject lends the issues it lists only what its lists left
		// out: "#12 blocks #13, #14 and 2 more", not #12's own values.
		g := refGroup{members: refs, values: newValues()}
		for x, u := range local.numbers {
			if u&unitMore != 0 {
				g.values.addNumber(x, unitMore)
			}
		}
		w.f.groups = append(w.f.groups, g)
	}
	return self
}

// value walks the value found at key; it returns the issues a list there
// names, for the object holding it.
func (w *walker) value(key string, v any, into *values, subj *subject) []int64 {
	lower := strings.ToLower(key)
	switch v := v.(type) {
	case map[string]any:
		if s := w.object(v, into, subj); s != nil && s.kind == KindIssue {
			return []int64{s.number}
		}
	case []any:
		// A list's length is a value of the object holding it, when that
		// is the subject itself (or the whole): "bruno has 2 issues in
		// progress", not "v1.0 has 3 open issues" from its cause's list.
		// A capped list ("blocks" beside "blocksCount") counts nothing,
		// and only lists of subjects count.
		if !w.capped[key] && listOfSubjects(v) {
			if phrase := keyWords(key); phrase != "" && phrase != "issues" && len(phrase) > 3 {
				if subj == nil {
					w.f.lists[phrase] = append(w.f.lists[phrase], float64(len(v)))
				} else if w.holder {
					subj.count(phrase, float64(len(v)))
					w.f.countPhrases[phrase] = true
				}
			}
			w.node.addNumber(float64(len(v)), unitPlain)
			if w.holder {
				into.addNumber(float64(len(v)), unitPlain)
			}
		}
		var members []int64
		allInts := len(v) > 0
		for _, x := range v {
			if _, ok := intOf(x); !ok {
				allInts = false
			}
		}
		if allInts && refKeys[lower] {
			for _, x := range v {
				n, _ := intOf(x)
				w.f.issue(n)
				members = append(members, n)
			}
			return members
		}
		for _, x := range v {
			members = append(members, w.value(key, x, into, subj)...)
		}
		return members
	case json.Number:
		x, err := v.Float64()
		if err != nil {
			return nil
		}
		if subj != nil && subj.kind == KindIssue && lower == "milestone" {
			// An issue's milestone id relates, it states nothing.
			if id, ok := intOf(v); ok {
				w.f.pendingMilestone[subj] = id
			}
			return nil
		}
		into.addNumber(x, unitOf(key))
		w.node.addNumber(x, unitOf(key))
		if phrase := keyWords(key); subj != nil && unitOf(key) == unitPlain && len(phrase) >= 3 {
			subj.count(phrase, x)
			w.f.countPhrases[phrase] = true
		}
		if subj != nil {
			switch lower {
			case "pdue", "chance", "probability":
				subj.chance = &x
			case "slack", "slackdays":
				subj.slack = &x
			case "p50days", "p80days":
				subj.shifts = append(subj.shifts, x)
			}
		}
	case string:
		w.text(key, v, into, subj)
	}
	return nil
}

// keyWords spells a camelCase key as lower-case words: "staleBlockers" is
// "stale blockers".
func keyWords(key string) string {
	var b strings.Builder
	for i, r := range key {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte(' ')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// listOfSubjects reports whether a list holds issue numbers or subjects'
// objects.
func listOfSubjects(v []any) bool {
	if len(v) == 0 {
		return true
	}
	if _, ok := intOf(v[0]); ok {
		return true
	}
	m, ok := v[0].(map[string]any)
	if !ok {
		return false
	}
	_, number := intOf(m["number"])
	_, issue := intOf(m["issue"])
	_, login := m["login"].(string)
	_, title := m["title"].(string)
	_, milestone := intOf(m["milestone"])
	_, id := intOf(m["id"])
	return number || issue || login || (title && (milestone || id))
}

// text adds what a string states.
func (w *walker) text(key, s string, into *values, subj *subject) {
	lower := strings.ToLower(key)
	if subj != nil {
		if lower == "title" && subj.title == "" && subj.kind != KindPerson {
			subj.title = s // a title in an object of the subject's (an issue's intent)
			return
		}
		if personKeys[lower] && subj.kind == KindIssue {
			if strings.TrimSpace(s) != "" {
				p := w.f.person(s)
				if subj.owner == nil {
					subj.owner = p
				}
			}
			return
		}
	}
	r := roleOf(key) | timeOf(key)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		w.date(civilOf(t.In(w.f.loc)), r, into, subj, lower)
		return
	}
	for _, tok := range scan(s, nil) {
		switch tok.kind {
		case tokDate:
			if tok.year == 0 {
				into.addMonthDay(tok.month, tok.day, r)
				w.node.addMonthDay(tok.month, tok.day, r)
				continue
			}
			w.date(civilDate{tok.year, tok.month, tok.day}, r, into, subj, lower)
		case tokClock:
			w.f.clocks[tok.text] = true
		case tokIdent:
			w.f.idents[strings.ToLower(tok.text)] = true
		case tokNumber:
			into.addNumber(tok.value, unitPlain)
			w.node.addNumber(tok.value, unitPlain)
		}
	}
}

func (w *walker) date(c civilDate, r roles, into *values, subj *subject, key string) {
	into.addDate(c, r)
	w.node.addDate(c, r)
	if subj == nil {
		return
	}
	set := func(d *civilDate) {
		if *d == (civilDate{}) {
			*d = c
		}
	}
	switch key {
	case "due":
		set(&subj.due)
	case "p50", "p50after":
		set(&subj.p50)
	case "p80", "p80after":
		set(&subj.p80)
	}
}
