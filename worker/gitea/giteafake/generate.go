package giteafake

// Generated projects: instead of the recorded four-issue repository, the fake
// can serve a year of a team's history made up from a fixed seed, so that
// `commitea demo` and end-to-end tests import it exactly as they would a real
// Gitea (backfill through the API, timelines included, then webhooks for
// every change made through the API). The history is built directly into
// the fake's state with past timestamps: a real Gitea's history also predates
// the webhook, and Gitea sends no webhook for it.

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// The generated project's repository when Project leaves Owner and Name
// empty.
const (
	demoOwner = "acme"
	demoName  = "teapot"
	DemoRepo  = demoOwner + "/" + demoName
)

// Project describes a generated repository. The zero values of the fields
// give the demo project: acme/teapot, seed 1, history ending now.
type Project struct {
	Owner, Name string
	Seed        uint64
	// Now is when the history ends; default time.Now.
	Now time.Time
	// Team works the history; default DemoTeam().
	Team []Person
	// HistoryDays is how far back the history reaches; default 365.
	HistoryDays int
	// Backlog, when set, is how many issues wait in each milestone's
	// backlog (half as many without a milestone, and as many untouched
	// reports), for small projects; default the demo's 16 to 22.
	Backlog int
	// Planned makes the history's team work the way CommiTea's forecast
	// plans, so that a backtest of the live model can be judged against a
	// known truth (the effort model below is the truth): every issue is
	// filed PlannedLead before it is started, all at one priority (p/2),
	// so the order work is started in is the order it was filed in and
	// whoever frees up first takes the next issue; nobody has untracked
	// time between issues; nothing goes stale; the open backlog and the
	// untouched reports were filed in the last twelve hours, so no past
	// cut-off holds work the team was never going to do; and the work
	// finished 45 days or more before Now went out in six-week releases
	// ("v0.N"), closed milestones due at the end of their window. Without
	// it (the demo), issues are filed 1 hour to 30 days before their
	// start at random priorities, people idle up to 14 working hours
	// between issues, and the backlog was filed up to 120 days back and
	// never touched: histories a planner cannot be right about.
	Planned bool
}

// PlannedLead is how long before its start a Planned history's issue is
// filed.
const PlannedLead = 10 * 24 * time.Hour

// plannedRelease is the window of a Planned history's past releases.
const plannedRelease = 42 * 24 * time.Hour

// Person is one generated team member: how fast they work against the
// estimates and when they work. The calendar is what CommiTea should be
// configured with to forecast them well.
type Person struct {
	Login string
	// Speed is actual effort over nominal effort: 1.5 means the person
	// takes half again as long as the estimate says.
	Speed       float64
	HoursPerDay float64
	WorkingDays []time.Weekday
	TimeZone    string
	// TimeOff are inclusive ranges of local dates off, relative to Now in
	// whole days (e.g. {From: 10, To: 19} is a fortnight starting in ten
	// days).
	TimeOff []DayRange
}

// DayRange is an inclusive range of days relative to Project.Now.
type DayRange struct{ From, To int }

// DemoTeam is six people with different speeds and calendars: a part-timer,
// a Sunday-to-Thursday week, three time zones and some time off ahead.
func DemoTeam() []Person {
	weekdays := []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}
	return []Person{
		{Login: "amara", Speed: 0.9, HoursPerDay: 6, WorkingDays: weekdays, TimeZone: "Europe/Berlin"},
		{Login: "bruno", Speed: 1.6, HoursPerDay: 6, WorkingDays: weekdays, TimeZone: "America/Sao_Paulo", TimeOff: []DayRange{{From: 12, To: 25}}},
		{Login: "chen", Speed: 1.1, HoursPerDay: 5, WorkingDays: weekdays, TimeZone: "Asia/Shanghai"},
		{Login: "dana", Speed: 1.3, HoursPerDay: 3, WorkingDays: []time.Weekday{time.Monday, time.Tuesday, time.Wednesday}, TimeZone: "Europe/London"},
		{Login: "eitan", Speed: 1.0, HoursPerDay: 6, WorkingDays: []time.Weekday{time.Sunday, time.Monday, time.Tuesday, time.Wednesday, time.Thursday}, TimeZone: "Asia/Jerusalem"},
		{Login: "farid", Speed: 2.0, HoursPerDay: 6, WorkingDays: weekdays, TimeZone: "UTC"},
	}
}

// Milestones of the generated project, relative to Now; the first is hard.
var generatedMilestones = []struct {
	title, description string
	dueDays            int
	hard               bool
}{
	{"v1.0 Launch", "Public launch: billing, onboarding and the status page.\ndeadline: hard", 24, true},
	{"v1.1 Teams", "Team accounts and shared dashboards.", 55, false},
	{"v1.2 Integrations", "Webhooks, Slack and the public API.", 95, false},
	{"v2.0 Scale", "Sharding, multi-region and the new storage engine.", 150, false},
}

var (
	genSizes  = []string{"est/xs", "est/s", "est/m", "est/l", "est/xl"}
	genHours  = []float64{1, 3, 8, 20, 40}
	genWeight = []float64{0.15, 0.3, 0.3, 0.18, 0.07}
	genVerbs  = []string{"Add", "Fix", "Refactor", "Speed up", "Document", "Test", "Redesign", "Remove", "Harden", "Migrate"}
	genThings = []string{"billing page", "signup flow", "password reset", "webhook retries", "team invites", "audit log",
		"rate limiter", "search index", "CSV export", "dark mode", "status page", "session handling", "email digests",
		"API pagination", "Slack notifications", "storage engine", "onboarding tour", "role permissions", "usage metering",
		"invoice PDFs", "SSO login", "mobile layout", "error reporting", "cache layer", "job scheduler", "data import"}
)

// generatedItem is one issue or pull request before numbering.
type generatedItem struct {
	title, body string
	created     time.Time
	started     time.Time // zero: never assigned
	closed      time.Time // zero: open
	updated     time.Time
	person      string
	labels      []string
	milestone   int64
	trackedSecs int64
	dependsOn   []*generatedItem
	pullFor     *generatedItem // a pull request fixing this item
	isPull      bool
	number      int64
}

// generate replaces base's content (keeping the recorded objects as
// templates, so every response has Gitea's full shape) with a generated
// project.
func generate(base *state, p Project, serverURL string) error {
	if p.Owner == "" {
		p.Owner = demoOwner
	}
	if p.Name == "" {
		p.Name = demoName
	}
	if p.Seed == 0 {
		p.Seed = 1
	}
	if p.Now.IsZero() {
		p.Now = time.Now()
	}
	if len(p.Team) == 0 {
		p.Team = DemoTeam()
	}
	now := p.Now.UTC().Truncate(time.Second)
	rng := rand.New(rand.NewPCG(p.Seed, 0xdec0de))

	issueTmpl := clone(base.issues[1].tmpl)
	pullIssueTmpl := clone(base.issues[4].tmpl)
	pullTmpl := clone(base.issues[4].pull)
	userTmpl := clone(base.users["ceo"])
	labelTmpl := clone(base.labels[1])
	milestoneTmpl := clone(base.milestones[1])

	// The repository, renamed.
	htmlBase := strings.TrimRight(serverURL, "/")
	repo := base.repo
	owner := clone(userTmpl)
	owner["login"], owner["username"], owner["id"] = p.Owner, p.Owner, float64(100)
	repo["owner"], repo["name"], repo["full_name"] = owner, p.Name, p.Owner+"/"+p.Name
	repo["html_url"] = htmlBase + "/" + p.Owner + "/" + p.Name
	repo["url"] = htmlBase + "/api/v1/repos/" + p.Owner + "/" + p.Name
	repo["description"] = "A generated project for the CommiTea demo"
	base.owner, base.name = p.Owner, p.Name
	repoRef := obj{"id": repo["id"], "name": p.Name, "owner": p.Owner, "full_name": p.Owner + "/" + p.Name}
	issueTmpl["repository"], pullIssueTmpl["repository"] = repoRef, repoRef

	base.issues = map[int64]*issueState{}
	base.labels = map[int64]obj{}
	base.milestones = map[int64]obj{}
	base.deps = map[int64][]depRef{}
	base.comments = nil
	base.times = nil
	base.timelines = map[int64][]obj{}
	base.nextIssueNumber, base.nextIssueID, base.nextLabelID, base.nextMilestoneID, base.nextTimeID = 1, 1, 1, 1, 1

	// Users: the token's owner ("ceo", the project manager) and the team.
	for k, person := range p.Team {
		u := clone(userTmpl)
		u["id"] = float64(10 + k)
		u["login"], u["username"], u["email"], u["is_admin"] = person.Login, person.Login, person.Login+"@example.com", false
		u["full_name"] = strings.ToUpper(person.Login[:1]) + person.Login[1:]
		base.users[person.Login] = u
	}

	// Labels, created as CommiTea would: lowercase, exclusive scopes.
	labelID := map[string]int64{}
	addLabel := func(name, color, desc string, exclusive bool) {
		l := clone(labelTmpl)
		id := base.nextLabelID
		base.nextLabelID++
		l["id"], l["name"], l["color"], l["description"], l["exclusive"] = float64(id), name, color, desc, exclusive
		l["url"] = fmt.Sprintf("%s/labels/%d", repo["url"], id)
		base.labels[id] = l
		labelID[name] = id
	}
	for k, s := range genSizes {
		addLabel(s, "c5def5", fmt.Sprintf("estimate: %g focused hours", genHours[k]), true)
	}
	for k, c := range []string{"b60205", "d93f0b", "fbca04", "0e8a16"} {
		addLabel(fmt.Sprintf("p/%d", k), c, "priority", true)
	}
	addLabel("deadline/hard", "000000", "must ship with its milestone", false)
	addLabel("kind/bug", "ee0701", "something is broken", true)
	addLabel("kind/feature", "84b6eb", "new behaviour", true)
	addLabel("wontfix", "ffffff", "will not be done", false)

	// Milestones.
	var milestoneDue []time.Time
	for _, m := range generatedMilestones {
		o := clone(milestoneTmpl)
		id := base.nextMilestoneID
		base.nextMilestoneID++
		due := endOfDay(now.AddDate(0, 0, m.dueDays))
		created := now.AddDate(0, -10+int(id), 0)
		o["id"], o["title"], o["description"], o["state"] = float64(id), m.title, m.description, "open"
		o["due_on"], o["created_at"], o["updated_at"], o["closed_at"] = fmtTime(due), fmtTime(created), fmtTime(created), nil
		base.milestones[id] = o
		milestoneDue = append(milestoneDue, due)
	}

	cals := make([]genCalendar, len(p.Team))
	for k, person := range p.Team {
		loc, err := time.LoadLocation(cmp.Or(person.TimeZone, "UTC"))
		if err != nil {
			return fmt.Errorf("person %s: %w", person.Login, err)
		}
		c := genCalendar{loc: loc, hours: person.HoursPerDay}
		if c.hours <= 0 {
			c.hours = 6
		}
		for _, d := range person.WorkingDays {
			c.days[d] = true
		}
		if len(person.WorkingDays) == 0 {
			for d := time.Monday; d <= time.Friday; d++ {
				c.days[d] = true
			}
		}
		for _, r := range person.TimeOff {
			c.off = append(c.off, [2]time.Time{dateIn(now.AddDate(0, 0, r.From), loc), dateIn(now.AddDate(0, 0, r.To), loc)})
		}
		cals[k] = c
	}

	pickSize := func() int {
		x := rng.Float64()
		for k, w := range genWeight {
			if x < w {
				return k
			}
			x -= w
		}
		return len(genWeight) - 1
	}
	title := func() string {
		return genVerbs[rng.IntN(len(genVerbs))] + " " + genThings[rng.IntN(len(genThings))]
	}
	kind := func() string {
		if rng.IntN(3) == 0 {
			return "kind/bug"
		}
		return "kind/feature"
	}
	prio := func() string { return []string{"p/0", "p/1", "p/1", "p/2", "p/2", "p/2", "p/3"}[rng.IntN(7)] }
	// Past releases of a Planned history, created as work finishes in
	// their window.
	start := now.AddDate(-1, 0, 0)
	if p.HistoryDays > 0 {
		start = now.AddDate(0, 0, -p.HistoryDays)
	}
	releases := map[int]int64{}
	release := func(finished time.Time) int64 {
		r := int(finished.Sub(start) / plannedRelease)
		if id, ok := releases[r]; ok {
			return id
		}
		end := start.Add(time.Duration(r+1) * plannedRelease)
		if last := now.Add(-45 * 24 * time.Hour); end.After(last) {
			end = last
		}
		o := clone(milestoneTmpl)
		id := base.nextMilestoneID
		base.nextMilestoneID++
		opened := start.Add(time.Duration(r) * plannedRelease)
		o["id"], o["title"], o["description"], o["state"] = float64(id), fmt.Sprintf("v0.%d", r+1), "A release of the past year.", "closed"
		o["due_on"], o["created_at"], o["updated_at"], o["closed_at"] = fmtTime(endOfDay(end)), fmtTime(opened), fmtTime(endOfDay(end)), fmtTime(endOfDay(end))
		base.milestones[id] = o
		releases[r] = id
		return id
	}
	// milestoneFor a piece of work finishing at t: work of the last months
	// went into the open milestones, the earliest mostly.
	milestoneFor := func(t time.Time) int64 {
		age := now.Sub(t)
		if p.Planned && age >= 45*24*time.Hour {
			return release(t)
		}
		switch {
		case age < 45*24*time.Hour:
			return int64(1 + min(rng.IntN(3), rng.IntN(3)))
		case age < 90*24*time.Hour && rng.IntN(2) == 0:
			return 1
		}
		return 0
	}

	var items []*generatedItem
	// History: each person works one issue at a time on their calendar,
	// with untracked time (meetings, reviews) between issues.
	for k, person := range p.Team {
		c := cals[k]
		t := c.advance(start, rng.Float64()*10)
		for {
			idle := rng.Float64() * 14
			if p.Planned {
				idle = 0
			}
			t = c.advance(t, idle)
			size := pickSize()
			actual := genHours[size] * person.Speed * math.Exp(rng.NormFloat64()*0.35)
			if size == 4 {
				actual *= 1.25 // the largest work is underestimated most
			}
			started := t
			finished := c.advance(started, actual)
			if finished.After(now.AddDate(0, 0, -2)) {
				break
			}
			t = finished
			it := &generatedItem{
				title: title(), created: started.Add(-time.Duration(1+rng.IntN(30*24)) * time.Hour),
				started: started, closed: finished, updated: finished, person: person.Login,
				labels: []string{genSizes[size], prio(), kind()}, milestone: milestoneFor(finished),
			}
			if p.Planned {
				it.created, it.labels[1] = started.Add(-PlannedLead), "p/2"
			}
			it.body = fmt.Sprintf("%s.\n\nFound while working on %s.", it.title, genThings[rng.IntN(len(genThings))])
			if rng.IntN(3) == 0 {
				it.trackedSecs = int64(actual * 3600 * (0.9 + 0.2*rng.Float64()))
			}
			if rng.IntN(40) == 0 {
				// Discarded: closed soon after starting, as not wanted.
				it.labels = []string{prio(), "wontfix"}
				it.closed = c.advance(started, 1)
				it.updated, it.trackedSecs = it.closed, 0
			}
			items = append(items, it)
		}
	}

	// Current work: each person has one or two issues steeping; a few of
	// them went quiet (stale), a few are in review with an open pull.
	var open []*generatedItem
	for k, person := range p.Team {
		c := cals[k]
		n := 1 + rng.IntN(2)
		staleOne := (k == 1 || k == 4) && !p.Planned // two people have let something go quiet
		if staleOne {
			n++
		}
		for j := range n {
			size := 1 + rng.IntN(3)
			if person.HoursPerDay < 4 {
				size = 1 // a part-timer holds small pieces
			}
			started := c.advance(now.AddDate(0, 0, -1-rng.IntN(6)), 0)
			updated := started
			if staleOne && j == n-1 {
				// Stale: started two to three weeks ago, silent since.
				started = c.advance(now.AddDate(0, 0, -14-rng.IntN(7)), 0)
				updated = started.Add(2 * time.Hour)
			}
			if updated.After(now) {
				updated = now.Add(-time.Hour)
				started = updated
			}
			created := started.Add(-time.Duration(24+rng.IntN(20*24)) * time.Hour)
			if p.Planned {
				created = started.Add(-PlannedLead)
			}
			it := &generatedItem{
				title: title(), created: created,
				started: started, updated: updated, person: person.Login,
				labels: []string{genSizes[size], []string{"p/1", "p/2"}[rng.IntN(2)], kind()}, milestone: int64(1 + rng.IntN(2)),
			}
			if it.milestone == 1 {
				// What people have in hand for the launch is high priority;
				// low-priority work in hand would wait behind the backlog.
				it.labels[1] = "p/1"
			}
			it.body = it.title + "."
			if rng.IntN(2) == 0 {
				it.trackedSecs = int64(float64(3600) * (1 + rng.Float64()*genHours[size]/2))
			}
			if j == 0 && k < 4 {
				// In review: an open pull request that fixes it.
				pr := &generatedItem{
					title: "Fix: " + strings.ToLower(it.title[:1]) + it.title[1:], created: c.advance(updated, 0.5),
					person: person.Login, isPull: true,
				}
				pr.updated = pr.created
				if pr.created.After(now) {
					pr.created, pr.updated = now.Add(-30*time.Minute), now.Add(-30*time.Minute)
				}
				it.pullFor = pr
				it.updated = pr.created
				items = append(items, pr)
			}
			items = append(items, it)
			open = append(open, it)
		}
	}

	// Backlog: estimated work waiting in every milestone (triage), work
	// without an estimate, and a few untouched reports (diagnosis).
	// The launch's work is urgent or high priority, later milestones'
	// mostly normal or low, as a team that plans would have it.
	backlog := []struct {
		milestone int64
		n         int
		prios     []string
	}{
		{1, 16, []string{"p/0", "p/1", "p/1"}}, {2, 22, []string{"p/1", "p/2", "p/2"}},
		{3, 22, []string{"p/2", "p/2", "p/3"}}, {4, 20, []string{"p/2", "p/3", "p/3"}}, {0, 8, []string{"p/3"}},
	}
	reports := 9
	if p.Backlog > 0 {
		for k := range backlog {
			backlog[k].n = p.Backlog
			if backlog[k].milestone == 0 {
				backlog[k].n = max(1, p.Backlog/2)
			}
		}
		reports = max(1, p.Backlog/2)
	}
	for _, b := range backlog {
		for j := range b.n {
			size := pickSize()
			created := now.Add(-time.Duration(24+rng.IntN(120*24)) * time.Hour)
			if p.Planned {
				created = now.Add(-time.Duration(1+rng.IntN(12)) * time.Hour)
			}
			it := &generatedItem{
				title: title(), created: created,
				labels: []string{genSizes[size], b.prios[rng.IntN(len(b.prios))], kind()}, milestone: b.milestone,
			}
			if b.milestone == 1 && size == 4 {
				it.labels[0] = "est/l" // nothing that large fits the launch
			}
			if j%9 == 4 {
				it.labels = it.labels[1:] // no estimate yet
			}
			if b.milestone == 1 && j%5 == 0 {
				it.labels = append(it.labels, "deadline/hard")
			}
			it.updated = it.created
			it.body = it.title + ".\n\nAcceptance: works on staging."
			items = append(items, it)
			open = append(open, it)
		}
	}
	for range reports {
		it := &generatedItem{title: "Report: " + strings.ToLower(title()) + " misbehaves", created: now.Add(-time.Duration(2+rng.IntN(20*24)) * time.Hour)}
		if p.Planned {
			it.created = now.Add(-time.Duration(1+rng.IntN(12)) * time.Hour)
		}
		it.updated = it.created
		it.body = "Something is off here; nobody has looked yet."
		items = append(items, it)
	}

	// Dependencies among open work: a later milestone's work waits on an
	// earlier one's (blocked), and some work waits on done work.
	for _, it := range open {
		if rng.IntN(5) != 0 || it.milestone == 0 {
			continue
		}
		for range 1 + rng.IntN(2) {
			other := open[rng.IntN(len(open))]
			if other != it && other.milestone != 0 && other.milestone <= it.milestone && other.pullFor == nil && !slices.Contains(other.dependsOn, it) {
				it.dependsOn = append(it.dependsOn, other)
			}
		}
	}
	var done []*generatedItem
	for _, it := range items {
		if !it.closed.IsZero() {
			done = append(done, it)
		}
	}
	for _, it := range open[:len(open)/8] {
		it.dependsOn = append(it.dependsOn, done[rng.IntN(len(done))])
	}

	// Number in creation order, as Gitea does; a dependency must then be on
	// an earlier number for there to be no cycle, so drop the others.
	slices.SortStableFunc(items, func(a, b *generatedItem) int { return a.created.Compare(b.created) })
	for k, it := range items {
		it.number = int64(k + 1)
	}
	for _, it := range items {
		it.dependsOn = slices.DeleteFunc(it.dependsOn, func(d *generatedItem) bool { return d.number >= it.number })
	}

	g := &generator{st: base, now: now, labelID: labelID, milestoneDue: milestoneDue, issueTmpl: issueTmpl,
		pullIssueTmpl: pullIssueTmpl, pullTmpl: pullTmpl, htmlBase: repo["html_url"].(string), apiBase: repo["url"].(string)}
	for _, it := range items {
		g.add(it)
	}
	for _, it := range items {
		g.history(it)
	}
	g.countMilestones()
	return nil
}

// generator writes generated items into the fake's state.
type generator struct {
	st                                 *state
	now                                time.Time
	labelID                            map[string]int64
	milestoneDue                       []time.Time
	issueTmpl, pullIssueTmpl, pullTmpl obj
	htmlBase, apiBase                  string
}

func (g *generator) add(it *generatedItem) {
	st := g.st
	n := it.number
	id := st.nextIssueID
	st.nextIssueNumber, st.nextIssueID = n+1, id+1
	isPull := it.isPull
	tmpl := clone(g.issueTmpl)
	kind := "issues"
	if isPull {
		tmpl = clone(g.pullIssueTmpl)
		kind = "pulls"
	}
	tmpl["id"] = id
	tmpl["url"] = fmt.Sprintf("%s/issues/%d", g.apiBase, n)
	tmpl["html_url"] = fmt.Sprintf("%s/%s/%d", g.htmlBase, kind, n)
	author := "ceo"
	if it.person != "" && (isPull || n%3 == 0) {
		author = it.person
	}
	tmpl["user"] = clone(st.users[author])
	if !isPull {
		tmpl["pull_request"] = nil
	}
	is := &issueState{number: n, id: id, title: it.title, body: it.body, state: "open",
		milestone: it.milestone, createdAt: it.created, updatedAt: it.updated, tmpl: tmpl}
	if !it.closed.IsZero() {
		closed := it.closed
		is.state, is.closedAt = "closed", &closed
	}
	for _, l := range it.labels {
		st.addLabel(is, g.labelID[l])
	}
	if it.person != "" && !isPull {
		is.assignees = []string{it.person}
	}
	if isPull {
		pr := clone(g.pullTmpl)
		pr["id"], pr["number"] = id, n
		pr["url"] = fmt.Sprintf("%s/pulls/%d", g.htmlBase, n)
		pr["html_url"] = pr["url"]
		pr["diff_url"], pr["patch_url"] = fmt.Sprintf("%s/pulls/%d.diff", g.htmlBase, n), fmt.Sprintf("%s/pulls/%d.patch", g.htmlBase, n)
		pr["user"] = clone(st.users[it.person])
		pr["merged"], pr["merged_at"], pr["merged_by"], pr["merge_commit_sha"] = false, nil, nil, nil
		pr["mergeable"] = true
		head := clone(pr["head"].(obj))
		head["label"], head["ref"] = fmt.Sprintf("fix-%d", n), fmt.Sprintf("refs/pull/%d/head", n)
		head["repo"] = clone(g.st.repo)
		pr["head"] = head
		baseRef := clone(pr["base"].(obj))
		baseRef["repo"] = clone(g.st.repo)
		pr["base"] = baseRef
		is.pull = pr
		if iss, ok := tmpl["pull_request"].(obj); ok {
			iss["merged"], iss["merged_at"] = false, nil
			iss["html_url"] = pr["html_url"]
		}
	}
	st.issues[n] = is
}

// history writes an item's timeline, dependencies and tracked time, and
// links pull requests to the issue they fix.
func (g *generator) history(it *generatedItem) {
	st := g.st
	is := st.issues[it.number]
	pm := st.users["ceo"]
	if is.pull != nil {
		return // written with the issue it fixes
	}
	actor := pm
	if it.person != "" {
		actor = st.users[it.person]
	}
	for _, l := range it.labels {
		st.timelineEntry(is, "label", pm, it.created, obj{"label": clone(st.labels[g.labelID[l]]), "body": "1"})
	}
	if it.milestone != 0 {
		st.timelineEntry(is, "milestone", pm, it.created, obj{"milestone": clone(st.milestones[it.milestone]), "old_milestone": nil})
	}
	if it.person != "" {
		st.timelineEntry(is, "assignees", actor, it.started, obj{"assignee": clone(actor), "removed_assignee": false})
	}
	for _, d := range it.dependsOn {
		ref := depRef{owner: st.owner, repo: st.name, index: d.number}
		st.deps[it.number] = append(st.deps[it.number], ref)
		at := it.created.Add(time.Hour)
		st.timelineEntry(is, "add_dependency", pm, at, obj{"dependent_issue": st.renderIssue(st.issues[d.number])})
		st.timelineEntry(st.issues[d.number], "add_dependency", pm, at, obj{"dependent_issue": st.renderIssue(is)})
	}
	if it.trackedSecs > 0 {
		at := it.closed
		if at.IsZero() {
			at = it.updated
		}
		id := st.nextTimeID
		st.nextTimeID++
		t := obj{"id": float64(id), "created": fmtTime(at), "time": float64(it.trackedSecs),
			"user_id": st.users[it.person]["id"], "user_name": it.person, "issue_id": float64(is.id)}
		st.times = append(st.times, &timeState{issue: is.number, o: t})
		entry := clone(t)
		st.timelineEntry(is, "add_time_manual", actor, at, obj{"body": (time.Duration(it.trackedSecs) * time.Second).String(), "tracked_time": entry})
	}
	if it.pullFor != nil {
		pr := st.issues[it.pullFor.number]
		pr.body = fmt.Sprintf("Fixes #%d", it.number)
		pr.pull["body"] = pr.body
		pr.title = it.pullFor.title
		st.timelineEntry(is, "pull_ref", st.users[it.person], pr.createdAt, obj{"ref_issue": st.renderIssue(pr), "ref_action": "closes"})
	}
	if !it.closed.IsZero() {
		st.timelineEntry(is, "close", actor, it.closed, nil)
	}
}

// countMilestones fills each milestone's open and closed issue counts.
func (g *generator) countMilestones() {
	openN, closedN := map[int64]int{}, map[int64]int{}
	for _, is := range g.st.issues {
		if is.milestone == 0 || is.pull != nil {
			continue
		}
		if is.state == "open" {
			openN[is.milestone]++
		} else {
			closedN[is.milestone]++
		}
	}
	for id, m := range g.st.milestones {
		m["open_issues"], m["closed_issues"] = openN[id], closedN[id]
	}
}

// genCalendar is a person's working time for the history: hours from 09:00
// local on working days, minus time off.
type genCalendar struct {
	loc   *time.Location
	hours float64
	days  [7]bool
	off   [][2]time.Time
}

func (c genCalendar) works(day time.Time) bool {
	if !c.days[day.Weekday()] {
		return false
	}
	for _, r := range c.off {
		if !day.Before(r[0]) && !day.After(r[1]) {
			return false
		}
	}
	return true
}

// advance returns when hours of work that start at t end.
func (c genCalendar) advance(t time.Time, hours float64) time.Time {
	t = t.In(c.loc)
	for range 5000 {
		day := dateIn(t, c.loc)
		open := day.Add(9 * time.Hour)
		shut := open.Add(time.Duration(c.hours * float64(time.Hour)))
		if !c.works(day) || !t.Before(shut) {
			t = day.AddDate(0, 0, 1).Add(9 * time.Hour)
			continue
		}
		if t.Before(open) {
			t = open
		}
		left := shut.Sub(t)
		need := time.Duration(hours * float64(time.Hour))
		if need <= left {
			return t.Add(need).UTC().Truncate(time.Second)
		}
		hours -= left.Hours()
		t = day.AddDate(0, 0, 1).Add(9 * time.Hour)
	}
	return t.UTC().Truncate(time.Second)
}

func dateIn(t time.Time, loc *time.Location) time.Time {
	t = t.In(loc)
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
}

func endOfDay(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 23, 59, 59, 0, time.UTC)
}
