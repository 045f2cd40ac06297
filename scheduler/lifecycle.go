package scheduler

// Lifecycle rules. Infer evaluates every issue of a project at one instant
// with a single rule function (lifeStateRule), which Replay also uses to
// rebuild an issue's transitions from its timeline, so live ingest and
// backfill can never disagree about what a state means.
//
// States, first match wins:
//  1. done: closed. Closed with a discard label is done and Discarded. The
//     discard words are wontfix, duplicate, invalid and not-planned, matched
//     case-insensitively on the whole label or on the last segment of a
//     scoped label ("resolution/wontfix"); spaces, underscores, hyphens and
//     apostrophes are ignored, so "Won't Fix" and "not_planned" count too.
//  2. in_review: open, and an open pull request either closes it with a
//     keyword in its title or body (close/closes/closed, fix/fixes/fixed,
//     resolve/resolves/resolved, any case, optionally followed by a colon,
//     then whitespace, then "#N" or "owner/repo#N" for this repository) or
//     has the issue's ref as its head branch ("refs/heads/" is ignored on
//     both sides). "fixes#5" and "prefix #5" are not closing references.
//  3. steeping: open with an assignee.
//  4. triage: open, no assignee, and an estimate (a known est/* size or one
//     above est/xl), an explicit p/0..p/3 label, or a milestone.
//  5. diagnosis: anything else.
//
// Flags, on open issues only (a done issue carries none):
//   - Blocked: a dependency in this repository is open. Dependencies on
//     another repository's issues are listed in the provenance but neither
//     block nor count as missing, since the mirror cannot see them.
//   - Stale: steeping, and at least StaleWorkingDays (default 3) whole
//     working days on the first assignee's calendar lie strictly between the
//     day of the last activity and today. Activity is the latest of creation,
//     update and comment times, so on Mon–Fri a Thursday update goes stale on
//     the next Wednesday, not on Sunday.
//   - MissingEstimate: no known est/* size and no size above est/xl.
//   - Unschedulable, with the first reason that applies: "cycle" (the issue
//     is on a dependency cycle among open issues), "missing_dependency" (it
//     depends on a number this repository does not have), "too_large" (its
//     estimate is above est/xl: est/xxl, est/xxxl, ... or est/2xl, est/3xl,
//     ...; any other unknown est/* value is only a missing estimate). An open
//     issue that depends on an unschedulable one inherits that reason, with
//     "depends:#N" in its provenance, since it cannot start either.
//   - Aging: set after the flow metrics by MarkAging (flow.go), not by
//     Infer: steeping or in review for longer than the service level
//     expectation, with the age and the SLE as provenance.
//
// Every derived value carries its provenance: short strings naming the
// labels, pull requests, assignees and dependencies it came from, such as
// "label:est/m", "pr:#12 closes #5" or "assignee:alice".

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultStaleWorkingDays is how many whole working days without activity
// make a steeping issue stale when LifecycleOptions does not say.
const DefaultStaleWorkingDays = 3

// The reasons an issue cannot be scheduled.
const (
	UnschedulableCycle             = "cycle"
	UnschedulableMissingDependency = "missing_dependency"
	UnschedulableTooLarge          = "too_large"
)

// DependencyRef names an issue another one depends on: a number in this
// repository, or in Repo ("owner/repo") when that is another repository.
type DependencyRef struct {
	Number int64
	Repo   string
}

// IssueFacts is what the mirror knows about one issue or pull request. It
// maps field for field from the mirror's issue row, with the row's
// dependencies gathered into DependsOn.
type IssueFacts struct {
	Number int64
	IsPull bool
	Title  string
	Body   string
	Closed bool
	// ClosedAt is zero while the issue is open.
	ClosedAt  time.Time
	Labels    []string
	Assignees []string
	// Milestone is the Gitea milestone id, 0 when none.
	Milestone int64
	// Ref is the issue's branch reference; for a pull request, its head
	// branch.
	Ref    string
	Merged bool
	// ClosingRefs are issue numbers a pull request closes, as the mirror
	// parsed them; the lifecycle also parses Title and Body itself and uses
	// both.
	ClosingRefs    []int64
	CreatedAt      time.Time
	UpdatedAt      time.Time
	LastActivityAt time.Time
	DependsOn      []DependencyRef
}

// ProjectFacts is one project's issues and pull requests.
type ProjectFacts struct {
	// Repo is "owner/repo"; a closing reference written "owner/repo#N"
	// counts only when it names this repository.
	Repo   string
	Issues []IssueFacts
}

// LifecycleOptions tunes the lifecycle flags. The zero value applies the
// defaults.
type LifecycleOptions struct {
	// StaleWorkingDays is how many whole working days without activity make
	// a steeping issue stale; 0 means DefaultStaleWorkingDays.
	StaleWorkingDays int
}

func (o LifecycleOptions) staleDays() int {
	if o.StaleWorkingDays > 0 {
		return o.StaleWorkingDays
	}
	return DefaultStaleWorkingDays
}

// IssueStatus is an issue's inferred state and flags at one instant.
type IssueStatus struct {
	Number    int64 `json:"number"`
	State     State `json:"state"`
	Discarded bool  `json:"discarded,omitempty"`
	// Estimate is the known est/* size, empty when missing or above est/xl.
	Estimate        Size    `json:"estimate,omitempty"`
	Blocked         bool    `json:"blocked,omitempty"`
	BlockedBy       []int64 `json:"blockedBy,omitempty"`
	Stale           bool    `json:"stale,omitempty"`
	MissingEstimate bool    `json:"missingEstimate,omitempty"`
	// Aging is set by MarkAging from the flow metrics: open, started and
	// older than the service level expectation.
	Aging bool `json:"aging,omitempty"`
	// Unschedulable is "", "cycle", "missing_dependency" or "too_large".
	Unschedulable string     `json:"unschedulable,omitempty"`
	Why           Provenance `json:"why"`
}

// Provenance says where each derived value of an IssueStatus came from.
type Provenance struct {
	State           []string `json:"state,omitempty"`
	Discarded       []string `json:"discarded,omitempty"`
	Blocked         []string `json:"blocked,omitempty"`
	Stale           []string `json:"stale,omitempty"`
	MissingEstimate []string `json:"missingEstimate,omitempty"`
	Aging           []string `json:"aging,omitempty"`
	Unschedulable   []string `json:"unschedulable,omitempty"`
}

// Infer evaluates the state and flags of every issue of the project at now.
// Pull requests are read (they put issues in review) but get no status of
// their own. people gives each assignee's calendar for staleness; an
// assignee not listed works the default calendar. The result is sorted by
// issue number.
func Infer(p ProjectFacts, now time.Time, people []Person, opts LifecycleOptions) []IssueStatus {
	byNumber := make(map[int64]*IssueFacts, len(p.Issues))
	var openPulls []*IssueFacts
	for i := range p.Issues {
		f := &p.Issues[i]
		byNumber[f.Number] = f
	}
	for _, f := range byNumber {
		if f.IsPull && !f.Closed {
			openPulls = append(openPulls, f)
		}
	}
	reviews := newLifePullIndex(openPulls, p.Repo)
	calendars := make(map[string]Calendar, len(people))
	for _, person := range people {
		calendars[person.Login] = person.Calendar
	}

	issues := make([]*IssueFacts, 0, len(byNumber))
	for _, f := range byNumber {
		if !f.IsPull {
			issues = append(issues, f)
		}
	}
	slices.SortFunc(issues, func(a, b *IssueFacts) int { return cmp.Compare(a.Number, b.Number) })
	out := make([]IssueStatus, 0, len(issues))
	for _, f := range issues {
		rule := lifeStateRule(*f, reviews.linksTo(*f))
		st := IssueStatus{Number: f.Number, State: rule.state, Discarded: rule.discarded, Estimate: lifeReadEstimate(f.Labels).size}
		st.Why.State = rule.why
		st.Why.Discarded = rule.discardWhy
		if !f.Closed {
			lifeFlags(&st, *f, byNumber, p.Repo, now, calendars, opts)
		}
		out = append(out, st)
	}
	lifeUnschedulable(out, byNumber, p.Repo)
	return out
}

// lifeRuleResult is the outcome of the state rule.
type lifeRuleResult struct {
	state      State
	discarded  bool
	why        []string
	discardWhy []string
}

// lifeStateRule is the one lifecycle rule, shared by Infer and Replay.
// reviews are the provenance strings of the open pull requests that link to
// the issue at the instant evaluated.
func lifeStateRule(f IssueFacts, reviews []string) lifeRuleResult {
	if f.Closed {
		r := lifeRuleResult{state: Done, why: []string{"closed"}}
		for _, l := range f.Labels {
			if lifeIsDiscardLabel(l) {
				r.discarded = true
				r.discardWhy = append(r.discardWhy, "label:"+l)
			}
		}
		return r
	}
	if len(reviews) > 0 {
		return lifeRuleResult{state: InReview, why: slices.Clone(reviews)}
	}
	if len(f.Assignees) > 0 {
		why := make([]string, len(f.Assignees))
		for i, a := range f.Assignees {
			why[i] = "assignee:" + a
		}
		return lifeRuleResult{state: Steeping, why: why}
	}
	var why []string
	if est := lifeReadEstimate(f.Labels); est.label != "" && (est.size != "" || est.tooLarge) {
		why = append(why, "label:"+est.label)
	}
	for _, l := range f.Labels {
		if lifeIsPriorityLabel(l) {
			why = append(why, "label:"+l)
		}
	}
	if f.Milestone != 0 {
		why = append(why, lifeMilestoneWhy(f.Milestone))
	}
	if len(why) > 0 {
		return lifeRuleResult{state: Triage, why: why}
	}
	return lifeRuleResult{state: Diagnosis, why: []string{"no assignee, estimate, priority or milestone"}}
}

func lifeMilestoneWhy(id int64) string {
	if id < 0 {
		// Replay could not tell which milestone a removed one was.
		return "milestone:unknown"
	}
	return "milestone:" + strconv.FormatInt(id, 10)
}

// lifeDiscardWords are the discard labels, normalized by lifeNormalizeWord.
var lifeDiscardWords = map[string]bool{"wontfix": true, "duplicate": true, "invalid": true, "notplanned": true}

func lifeIsDiscardLabel(label string) bool {
	l := strings.TrimSpace(label)
	if i := strings.LastIndexByte(l, '/'); i >= 0 {
		l = l[i+1:]
	}
	return lifeDiscardWords[lifeNormalizeWord(l)]
}

func lifeNormalizeWord(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '_', '-', '\'', '\u2019':
			return -1
		}
		return r
	}, strings.ToLower(s))
}

func lifeIsPriorityLabel(label string) bool {
	l := strings.ToLower(strings.TrimSpace(label))
	return len(l) == 3 && strings.HasPrefix(l, "p/") && l[2] >= '0' && l[2] <= '3'
}

// lifeTooLargePattern reads sizes above est/xl: two or more x's before the
// l (xxl, xxxl) or a multiplier of at least 2 (2xl, 3xl, 10xl).
var lifeTooLargePattern = regexp.MustCompile(`^(?:x{2,}l|(?:[2-9]|[1-9][0-9]+)xl)$`)

// lifeEstimate is what an issue's est/* labels say. A known size wins over
// one above est/xl, which wins over an unreadable one.
type lifeEstimate struct {
	size     Size   // a known size, or empty
	tooLarge bool   // no known size, but one above est/xl
	label    string // the label it was read from
	unknown  []string
}

func lifeReadEstimate(labels []string) lifeEstimate {
	var e lifeEstimate
	for _, l := range labels {
		low := strings.ToLower(strings.TrimSpace(l))
		if !strings.HasPrefix(low, "est/") {
			continue
		}
		v := strings.TrimPrefix(low, "est/")
		switch {
		case Size(v).Valid():
			e.size, e.tooLarge, e.label = Size(v), false, l
		case lifeTooLargePattern.MatchString(v):
			if e.size == "" {
				e.tooLarge, e.label = true, l
			}
		default:
			e.unknown = append(e.unknown, l)
		}
	}
	return e
}

// lifeClosingRefPattern follows Gitea's reference keywords: a keyword at the
// start or after whitespace or an opening bracket, an optional colon,
// whitespace, then "#N" or "owner/repo#N".
var lifeClosingRefPattern = regexp.MustCompile(
	`(?i)(?:^|[\s(\[])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):?\s+([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)?#(\d+)\b`)

// ParseClosingRefs returns the issue numbers text closes through a keyword
// (close/closes/closed, fix/fixes/fixed, resolve/resolves/resolved, any
// case) followed by whitespace and "#N", or "owner/repo#N" when owner/repo
// is repo (compared case-insensitively). Sorted, without duplicates.
func ParseClosingRefs(text, repo string) []int64 {
	var refs []int64
	for _, m := range lifeClosingRefPattern.FindAllStringSubmatch(text, -1) {
		if m[1] != "" && (repo == "" || !strings.EqualFold(m[1], repo)) {
			continue
		}
		n, err := strconv.ParseInt(m[2], 10, 64)
		if err != nil || n <= 0 {
			continue
		}
		refs = append(refs, n)
	}
	slices.Sort(refs)
	return slices.Compact(refs)
}

// lifeClosingRefs is what a pull request closes: the mirror's parse and our
// own, together.
func lifeClosingRefs(pull IssueFacts, repo string) []int64 {
	refs := append(slices.Clone(pull.ClosingRefs), ParseClosingRefs(pull.Title+"\n"+pull.Body, repo)...)
	slices.Sort(refs)
	return slices.Compact(refs)
}

func lifeBranch(ref string) string {
	return strings.TrimPrefix(strings.TrimSpace(ref), "refs/heads/")
}

// lifePullIndex finds the pull requests of a set that link to an issue.
type lifePullIndex struct {
	byIssue  map[int64][]string
	byBranch map[string][]string
}

func newLifePullIndex(pulls []*IssueFacts, repo string) lifePullIndex {
	ix := lifePullIndex{byIssue: map[int64][]string{}, byBranch: map[string][]string{}}
	slices.SortFunc(pulls, func(a, b *IssueFacts) int { return cmp.Compare(a.Number, b.Number) })
	for _, p := range pulls {
		for _, n := range lifeClosingRefs(*p, repo) {
			ix.byIssue[n] = append(ix.byIssue[n], fmt.Sprintf("pr:#%d closes #%d", p.Number, n))
		}
		if b := lifeBranch(p.Ref); b != "" {
			ix.byBranch[b] = append(ix.byBranch[b], fmt.Sprintf("pr:#%d head branch %s", p.Number, b))
		}
	}
	return ix
}

func (ix lifePullIndex) linksTo(f IssueFacts) []string {
	links := ix.byIssue[f.Number]
	if b := lifeBranch(f.Ref); b != "" {
		links = append(slices.Clone(links), ix.byBranch[b]...)
	}
	return links
}

// lifeFlags sets the flags of an open issue, except Unschedulable's
// inherited part, which needs every issue's own reasons first.
func lifeFlags(st *IssueStatus, f IssueFacts, byNumber map[int64]*IssueFacts, repo string, now time.Time,
	calendars map[string]Calendar, opts LifecycleOptions) {
	est := lifeReadEstimate(f.Labels)
	if est.size == "" && !est.tooLarge {
		st.MissingEstimate = true
		if len(est.unknown) > 0 {
			for _, l := range est.unknown {
				st.Why.MissingEstimate = append(st.Why.MissingEstimate, "label:"+l+" (unknown size)")
			}
		} else {
			st.Why.MissingEstimate = []string{"no est/* label"}
		}
	}
	if est.tooLarge {
		st.Unschedulable = UnschedulableTooLarge
		st.Why.Unschedulable = []string{"label:" + est.label + " (above est/xl)"}
	}

	deps := slices.Clone(f.DependsOn)
	slices.SortFunc(deps, func(a, b DependencyRef) int {
		if c := strings.Compare(a.Repo, b.Repo); c != 0 {
			return c
		}
		return cmp.Compare(a.Number, b.Number)
	})
	var missing []string
	for _, d := range deps {
		if !lifeSameRepo(d, repo) {
			st.Why.Blocked = append(st.Why.Blocked, fmt.Sprintf("depends:%s#%d (other repository, not followed)", d.Repo, d.Number))
			continue
		}
		dep, ok := byNumber[d.Number]
		switch {
		case !ok:
			missing = append(missing, fmt.Sprintf("depends:#%d missing", d.Number))
		case !dep.Closed:
			st.Blocked = true
			st.BlockedBy = append(st.BlockedBy, d.Number)
			st.Why.Blocked = append(st.Why.Blocked, fmt.Sprintf("depends:#%d open", d.Number))
		}
	}
	if !st.Blocked {
		// Only the reasons for a flag that is set are worth showing.
		st.Why.Blocked = nil
	}
	if len(missing) > 0 {
		// A missing dependency outranks too_large: the issue cannot be
		// placed at all until someone finds what it waits for.
		st.Unschedulable = UnschedulableMissingDependency
		st.Why.Unschedulable = missing
	}

	if st.State == Steeping {
		who := f.Assignees[0]
		last := f.CreatedAt
		for _, t := range []time.Time{f.UpdatedAt, f.LastActivityAt} {
			if t.After(last) {
				last = t
			}
		}
		days := opts.staleDays()
		idle := lifeWholeWorkingDaysBetween(calendars[who], last, now, days)
		if idle >= days {
			st.Stale = true
			st.Why.Stale = []string{
				"last activity " + last.UTC().Format(time.RFC3339),
				fmt.Sprintf("%d+ working days idle on %s's calendar", days, who),
			}
		}
	}
}

func lifeSameRepo(d DependencyRef, repo string) bool {
	return d.Repo == "" || strings.EqualFold(d.Repo, repo)
}

// lifeWholeWorkingDaysBetween counts the working days on cal whose local
// date lies strictly after from's and strictly before to's, stopping at
// limit so a years-old activity costs no more than a recent one.
func lifeWholeWorkingDaysBetween(cal Calendar, from, to time.Time, limit int) int {
	loc := cal.Location
	if loc == nil {
		loc = time.UTC
	}
	fy, fm, fd := from.In(loc).Date()
	ty, tm, td := to.In(loc).Date()
	day := time.Date(fy, fm, fd, 12, 0, 0, 0, loc).AddDate(0, 0, 1)
	end := time.Date(ty, tm, td, 12, 0, 0, 0, loc)
	n := 0
	for day.Before(end) && n < limit {
		if lifeWorksOn(cal, day) {
			n++
		}
		day = day.AddDate(0, 0, 1)
	}
	return n
}

// lifeWorksOn reports whether cal works on day's local date. A Calendar
// without working days works Monday to Friday.
func lifeWorksOn(cal Calendar, day time.Time) bool {
	wd := cal.WorkingDays
	if wd == [7]bool{} {
		wd = [7]bool{time.Monday: true, time.Tuesday: true, time.Wednesday: true, time.Thursday: true, time.Friday: true}
	}
	if !wd[day.Weekday()] {
		return false
	}
	key := lifeDateKey(day)
	for _, h := range cal.Holidays {
		if lifeDateKey(h) == key {
			return false
		}
	}
	for _, r := range cal.TimeOff {
		if lifeDateKey(r.From) <= key && key <= lifeDateKey(r.To) {
			return false
		}
	}
	return true
}

func lifeDateKey(t time.Time) int {
	y, m, d := t.Date()
	return y*10000 + int(m)*100 + d
}

// lifeUnschedulable marks the issues on dependency cycles, then passes
// every unschedulable reason on to the open issues that depend on it.
func lifeUnschedulable(out []IssueStatus, byNumber map[int64]*IssueFacts, repo string) {
	index := make(map[int64]int, len(out))
	for i, st := range out {
		index[st.Number] = i
	}
	// The graph: open items (issues and pull requests) and their
	// dependencies on open items of this repository.
	edges := map[int64][]int64{}
	var nodes []int64
	for n, f := range byNumber {
		if f.Closed {
			continue
		}
		nodes = append(nodes, n)
		for _, d := range f.DependsOn {
			if !lifeSameRepo(d, repo) {
				continue
			}
			if dep, ok := byNumber[d.Number]; ok && !dep.Closed {
				edges[n] = append(edges[n], d.Number)
			}
		}
	}
	slices.Sort(nodes)
	for n := range edges {
		slices.Sort(edges[n])
		edges[n] = slices.Compact(edges[n])
	}
	for _, scc := range lifeStronglyConnected(nodes, edges) {
		if len(scc) == 1 && !slices.Contains(edges[scc[0]], scc[0]) {
			continue
		}
		members := map[int64]bool{}
		for _, n := range scc {
			members[n] = true
		}
		for _, n := range scc {
			i, ok := index[n]
			if !ok {
				continue
			}
			st := &out[i]
			// A cycle outranks the issue's other reasons: nothing else can
			// be fixed until it is broken.
			st.Unschedulable = UnschedulableCycle
			st.Why.Unschedulable = []string{"cycle:" + lifeCyclePath(n, edges, members)}
		}
	}

	// Inherit along dependencies; cycles are already marked, so what is left
	// to walk is acyclic.
	done := map[int64]bool{}
	var visit func(n int64) string
	visit = func(n int64) string {
		i, ok := index[n]
		if !ok {
			return "" // an open pull request: nothing to inherit from
		}
		st := &out[i]
		if done[n] || st.Unschedulable != "" {
			done[n] = true
			return st.Unschedulable
		}
		done[n] = true
		for _, d := range edges[n] {
			if r := visit(d); r != "" {
				st.Unschedulable = r
				st.Why.Unschedulable = []string{fmt.Sprintf("depends:#%d (%s)", d, r)}
				break
			}
		}
		return st.Unschedulable
	}
	for _, st := range out {
		if st.State != Done {
			visit(st.Number)
		}
	}
}

// lifeStronglyConnected is Tarjan's algorithm over nodes in the given
// order; each component comes back sorted.
func lifeStronglyConnected(nodes []int64, edges map[int64][]int64) [][]int64 {
	index := map[int64]int{}
	low := map[int64]int{}
	onStack := map[int64]bool{}
	var stack []int64
	var out [][]int64
	next := 0
	var connect func(v int64)
	connect = func(v int64) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range edges[v] {
			if _, seen := index[w]; !seen {
				connect(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var scc []int64
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				scc = append(scc, w)
				if w == v {
					break
				}
			}
			slices.Sort(scc)
			out = append(out, scc)
		}
	}
	for _, v := range nodes {
		if _, seen := index[v]; !seen {
			connect(v)
		}
	}
	return out
}

// lifeCyclePath spells the shortest cycle from n back to n inside its
// component, e.g. "#3→#4→#3", so a person sees which link to cut.
func lifeCyclePath(n int64, edges map[int64][]int64, members map[int64]bool) string {
	prev := map[int64]int64{}
	queue := []int64{n}
	seen := map[int64]bool{}
	found := false
	for len(queue) > 0 && !found {
		v := queue[0]
		queue = queue[1:]
		for _, w := range edges[v] {
			if !members[w] {
				continue
			}
			if w == n {
				prev[n] = v
				found = true
				break
			}
			if !seen[w] {
				seen[w] = true
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	path := []int64{n}
	for v := prev[n]; v != n; v = prev[v] {
		path = append(path, v)
	}
	path = append(path, n)
	slices.Reverse(path)
	parts := make([]string, len(path))
	for i, v := range path {
		parts[i] = "#" + strconv.FormatInt(v, 10)
	}
	return strings.Join(parts, "→")
}
