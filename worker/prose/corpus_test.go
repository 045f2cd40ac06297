package prose_test

// The corpus: true and false sentences about generated projects, each
// labelled by how it was made, not by the checker. A project has random
// milestones (titles, due dates, forecasts, chances, open counts), people
// (logins, now/next issues with p50 dates) and stale blockers, in a random
// time zone on a random day; every template renders a sentence about one or
// two random subjects, once with their true values and once or more with a
// value made false (another subject's value of the same kind, a shifted
// value, the wrong status word). The sentence forms were written before the
// checker learned to bind claims to subjects, so that they describe how
// people and models phrase a standup, not what the checker handles.
//
// Labels follow the meanings package prose documents: a date next to a
// subject is that subject's date (a relative date or a weekday read from
// the standup's day in its time zone); a count is that subject's count;
// "on track" means p80 by the due date and at least an 80% chance, "at
// risk" the opposite, "late" under a 50% chance, "ahead of schedule" p80
// before the due date with at least a 90% chance; "N weeks late" counts
// calendar weeks from the due date to the p50.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/worker/prose"
)

type corpusSentence struct {
	text  string
	truth bool
	form  string // the template
	why   string // for false ones: what was made false
}

type cMilestone struct {
	id            int64
	title         string
	due, p50, p80 time.Time // local dates
	pDue          float64
	slack         float64 // working days, due - p80
	open          int
	drift         bool
	p50Before     time.Time
	p50Days       float64
}

type cIssue struct {
	number    int64
	title     string
	owner     string
	p50       time.Time // local date
	stamp     string    // the p50 as the data holds it (a date, or an RFC 3339 time in UTC)
	milestone int64
}

type cPerson struct {
	login    string
	now      []int64
	next     []int64
	moreNow  int
	finished []int64
}

type cStale struct {
	number int64
	idle   float64
	blocks []int64
	count  int
}

type cProject struct {
	seed       uint64
	loc        *time.Location
	today      time.Time // local midnight, a working day
	since      time.Time
	milestones []*cMilestone
	issues     map[int64]*cIssue
	people     []*cPerson
	stale      []*cStale
	scopeHours float64 // nominal hours of the first drift's scope_added cause
	scopeAdded []int64
	other      []int64 // issue numbers of the project outside the report
}

var (
	corpusLogins = []string{"amara", "bruno", "chen", "dev03", "elif", "farid", "grace", "hiro", "ines", "jonas", "kofi",
		"lena", "mateo", "nadia", "oskar", "priya", "quinn", "rosa", "sven", "tariq", "uma", "viktor", "wen", "yara", "qa-2"}
	corpusMilestones = [][]string{
		{"v1.0", "v1.2", "v2.0"},
		{"v1.0 Launch", "v1.1", "Payments v3"},
		{"Beta", "GA", "Mobile 2.1"},
		{"Q3 Billing", "Search revamp", "Onboarding"},
		{"2026.12 release", "2027.01 release", "Hardening"},
		{"Alpha", "Beta 2", "Launch"},
	}
	corpusTitles = []string{"Fix login redirect", "Export invoices as CSV", "Rate-limit the webhook receiver",
		"Upgrade to Go 1.26", "Add SSO via Keycloak", "Dark mode for the dashboard", "Retry failed emails",
		"Paginate the audit log", "Cache milestone forecasts", "Translate onboarding to German",
		"Support 2FA recovery codes", "Remove the legacy v1 API", "Speed up the board view", "Archive old projects",
		"Invoice PDF layout", "Webhook signature check", "Mobile push notifications", "Import from Jira",
		"Search by label", "Backup to S3", "Fix timezone bug in reports", "Add audit events for 3 admin actions",
		"Bulk edit of milestones", "Email digest settings", "Password reset flow", "Team permissions page",
		"Rename projects", "Usage chart", "Slack notifications", "API tokens UI", "Offline mode for mobile",
		"Sort the inbox", "Keyboard shortcuts", "Onboarding checklist", "CSV import of users", "Single-page checkout"}
	corpusZones = []string{"UTC", "Europe/Berlin", "America/Los_Angeles", "Asia/Tokyo", "America/Sao_Paulo", "Australia/Sydney"}
)

func date(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
}

func addDays(t time.Time, n int) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day()+n, 0, 0, 0, 0, t.Location())
}

func isWorkday(t time.Time) bool { return t.Weekday() != time.Saturday && t.Weekday() != time.Sunday }

// workingDays counts Monday-to-Friday days from a to b (negative when b is
// before a).
func workingDays(a, b time.Time) float64 {
	sign := 1.0
	if b.Before(a) {
		a, b, sign = b, a, -1
	}
	n := 0
	for d := a; d.Before(b); d = addDays(d, 1) {
		if isWorkday(d) {
			n++
		}
	}
	return sign * float64(n)
}

func newCorpusProject(seed uint64) *cProject {
	rng := rand.New(rand.NewPCG(seed, 18))
	loc, _ := time.LoadLocation(corpusZones[rng.IntN(len(corpusZones))])
	p := &cProject{seed: seed, loc: loc, issues: map[int64]*cIssue{}}
	p.today = time.Date(2026, time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 0, 0, 0, 0, loc)
	for !isWorkday(p.today) {
		p.today = addDays(p.today, 1)
	}
	p.since = addDays(p.today, -1)
	for !isWorkday(p.since) {
		p.since = addDays(p.since, -1)
	}

	used := map[int64]bool{}
	number := func() int64 {
		for {
			n := int64(10 + rng.IntN(990))
			if !used[n] {
				used[n] = true
				return n
			}
		}
	}
	titles := slices.Clone(corpusTitles)
	rng.Shuffle(len(titles), func(i, j int) { titles[i], titles[j] = titles[j], titles[i] })
	nextTitle := func() string { t := titles[0]; titles = titles[1:]; return t }

	// Milestones: one at risk or late, the others anything.
	names := corpusMilestones[rng.IntN(len(corpusMilestones))]
	for i, title := range names {
		m := &cMilestone{id: int64(i + 1), title: title}
		m.due = addDays(p.today, 5+rng.IntN(50))
		var p50off, p80off int
		mode := rng.IntN(4)
		if i == 0 {
			mode = 2 + rng.IntN(2)
		}
		switch mode {
		case 0: // comfortably ahead
			p80off = -(6 + rng.IntN(10))
			p50off = p80off - (2 + rng.IntN(5))
			m.pDue = 0.9 + float64(rng.IntN(10))/100
		case 1: // on track, tight
			p80off = -rng.IntN(3)
			p50off = p80off - (1 + rng.IntN(4))
			m.pDue = 0.8 + float64(rng.IntN(10))/100
		case 2: // at risk: p50 before the due date, p80 after
			p50off = -(1 + rng.IntN(4))
			p80off = 1 + rng.IntN(8)
			m.pDue = 0.5 + float64(rng.IntN(30))/100
		case 3: // late
			p50off = 3 + rng.IntN(25)
			p80off = p50off + 2 + rng.IntN(10)
			m.pDue = 0.01 + float64(rng.IntN(45))/100
		}
		m.p50, m.p80 = addDays(m.due, p50off), addDays(m.due, p80off)
		m.slack = workingDays(m.p80, m.due)
		m.open = 2 + rng.IntN(35)
		p.milestones = append(p.milestones, m)
	}
	// Drift for one or two milestones.
	for _, m := range p.milestones {
		if rng.IntN(2) == 0 {
			continue
		}
		m.drift = true
		shift := 1 + rng.IntN(6)
		if rng.IntN(4) == 0 {
			shift = -shift
		}
		m.p50Before = addDays(m.p50, -shift)
		m.p50Days = workingDays(m.p50Before, m.p50)
		if m.p50Days == 0 {
			m.drift = false
		}
	}

	// People and their issues.
	logins := slices.Clone(corpusLogins)
	rng.Shuffle(len(logins), func(i, j int) { logins[i], logins[j] = logins[j], logins[i] })
	stamps := rng.IntN(2) == 0 // this project's data holds p50 as UTC timestamps
	for _, login := range logins[:3+rng.IntN(3)] {
		pp := &cPerson{login: login}
		mk := func() int64 {
			is := &cIssue{number: number(), title: nextTitle(), owner: login,
				milestone: p.milestones[rng.IntN(len(p.milestones))].id}
			is.p50 = addDays(p.today, 1+rng.IntN(20))
			is.stamp = is.p50.Format(time.DateOnly)
			if stamps {
				// Late in the local day or early in it, so that the UTC
				// date often differs from the local one.
				h := []int{0, 1, 22, 23, 12}[rng.IntN(5)]
				at := time.Date(is.p50.Year(), is.p50.Month(), is.p50.Day(), h, 30, 0, 0, p.loc)
				is.stamp = at.UTC().Format(time.RFC3339)
			}
			p.issues[is.number] = is
			return is.number
		}
		for range 1 + rng.IntN(2) {
			pp.now = append(pp.now, mk())
		}
		for range rng.IntN(3) {
			pp.next = append(pp.next, mk())
		}
		if rng.IntN(3) == 0 {
			pp.moreNow = 1 + rng.IntN(4)
		}
		if rng.IntN(2) == 0 {
			n := number()
			p.issues[n] = &cIssue{number: n, title: nextTitle(), owner: login}
			pp.finished = append(pp.finished, n)
		}
		p.people = append(p.people, pp)
	}
	// Stale blockers: issues of people, idle, blocking others.
	var all []int64
	for n := range p.issues {
		all = append(all, n)
	}
	slices.Sort(all)
	for range 1 + rng.IntN(2) {
		var b *cIssue
		for _, n := range all {
			is := p.issues[n]
			if !is.p50.IsZero() && !slices.ContainsFunc(p.stale, func(s *cStale) bool { return s.number == n }) && rng.IntN(3) == 0 {
				b = is
				break
			}
		}
		if b == nil {
			continue
		}
		s := &cStale{number: b.number, idle: float64(3+rng.IntN(12)) + float64(rng.IntN(2))*0.5}
		for range 1 + rng.IntN(3) {
			s.blocks = append(s.blocks, number())
		}
		s.count = len(s.blocks) + rng.IntN(3)
		p.stale = append(p.stale, s)
	}
	for range 1 + rng.IntN(3) {
		p.scopeAdded = append(p.scopeAdded, number())
	}
	p.scopeHours = float64([]int{3, 8, 11, 16, 20, 23, 28}[rng.IntN(7)])
	for range 5 {
		p.other = append(p.other, number())
	}
	return p
}

func (p *cProject) day(t time.Time) string { return t.Format(time.DateOnly) }

// data is the project as a standup report and a runway-like list of
// milestones would carry it.
func (p *cProject) data() map[string]any {
	item := func(n int64) map[string]any {
		is := p.issues[n]
		out := map[string]any{"number": n, "title": is.title}
		if !is.p50.IsZero() {
			out["p50"] = is.stamp
		}
		return out
	}
	var plan []any
	for _, pp := range p.people {
		e := map[string]any{"login": pp.login}
		var now, next, done []any
		for _, n := range pp.now {
			now = append(now, item(n))
		}
		for _, n := range pp.next {
			next = append(next, item(n))
		}
		for _, n := range pp.finished {
			done = append(done, item(n))
		}
		e["now"], e["next"] = now, next
		if len(done) > 0 {
			e["done"] = done
		}
		if pp.moreNow > 0 {
			e["moreNow"] = pp.moreNow
		}
		plan = append(plan, e)
	}
	var milestones, drift []any
	for i, m := range p.milestones {
		milestones = append(milestones, map[string]any{
			"milestone": m.id, "title": m.title, "due": p.day(m.due), "p50": p.day(m.p50), "p80": p.day(m.p80),
			"pDue": m.pDue, "slack": m.slack, "open": m.open,
		})
		if m.drift {
			d := map[string]any{"milestone": m.id, "title": m.title, "due": p.day(m.due),
				"p50Before": p.day(m.p50Before), "p50After": p.day(m.p50), "p50Days": m.p50Days}
			if i == 0 || len(drift) == 0 {
				d["causes"] = []any{map[string]any{"kind": "scope_added", "issues": p.scopeAdded, "hours": p.scopeHours}}
			}
			drift = append(drift, d)
		}
	}
	var stale []any
	for _, s := range p.stale {
		is := p.issues[s.number]
		stale = append(stale, map[string]any{"number": s.number, "title": is.title, "assignee": is.owner,
			"state": "steeping", "idleDays": s.idle, "blocks": s.blocks, "blocksCount": s.count})
	}
	return map[string]any{
		"project": "acme/app", "day": p.day(p.today), "weekday": p.today.Weekday().String(), "since": p.day(p.since),
		"milestones": milestones, "drift": drift, "plan": plan, "staleBlockers": stale,
	}
}

// names are what the project calls things, beyond the report: every
// milestone title, issue title and login.
func (p *cProject) names() prose.Names {
	n := prose.Names{Issues: map[int64]string{}}
	for _, m := range p.milestones {
		n.Milestones = append(n.Milestones, m.title)
	}
	for num, is := range p.issues {
		n.Issues[num] = is.title
	}
	for _, pp := range p.people {
		n.People = append(n.People, pp.login)
	}
	return n
}

// Status words and their truth for a milestone.
func onTrack(m *cMilestone) bool { return m.slack >= 0 && m.pDue >= 0.8 }
func atRisk(m *cMilestone) bool  { return !onTrack(m) }
func late(m *cMilestone) bool    { return m.pDue < 0.5 }
func ahead(m *cMilestone) bool   { return m.slack > 0 && m.pDue >= 0.9 && m.p80.Before(m.due) }

var numberWords = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
	"eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"}

// dateForm renders day t the way a sentence may, and reports which days
// the rendering covers (a week name covers seven).
type dateForm struct {
	text   string
	covers func(time.Time) bool
}

func (p *cProject) dateForms(t time.Time, rng *rand.Rand) dateForm {
	exact := func(s string) dateForm {
		return dateForm{s, func(u time.Time) bool { return date(u).Equal(date(t)) }}
	}
	monthDay := func(s string) dateForm {
		return dateForm{s, func(u time.Time) bool { return u.Month() == t.Month() && u.Day() == t.Day() }}
	}
	forms := []func() (dateForm, bool){
		func() (dateForm, bool) { return exact("on " + t.Format(time.DateOnly)), true },
		func() (dateForm, bool) { return monthDay("on " + t.Format("Jan 2")), true },
		func() (dateForm, bool) { return monthDay("on " + t.Format("January 2")), true },
		func() (dateForm, bool) { return monthDay("on " + t.Format("2 January")), true },
		func() (dateForm, bool) { return exact("on " + t.Format("Monday, January 2, 2006")), true },
		func() (dateForm, bool) {
			return exact("tomorrow"), date(t).Equal(addDays(p.today, 1))
		},
		func() (dateForm, bool) {
			d := int(date(t).Sub(p.today).Hours() / 24)
			if d < 1 || d > 6 {
				return dateForm{}, false
			}
			wd := t.Weekday()
			return dateForm{"on " + wd.String(), func(u time.Time) bool {
				for k := 0; k <= 6; k++ {
					if c := addDays(p.today, k); c.Weekday() == wd {
						return date(u).Equal(c)
					}
				}
				return false
			}}, true
		},
		func() (dateForm, bool) {
			monday := addDays(p.today, -((int(p.today.Weekday())+6)%7)+7)
			in := func(u time.Time) bool { return !date(u).Before(monday) && date(u).Before(addDays(monday, 7)) }
			return dateForm{"next week", in}, in(t)
		},
	}
	for {
		if f, ok := forms[rng.IntN(len(forms))](); ok {
			return f
		}
	}
}

func pct(x float64) string { return fmt.Sprintf("%d%%", int(math.Round(x*100))) }

func count(n int, rng *rand.Rand) string {
	if n <= 20 && rng.IntN(3) == 0 {
		return numberWords[n]
	}
	return fmt.Sprint(n)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// sentences renders every template for the project.
func (p *cProject) sentences() []corpusSentence {
	rng := rand.New(rand.NewPCG(p.seed, 1818))
	var out []corpusSentence
	add := func(form string, truth bool, why, text string) {
		out = append(out, corpusSentence{text: text, truth: truth, form: form, why: why})
	}
	pick := func(n int) int { return rng.IntN(n) }
	var planned []*cIssue // issues with a p50, in number order
	var nums []int64
	for n, is := range p.issues {
		if !is.p50.IsZero() {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	for _, n := range nums {
		planned = append(planned, p.issues[n])
	}

	// A wrong date for is: another issue's, or shifted by a few days; its
	// rendering must not cover the true date.
	wrongDate := func(truth time.Time) (dateForm, string) {
		for {
			var d time.Time
			why := "shifted date"
			if rng.IntN(2) == 0 {
				o := planned[pick(len(planned))]
				d, why = o.p50, "another issue's date"
				if o.stamp != o.p50.Format(time.DateOnly) && rng.IntN(2) == 0 {
					// The UTC date of a timestamp whose local date is
					// another day: the data holds it, the subject does not.
					if u, err := time.Parse(time.RFC3339, o.stamp); err == nil {
						d, why = time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, p.loc), "the UTC date of a local date"
					}
				}
			} else {
				d = addDays(truth, []int{-3, -2, -1, 1, 2, 3, 5}[pick(7)])
			}
			f := p.dateForms(d, rng)
			if !f.covers(truth) {
				return f, why
			}
		}
	}

	for _, is := range planned {
		right := p.dateForms(is.p50, rng)
		wrong, why := wrongDate(is.p50)
		forms := []struct {
			name string
			f    func(d dateForm) string
		}{
			{"person finishes issue date", func(d dateForm) string {
				return fmt.Sprintf("%s finishes #%d %s.", capitalize(is.owner), is.number, d.text)
			}},
			{"issue title should be done date", func(d dateForm) string {
				return fmt.Sprintf("#%d %s should be done %s.", is.number, is.title, d.text)
			}},
			{"person working on title (#n), likely done date", func(d dateForm) string {
				return fmt.Sprintf("%s is working on %s (#%d), likely done %s.", capitalize(is.owner), is.title, is.number, d.text)
			}},
			{"template-like now line", func(d dateForm) string {
				return fmt.Sprintf("%s: now #%d %s (p50 %s)", is.owner, is.number, is.title, strings.TrimPrefix(d.text, "on "))
			}},
			{"date first, then person and issue", func(d dateForm) string {
				return fmt.Sprintf("%s, %s expects to wrap up #%d.", capitalize(d.text), is.owner, is.number)
			}},
			{"person on issue for the milestone (likely done date)", func(d dateForm) string {
				m := p.milestones[is.milestone-1]
				return fmt.Sprintf("%s is on #%d for the %s (likely done %s).", capitalize(is.owner), is.number, m.title, strings.TrimPrefix(d.text, "on "))
			}},
			{"issue lands, p50", func(d dateForm) string {
				return fmt.Sprintf("The p50 for #%d is %s.", is.number, strings.TrimPrefix(d.text, "on "))
			}},
		}
		f := forms[pick(len(forms))]
		add(f.name, true, "", f.f(right))
		add(f.name, false, why, f.f(wrong))
	}

	// Two people, two issues, two dates in one sentence: swapping the
	// dates makes it false.
	if len(planned) >= 2 {
		for range 2 {
			a, b := planned[pick(len(planned))], planned[pick(len(planned))]
			if a == b || date(a.p50).Equal(date(b.p50)) {
				continue
			}
			fa, fb := p.dateForms(a.p50, rng), p.dateForms(b.p50, rng)
			if fa.covers(b.p50) || fb.covers(a.p50) {
				continue
			}
			s := "%s finishes #%d %s, and %s should close #%d %s."
			add("two people, two dates", true, "", fmt.Sprintf(s, capitalize(a.owner), a.number, fa.text, b.owner, b.number, fb.text))
			add("two people, two dates", false, "dates swapped between subjects", fmt.Sprintf(s, capitalize(a.owner), a.number, fb.text, b.owner, b.number, fa.text))
		}
	}

	others := func(m *cMilestone) []*cMilestone {
		var o []*cMilestone
		for _, x := range p.milestones {
			if x != m {
				o = append(o, x)
			}
		}
		return o
	}
	for _, m := range p.milestones {
		// Open counts.
		wrongOpen, whyOpen := m.open+[]int{-2, -1, 1, 3}[pick(4)], "shifted count"
		for _, o := range others(m) {
			if o.open != m.open && pick(2) == 0 {
				wrongOpen, whyOpen = o.open, "another milestone's count"
			}
		}
		countForms := []string{"%s has %s open issues.", "There are %[2]s open issues left in %[1]s.", "%s: %s issues still open."}
		cf := countForms[pick(len(countForms))]
		add("milestone open count", true, "", capitalize(fmt.Sprintf(cf, m.title, count(m.open, rng))))
		if wrongOpen > 0 && wrongOpen != m.open {
			add("milestone open count", false, whyOpen, capitalize(fmt.Sprintf(cf, m.title, count(wrongOpen, rng))))
		}

		// Chance and due date.
		wrongP := math.Round(m.pDue*100)/100 + []float64{-0.15, -0.1, 0.1, 0.2}[pick(4)]
		whyP := "shifted chance"
		for _, o := range others(m) {
			if math.Round(o.pDue*100) != math.Round(m.pDue*100) && pick(2) == 0 {
				wrongP, whyP = o.pDue, "another milestone's chance"
			}
		}
		chanceForms := []string{"%s has a %s chance of making its due date.", "The odds for %s: %s.", "%s is at %s to hit its date."}
		chf := chanceForms[pick(len(chanceForms))]
		add("milestone chance", true, "", fmt.Sprintf(chf, m.title, pct(m.pDue)))
		if wrongP > 0 && wrongP < 1 && math.Round(wrongP*100) != math.Round(m.pDue*100) {
			add("milestone chance", false, whyP, fmt.Sprintf(chf, m.title, pct(wrongP)))
		}

		// p50, p80 and due.
		dueRight := p.dateForms(m.due, rng)
		add("milestone due and p50", true, "", fmt.Sprintf("%s (due %s) now lands %s at p50.", m.title, strings.TrimPrefix(dueRight.text, "on "), p.dateForms(m.p50, rng).text))
		var wrongP50 dateForm
		whyP50 := "shifted p50"
		for {
			d := addDays(m.p50, []int{-4, -2, -1, 1, 2, 6}[pick(6)])
			if o := others(m); pick(2) == 0 {
				d, whyP50 = o[pick(len(o))].p50, "another milestone's p50"
			}
			if wrongP50 = p.dateForms(d, rng); !wrongP50.covers(m.p50) {
				break
			}
			whyP50 = "shifted p50"
		}
		add("milestone due and p50", false, whyP50, fmt.Sprintf("%s (due %s) now lands %s at p50.", m.title, strings.TrimPrefix(dueRight.text, "on "), wrongP50.text))
		add("milestone p80", true, "", fmt.Sprintf("At p80, %s ships %s.", m.title, p.dateForms(m.p80, rng).text))
		for {
			d := addDays(m.p80, []int{-3, -1, 1, 4}[pick(4)])
			if f := p.dateForms(d, rng); !f.covers(m.p80) {
				add("milestone p80", false, "shifted p80", fmt.Sprintf("At p80, %s ships %s.", m.title, f.text))
				break
			}
		}

		// Status words.
		type status struct {
			words []string
			truth func(*cMilestone) bool
		}
		statuses := []status{
			{[]string{"is on track", "is on schedule", "looks on track"}, onTrack},
			{[]string{"is at risk", "is in danger of missing its date"}, atRisk},
			{[]string{"is running late", "will likely be late", "is behind schedule"}, late},
			{[]string{"is ahead of schedule"}, ahead},
			{[]string{"is not on track", "is no longer on track"}, atRisk},
		}
		for range 2 {
			s := statuses[pick(len(statuses))]
			w := s.words[pick(len(s.words))]
			text := fmt.Sprintf("%s %s.", m.title, w)
			if pick(2) == 0 {
				text = fmt.Sprintf("With a %s chance, %s %s.", pct(m.pDue), m.title, w)
			}
			why := ""
			if !s.truth(m) {
				why = "status word disagrees with chance and slack"
			}
			add("milestone status", s.truth(m), why, text)
		}

		// Lateness in weeks.
		if m.p50.After(m.due) {
			weeks := int(math.Round(m.p50.Sub(m.due).Hours() / 24 / 7))
			if weeks >= 1 && weeks <= 10 {
				unit := "weeks"
				if weeks == 1 {
					unit = "week"
				}
				add("milestone weeks late", true, "", fmt.Sprintf("%s is about %s %s late.", m.title, count(weeks, rng), unit))
			}
			add("milestone weeks late", false, "wrong lateness", fmt.Sprintf("%s is about %s weeks late.", m.title, count(weeks+2, rng)))
		} else {
			add("milestone weeks late", false, "late when it is not", fmt.Sprintf("%s is %s weeks late.", m.title, count(1+pick(3), rng)))
		}

		// Drift.
		if m.drift {
			word := "slipped"
			if m.p50Days < 0 {
				word = "moved earlier by"
			}
			days := math.Abs(m.p50Days)
			add("milestone drift", true, "", fmt.Sprintf("Since %s, %s %s %g working days to %s.", p.since.Format("Jan 2"), m.title, word, days, m.p50.Format("Jan 2")))
			add("milestone drift", false, "shifted drift", fmt.Sprintf("Since %s, %s %s %g working days to %s.", p.since.Format("Jan 2"), m.title, word, days+1, m.p50.Format("Jan 2")))
			flip := "moved earlier by"
			if m.p50Days < 0 {
				flip = "slipped"
			}
			add("milestone drift", false, "direction flipped", fmt.Sprintf("%s %s %g working days.", m.title, flip, days))
		}
	}

	// Two milestones, two counts: swapped is false.
	if len(p.milestones) >= 2 {
		a, b := p.milestones[0], p.milestones[1]
		if a.open != b.open {
			s := "%s has %d open issues and %s has %d."
			add("two milestones, two counts", true, "", fmt.Sprintf(s, a.title, a.open, b.title, b.open))
			add("two milestones, two counts", false, "counts swapped between subjects", fmt.Sprintf(s, a.title, b.open, b.title, a.open))
		}
		if atRisk(a) != atRisk(b) {
			word := func(m *cMilestone) string {
				if atRisk(m) {
					return "at risk"
				}
				return "on track"
			}
			s := "%s is %s while %s is %s."
			add("two milestones, two statuses", true, "", fmt.Sprintf(s, a.title, word(a), b.title, word(b)))
			add("two milestones, two statuses", false, "statuses swapped between subjects", fmt.Sprintf(s, a.title, word(b), b.title, word(a)))
		}
	}

	// The whole project.
	allOnTrack := !slices.ContainsFunc(p.milestones, atRisk)
	add("project status", allOnTrack, map[bool]string{false: "a milestone is at risk"}[allOnTrack], "All work is on track.")
	add("project status", allOnTrack, map[bool]string{false: "a milestone is at risk"}[allOnTrack], "Everything is on schedule this week.")
	add("standup day", true, "", fmt.Sprintf("Good morning! Here is the standup for %s, %s.", p.today.Weekday(), p.today.Format("January 2")))
	add("standup day", false, "wrong day", fmt.Sprintf("Good morning! Here is the standup for %s.", addDays(p.today, 1+pick(3)).Format(time.DateOnly)))

	// Stale blockers.
	for _, s := range p.stale {
		is := p.issues[s.number]
		refs := make([]string, len(s.blocks))
		for i, n := range s.blocks {
			refs[i] = fmt.Sprintf("#%d", n)
		}
		list := strings.Join(refs, ", ")
		add("stale blocker idle", true, "", fmt.Sprintf("#%d %s has been idle for %g working days and blocks %s.", s.number, is.title, s.idle, list))
		add("stale blocker idle", false, "shifted idle days", fmt.Sprintf("#%d %s has been idle for %g working days and blocks %s.", s.number, is.title, s.idle+2, list))
		add("stale blocker count", true, "", fmt.Sprintf("%s's #%d is stale and holds up %s issues.", capitalize(is.owner), s.number, count(s.count, rng)))
		add("stale blocker count", false, "shifted blocked count", fmt.Sprintf("%s's #%d is stale and holds up %s issues.", capitalize(is.owner), s.number, count(s.count+1+pick(2), rng)))
	}

	// Scope added to the first drifting milestone.
	for _, m := range p.milestones {
		if !m.drift {
			continue
		}
		refs := make([]string, len(p.scopeAdded))
		for i, n := range p.scopeAdded {
			refs[i] = fmt.Sprintf("#%d", n)
		}
		add("scope added hours", true, "", fmt.Sprintf("%s moved because %s were added (%g h nominal).", m.title, strings.Join(refs, " and "), p.scopeHours))
		add("scope added hours", false, "shifted hours", fmt.Sprintf("%s moved because %s were added (%g h nominal).", m.title, strings.Join(refs, " and "), p.scopeHours+5))
		break
	}

	// An issue the project does not have.
	add("unknown issue", false, "no such issue", fmt.Sprintf("%s also picked up #%d.", capitalize(p.people[0].login), 1000+pick(9000)))
	// People's extra work in progress.
	for _, pp := range p.people {
		if pp.moreNow > 0 {
			add("more in progress", true, "", fmt.Sprintf("%s has %s more issues in progress.", capitalize(pp.login), count(pp.moreNow, rng)))
			add("more in progress", false, "shifted count", fmt.Sprintf("%s has %s more issues in progress.", capitalize(pp.login), count(pp.moreNow+2, rng)))
		}
	}
	return out
}

// corpusProjects is how many projects the corpus draws.
const corpusProjects = 24

func corpus() ([]*cProject, [][]corpusSentence) {
	var ps []*cProject
	var ss [][]corpusSentence
	for seed := uint64(1); seed <= corpusProjects; seed++ {
		p := newCorpusProject(seed)
		ps = append(ps, p)
		ss = append(ss, append(p.sentences(), p.sentences2()...))
	}
	return ps, ss
}

// TestCorpusIsBalanced keeps the corpus at least 100 true and 100 false
// sentences, from every template.
func TestCorpusIsBalanced(t *testing.T) {
	_, ss := corpus()
	var nTrue, nFalse int
	forms := map[string]int{}
	for _, s := range ss {
		for _, x := range s {
			if x.truth {
				nTrue++
			} else {
				nFalse++
			}
			forms[x.form]++
		}
	}
	if nTrue < 100 || nFalse < 100 {
		t.Errorf("corpus has %d true and %d false sentences; want at least 100 of each", nTrue, nFalse)
	}
	t.Logf("corpus: %d true, %d false sentences from %d projects and %d forms", nTrue, nFalse, corpusProjects, len(forms))
}
