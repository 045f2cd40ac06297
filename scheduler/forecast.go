package scheduler

// Monte Carlo schedule. Choices a project manager would otherwise ask about:
//
//   - Work order is one fixed list for all trials: priority (p/0 first), then
//     hard deadlines (the issue's deadline/hard or a hard milestone), then the
//     earliest milestone due date (no due date last), then issues already
//     steeping or in review, then issue number; dependencies are then pulled
//     ahead of their dependents (an issue ranks as its best-ranked dependent
//     when that is better, and a topological sort always takes the
//     best-ranked ready issue), so a dependency already ahead of its
//     dependent changes no one's order. Each person works their share of the list in
//     that order, one issue at a time; an issue whose dependencies are not
//     finished makes its person wait rather than skip ahead. Because nothing
//     in a trial re-orders or reassigns on sampled durations, more work can
//     never make anything earlier.
//   - Unassigned issues go to the team member who frees up first (can start
//     the issue earliest, then has been free longest, then login order) in a
//     planning pass where every issue takes its median effort; every trial
//     keeps that choice, and the issue is marked Unassigned with that person
//     as its likely assignee. Choosing again in each trial from the sampled
//     durations would be a greedy list scheduler, which can finish things
//     earlier when other work grows (Graham's anomalies: in our generated
//     projects 9% of issue finishes moved earlier when estimates grew); a
//     fixed choice keeps each trial monotone. The team is Input.People; when
//     it is empty, everyone who holds an assignment; when nobody does, one
//     virtual member with the default calendar.
//   - An assignee missing from Input.People works on the default calendar
//     (6 h Monday to Friday, UTC) and takes only their own issues.
//   - Effort: lognormal from Calibration.EffortParams of the estimate's
//     nominal hours. An issue without an estimate is taken as est/m with a
//     sigma 1.5 times wider. A steeping or in-review issue with SpentHours
//     draws its total effort conditioned on exceeding SpentHours and
//     schedules only the remainder.
//   - Unschedulable issues (a dependency on an unknown issue, a dependency
//     cycle, an estimate label above est/xl such as est/xxl) and everything
//     depending on them are left out of every trial, reported with zero
//     dates and their reason; their milestones are forecast from the rest.
//   - A milestone's date in a trial is the finish of its last open issue; a
//     milestone with no schedulable open issue is done now. Its critical
//     chain is walked back from that issue through whatever bound each start:
//     the dependency that finished last, or the same person's previous issue.
//     CriticalFreq counts the trials in which an issue is on its own
//     milestone's chain; issues without a milestone share one chain, that of
//     the last of them to finish.
//   - Slack is due − p80 in whole working days (Monday to Friday) between
//     their dates (UTC), as people read dates: 0 when p80 falls on the due
//     date, negative when after it. PDue counts trials finishing on or before
//     the due instant, to two decimals (as it is shown everywhere).
//   - Milestone quantiles are exact (nearest rank over all trials). Issue
//     quantiles come from a 256-bucket histogram per issue of whole UTC days
//     from today (2, 4, ... days per bucket when a pilot of the first 256
//     trials reaches further out): a quantile's date is exact within a day
//     and monotone in the work, its time of day interpolated. Person load
//     is the median over trials.
//   - Dates are rounded to the minute.
//   - Randomness: Options.Seed, or InputSeed(in) when 0; draws are keyed by
//     (seed, issue number, trial), so the output is identical for identical
//     inputs whatever Options.Workers, and a what-if reuses every draw it does
//     not touch. Trials run in blocks of 64 on all cores; results are merged
//     as sums, never in completion order.
//   - Calendars are precomputed over a horizon of four times the busiest
//     person's expected load plus a year; beyond it work is extrapolated as if
//     done around the clock (optimistic, so it can never make more work
//     finish earlier). Only far tails ever reach it.

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Trial limits.
const (
	DefaultTrials = 2000
	MaxTrials     = 100000
)

// Unschedulable reasons.
const (
	ReasonCycle             = "cycle"
	ReasonMissingDependency = "missing_dependency"
	ReasonTooLarge          = "too_large"
)

// missingEstimateSigmaFactor widens the effort spread of an issue without an
// estimate, which is taken as est/m.
const missingEstimateSigmaFactor = 1.5

// Run forecasts the input's open issues by Monte Carlo over the schedule.
func Run(in Input, opts Options) (Forecast, error) {
	p, err := newPlan(in, opts)
	if err != nil {
		return Forecast{}, err
	}
	return p.run(), nil
}

// planItem is one schedulable open issue, in schedule order.
type planItem struct {
	key        uint64  // draw stream
	scale      float32 // exp(mu) of its effort
	spent      float32 // hours already spent, subtracted from the draw
	tab        int32   // offset of its sigma table
	lo         uint32  // first table slot (truncation at spent)
	span       uint32  // drawTableSize - lo
	person     int32   // index into plan.people (-1 until planUnassigned picks one)
	unassigned bool    // person chosen by planUnassigned
	group      int32   // index into plan.groups
	depLo      int32   // deps[depLo:depHi] are positions of its dependencies
	depHi      int32
	issue      int32 // index into Input.Issues
}

type planPerson struct {
	login string
	tl    *timeline
	start float64 // working coordinate of the origin
}

// planGroup is a milestone (or "no milestone", id 0) with open work.
type planGroup struct {
	id    int64
	items int
}

// plan is an input compiled for the kernel: everything that does not change
// between trials.
type plan struct {
	in      Input
	origin  time.Time
	trials  int
	seed    uint64
	workers int
	items   []planItem
	deps    []int32
	tables  []float32
	// shared correlates a trial's draws (Calibration.SharedSigma), nil
	// when they are independent; sharedKey is its draw stream.
	shared    *copula
	sharedKey uint64
	people    []planPerson
	tls       []*timeline // per person, the kernel's copy of people[k].tl
	pool      []int32
	poolPos   []int32 // per person: slot in pool, -1 when not in it
	groups    []planGroup
	unsched   map[int64]string // open issue number -> reason
	openIdx   []int32          // open issues (Input.Issues indices) by number
	itemOf    map[int64]int32  // issue number -> position, schedulable only
	// prevSame is, per item, the previous item of the same person, -1 none.
	prevSame []int32
	// groupTails is, per group, its last item of each person, in list
	// order: the only items that can be the group's last to finish.
	groupTails [][]int32
	trace      bool // record each item's start (tests)
	// doneBy, when set (RunDoneBy), has every block counted by local day
	// into doneByHist.
	doneBy     *doneByDays
	doneByHist []uint32
}

// newPlan compiles in.
func newPlan(in Input, opts Options) (*plan, error) {
	if in.Now.IsZero() {
		return nil, errors.New("forecast: input has no Now")
	}
	p := &plan{in: in, origin: in.Now, trials: opts.Trials, seed: opts.Seed, workers: opts.Workers}
	if p.trials == 0 {
		p.trials = DefaultTrials
	}
	if p.trials < 0 || p.trials > MaxTrials {
		return nil, fmt.Errorf("forecast: trials %d outside 1..%d", opts.Trials, MaxTrials)
	}
	if p.seed == 0 {
		p.seed = InputSeed(in)
	}
	if p.workers <= 0 {
		p.workers = runtime.GOMAXPROCS(0)
	}

	// Issues by number; the first of duplicate numbers wins.
	byNumber := make(map[int64]int32, len(in.Issues))
	for i, is := range in.Issues {
		if _, dup := byNumber[is.Number]; !dup {
			byNumber[is.Number] = int32(i)
		}
	}
	milestones := make(map[int64]Milestone, len(in.Milestones))
	for _, m := range in.Milestones {
		milestones[m.ID] = m
	}
	for _, i := range byNumber {
		if in.Issues[i].State != Done {
			p.openIdx = append(p.openIdx, i)
		}
	}
	slices.SortFunc(p.openIdx, func(a, b int32) int { return cmp.Compare(in.Issues[a].Number, in.Issues[b].Number) })

	// Rank the open issues by the work-order key.
	type orderKey struct {
		prio    int
		hard    bool
		due     int64
		started bool
		number  int64
	}
	keys := make([]orderKey, len(in.Issues))
	for _, i := range p.openIdx {
		is := in.Issues[i]
		m, ok := milestones[is.Milestone]
		due := int64(math.MaxInt64)
		if ok && !m.Due.IsZero() {
			due = m.Due.Unix()
		}
		keys[i] = orderKey{is.Priority, is.HardDeadline || (ok && m.Hard), due, is.State == Steeping || is.State == InReview, is.Number}
	}
	ranked := slices.Clone(p.openIdx)
	slices.SortFunc(ranked, func(a, b int32) int {
		ka, kb := &keys[a], &keys[b]
		if c := cmp.Compare(ka.prio, kb.prio); c != 0 {
			return c
		}
		if ka.hard != kb.hard {
			if ka.hard {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(ka.due, kb.due); c != 0 {
			return c
		}
		if ka.started != kb.started {
			if ka.started {
				return -1
			}
			return 1
		}
		return cmp.Compare(ka.number, kb.number)
	})
	rank := make([]int32, len(in.Issues))
	for r, i := range ranked {
		rank[i] = int32(r)
	}

	// Dependencies between open issues; unknown ones and oversize estimates
	// make an issue unschedulable outright.
	p.unsched = make(map[int64]string)
	openDeps := make([][]int32, len(in.Issues))
	dependents := make([][]int32, len(in.Issues))
	indeg := make([]int32, len(in.Issues))
	for _, i := range p.openIdx {
		is := in.Issues[i]
		if tooLarge(is.Labels) && is.Estimate == "" {
			p.unsched[is.Number] = ReasonTooLarge
		}
		for k, d := range is.DependsOn {
			if slices.Contains(is.DependsOn[:k], d) {
				continue
			}
			j, ok := byNumber[d]
			if !ok {
				if _, bad := p.unsched[is.Number]; !bad {
					p.unsched[is.Number] = ReasonMissingDependency
				}
				continue
			}
			if in.Issues[j].State == Done {
				continue
			}
			openDeps[i] = append(openDeps[i], j)
			dependents[j] = append(dependents[j], i)
			indeg[i]++
		}
	}

	// A first topological pass finds what never becomes ready (on or behind
	// a cycle) and what inherits an unschedulable reason.
	order := topoOrder(p.openIdx, rank, dependents, slices.Clone(indeg))
	inOrder := make([]bool, len(in.Issues))
	for _, i := range order {
		inOrder[i] = true
	}
	for _, i := range p.openIdx {
		if !inOrder[i] {
			p.unsched[in.Issues[i].Number] = ReasonCycle
		}
	}
	// Whatever depends on an unschedulable issue inherits its reason.
	if len(p.unsched) > 0 {
		for _, i := range order {
			if _, bad := p.unsched[in.Issues[i].Number]; bad {
				continue
			}
			for _, j := range openDeps[i] {
				if r, bad := p.unsched[in.Issues[j].Number]; bad {
					p.unsched[in.Issues[i].Number] = r
					break
				}
			}
		}
	}
	// Dependencies are pulled ahead of their dependents: an issue ranks as
	// its best-ranked schedulable dependent (transitively) when that is
	// better than its own rank, so what urgent work needs is done first and
	// a dependency already ahead of its dependent changes no one's order.
	// The final order takes the best-ranked ready issue by that rank.
	eff := slices.Clone(rank)
	for k := len(order) - 1; k >= 0; k-- {
		i := order[k]
		for _, j := range dependents[i] {
			if _, bad := p.unsched[in.Issues[j].Number]; !bad && inOrder[j] {
				eff[i] = min(eff[i], eff[j])
			}
		}
	}
	byEff := slices.Clone(order)
	slices.SortStableFunc(byEff, func(a, b int32) int {
		if c := cmp.Compare(eff[a], eff[b]); c != 0 {
			return c
		}
		return cmp.Compare(rank[a], rank[b])
	})
	pulled := make([]int32, len(in.Issues))
	for r, i := range byEff {
		pulled[i] = int32(r)
	}
	order = topoOrder(order, pulled, dependents, indeg)

	// People: the team first (login order), then outside assignees.
	team := slices.Clone(in.People)
	slices.SortStableFunc(team, func(a, b Person) int { return strings.Compare(a.Login, b.Login) })
	personIdx := map[string]int32{}
	var cals []Calendar
	addPerson := func(login string, cal Calendar) int32 {
		if k, ok := personIdx[login]; ok {
			return k
		}
		k := int32(len(p.people))
		personIdx[login] = k
		p.people = append(p.people, planPerson{login: login})
		cals = append(cals, cal)
		return k
	}
	for _, person := range team {
		p.pool = append(p.pool, addPerson(person.Login, person.Calendar))
	}
	var outside []string
	for _, i := range order {
		is := in.Issues[i]
		if _, bad := p.unsched[is.Number]; bad || is.Assignee == "" {
			continue
		}
		if _, ok := personIdx[is.Assignee]; !ok && !slices.Contains(outside, is.Assignee) {
			outside = append(outside, is.Assignee)
		}
	}
	slices.Sort(outside)
	for _, login := range outside {
		k := addPerson(login, Calendar{})
		if len(team) == 0 {
			p.pool = append(p.pool, k)
		}
	}
	if len(p.pool) == 0 {
		p.pool = append(p.pool, addPerson("", Calendar{}))
	}
	p.poolPos = slices.Repeat([]int32{-1}, len(p.people))
	for ps, k := range p.pool {
		p.poolPos[k] = int32(ps)
	}

	// Milestone groups and effort tables.
	if c := in.Calibration; c.Sigma > 0 && c.SharedSigma/c.Sigma >= minSharedCorrelation {
		p.shared = newCopula(min(c.SharedSigma/c.Sigma, 0.95))
		p.sharedKey = issueStream(p.seed, sharedDrawKey)
	}
	groupIdx := map[int64]int32{}
	tableAt := map[float64]int32{}
	p.itemOf = make(map[int64]int32, len(order))
	meanByPerson := make([]float64, len(p.people))
	var poolMean float64
	for _, i := range order {
		is := in.Issues[i]
		if _, bad := p.unsched[is.Number]; bad {
			continue
		}
		p.itemOf[is.Number] = int32(len(p.items))
		g, ok := groupIdx[is.Milestone]
		if !ok {
			g = int32(len(p.groups))
			groupIdx[is.Milestone] = g
			p.groups = append(p.groups, planGroup{id: is.Milestone})
		}
		p.groups[g].items++
		size := is.Estimate
		widen := 1.0
		if !size.Valid() {
			size, widen = SizeM, missingEstimateSigmaFactor
		}
		mu, sigma := in.Calibration.EffortParams(size.NominalHours(), is.Labels, is.Assignee)
		sigma *= widen
		spent := 0.0
		if (is.State == Steeping || is.State == InReview) && is.SpentHours > 0 {
			spent = is.SpentHours
		}
		tab, ok := tableAt[sigma]
		if !ok {
			tab = int32(len(p.tables))
			tableAt[sigma] = tab
			p.tables = append(p.tables, make([]float32, drawTableSize)...)
			sigmaTable(p.tables[tab:tab+drawTableSize], sigma)
		}
		lo := truncationIndex(mu, sigma, spent)
		it := planItem{
			key: issueStream(p.seed, drawKey(is)), scale: float32(math.Exp(mu)), spent: float32(spent),
			tab: tab, lo: lo, span: drawTableSize - lo,
			person: -1, group: g, issue: i,
		}
		mean := math.Exp(mu + sigma*sigma/2)
		if is.Assignee != "" {
			it.person = personIdx[is.Assignee]
			meanByPerson[it.person] += mean
		} else {
			it.unassigned = true
			poolMean += mean
		}
		p.items = append(p.items, it)
	}
	for k := range p.items {
		it := &p.items[k]
		it.depLo = int32(len(p.deps))
		for _, j := range openDeps[it.issue] {
			p.deps = append(p.deps, p.itemOf[in.Issues[j].Number])
		}
		it.depHi = int32(len(p.deps))
	}

	// One horizon for every timeline: four times the busiest person's
	// expected load plus a year, since anyone may wait on the busiest
	// person's work. Past it, timelines extrapolate optimistically (see
	// workingBeyond). The horizon only grows with the load, which keeps
	// more work from ever moving a date earlier.
	poolShare := poolMean / float64(len(p.pool))
	days := 0
	for k := range p.people {
		c := cals[k].normalized()
		load := meanByPerson[k]
		if p.poolPos[k] >= 0 {
			load += poolShare
		}
		days = max(days, int(load*4/c.HoursPerDay*7/5)+400)
	}
	days = min(days, maxCalendarDays)
	// People on the same plain calendar share one timeline (they are
	// read-only): the replay's hundreds of modelled workers are one.
	type plainCalendar struct {
		hpd  float64
		days [7]bool
		loc  *time.Location
	}
	plain := map[plainCalendar]*timeline{}
	for k := range p.people {
		c := cals[k]
		if len(c.Holidays) == 0 && len(c.TimeOff) == 0 {
			key := plainCalendar{c.HoursPerDay, c.WorkingDays, c.Location}
			if plain[key] == nil {
				plain[key] = newTimeline(c, p.origin, days)
			}
			p.people[k].tl = plain[key]
		} else {
			p.people[k].tl = newTimeline(c, p.origin, days)
		}
		p.people[k].start = p.people[k].tl.working(0)
		p.tls = append(p.tls, p.people[k].tl)
	}
	p.planUnassigned(personIdx, in.Planned)
	// Each person works their items in list order, so the item before one
	// on the same person is fixed by the plan.
	p.prevSame = make([]int32, len(p.items))
	lastOf := slices.Repeat([]int32{-1}, len(p.people))
	for pos, it := range p.items {
		p.prevSame[pos] = lastOf[it.person]
		lastOf[it.person] = int32(pos)
	}
	tailOf := make(map[[2]int32]int32)
	for pos, it := range p.items {
		tailOf[[2]int32{it.group, it.person}] = int32(pos)
	}
	p.groupTails = make([][]int32, len(p.groups))
	for key, pos := range tailOf {
		p.groupTails[key[0]] = append(p.groupTails[key[0]], pos)
	}
	for _, tails := range p.groupTails {
		slices.Sort(tails)
	}
	return p, nil
}

// planUnassigned gives every unassigned item its person: whoever frees
// first (can start it earliest; then whoever has been free longest; then
// login order) in one schedule where every issue takes its median effort.
// Every trial keeps that choice. A choice remade in each trial would follow
// the sampled durations and, like any greedy list scheduler, could finish
// something earlier when other work grows (Graham's anomalies); a fixed
// choice keeps every trial monotone in the work. The plan's choices
// (Input.Planned) win while that person is still on the team.
func (p *plan) planUnassigned(personIdx map[string]int32, pinned map[int64]string) {
	free := make([]float64, len(p.people))
	freeAt := make([]float64, len(p.people))
	for k := range p.people {
		free[k] = p.people[k].start
		freeAt[k] = max(0, p.tls[k].finishAt(free[k]))
	}
	fin := make([]float64, len(p.items))
	for pos := range p.items {
		it := &p.items[pos]
		slot := it.lo + (drawTableSize/2*it.span)>>drawBits
		eff := max(float64(it.scale*p.tables[int(it.tab)+int(slot)]-it.spent), minRemainingHours)
		ready := 0.0
		for _, d := range p.deps[it.depLo:it.depHi] {
			ready = max(ready, fin[d])
		}
		if it.person < 0 {
			login, isPinned := pinned[p.in.Issues[it.issue].Number]
			if k, onTeam := personIdx[login]; isPinned && onTeam && p.poolPos[k] >= 0 {
				it.person = k
			} else {
				best := p.pool[0]
				for _, q := range p.pool[1:] {
					sq, sb := max(freeAt[q], ready), max(freeAt[best], ready)
					if sq < sb || (sq == sb && freeAt[q] < freeAt[best]) {
						best = q
					}
				}
				it.person = best
			}
		}
		who := it.person
		tl := p.tls[who]
		u := max(free[who], tl.working(ready))
		free[who] = u + eff
		fin[pos] = tl.finishAt(free[who])
		freeAt[who] = fin[pos]
	}
}

// plannedAssignments returns the person planUnassigned chose for each
// unassigned issue, by number.
func (p *plan) plannedAssignments() map[int64]string {
	out := map[int64]string{}
	for _, it := range p.items {
		if it.unassigned {
			out[p.in.Issues[it.issue].Number] = p.people[it.person].login
		}
	}
	return out
}

// drawKey is what keys an issue's draws: its DrawKey, else its number.
func drawKey(is Issue) int64 {
	if is.DrawKey != 0 {
		return is.DrawKey
	}
	return is.Number
}

// tooLarge reports an estimate label beyond est/xl, such as est/xxl.
func tooLarge(labels []string) bool {
	for _, l := range labels {
		l = strings.ToLower(strings.TrimSpace(l))
		if s, ok := strings.CutPrefix(l, "est/"); ok && len(s) >= 3 && strings.HasSuffix(s, "l") && strings.Trim(s[:len(s)-1], "x") == "" {
			return true
		}
	}
	return false
}

// topoOrder is the topological order of issues (dependents by issue
// index, indeg their open dependency counts, consumed) that always takes
// the best-ranked ready issue; issues that never become ready are left
// out.
func topoOrder(issues, rank []int32, dependents [][]int32, indeg []int32) []int32 {
	ready := &rankHeap{rank: rank}
	for _, i := range issues {
		if indeg[i] == 0 {
			ready.push(i)
		}
	}
	out := make([]int32, 0, len(issues))
	for ready.len() > 0 {
		i := ready.pop()
		out = append(out, i)
		for _, j := range dependents[i] {
			indeg[j]--
			if indeg[j] == 0 {
				ready.push(j)
			}
		}
	}
	return out
}

// rankHeap is a min-heap of issue indices by rank.
type rankHeap struct {
	rank []int32
	a    []int32
}

func (h *rankHeap) len() int { return len(h.a) }
func (h *rankHeap) less(i, j int) bool {
	return h.rank[h.a[i]] < h.rank[h.a[j]]
}
func (h *rankHeap) push(x int32) {
	h.a = append(h.a, x)
	for i := len(h.a) - 1; i > 0; {
		par := (i - 1) / 2
		if !h.less(i, par) {
			break
		}
		h.a[i], h.a[par] = h.a[par], h.a[i]
		i = par
	}
}
func (h *rankHeap) pop() int32 {
	top := h.a[0]
	n := len(h.a) - 1
	h.a[0] = h.a[n]
	h.a = h.a[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h.less(l, m) {
			m = l
		}
		if r < n && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h.a[i], h.a[m] = h.a[m], h.a[i]
		i = m
	}
	return top
}

// histQuantile reads quantile q from a histogram of total counts, in hours
// after the origin. The bucket that holds it is exact; inside a one-day
// bucket it interpolates linearly (from the origin in today's), staying on
// that date. A bucket of
// several days gives its last day (two minutes before its end), so a
// quantile read from wider buckets of later finishes is never on an
// earlier date.
func histQuantile(h []uint32, total int, q float64, g issueGrid) float64 {
	target := q * float64(total)
	var cum float64
	for b, c := range h {
		if c == 0 {
			continue
		}
		if cum+float64(c) >= target {
			end := (g.base+float64(b)+1)/g.invW - 2.0/60
			if g.days > 1 {
				return end
			}
			// From the bucket's start, or the origin for today's.
			start := max((g.base+float64(b))/g.invW, 0)
			frac := (target - cum) / float64(c)
			return min(start+frac*(end-start), end)
		}
		cum += float64(c)
	}
	return (g.base+histBuckets)/g.invW - 2.0/60
}

// quantileRank is the 0-based index of the nearest-rank quantile q of n
// values.
func quantileRank(n int, q float64) int {
	k := int(math.Ceil(q*float64(n))) - 1
	return max(0, min(k, n-1))
}

// nthValue reorders a so that a[k] holds the value a sorted a would hold
// there, everything before it is no greater and everything after no
// smaller, and returns a[k]. Quickselect with a median-of-three pivot and a
// three-way partition (runs of equal values are common: a person without
// work is free at the same moment in every trial), O(len(a)) on average.
func nthValue(a []float64, k int) float64 {
	lo, hi := 0, len(a)-1
	for lo < hi {
		x, y, z := a[lo], a[(lo+hi)/2], a[hi]
		pivot := max(min(x, y), min(max(x, y), z))
		lt, i, gt := lo, lo, hi
		for i <= gt {
			switch v := a[i]; {
			case v < pivot:
				a[lt], a[i] = a[i], a[lt]
				lt++
				i++
			case v > pivot:
				a[i], a[gt] = a[gt], a[i]
				gt--
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt - 1
		case k > gt:
			lo = gt + 1
		default:
			return a[k]
		}
	}
	return a[k]
}

// quantiles returns the nearest-rank quantiles qs (ascending) of values,
// reordering values.
func quantiles(values []float64, qs ...float64) []float64 {
	out := make([]float64, len(qs))
	hi := len(values)
	for i := len(qs) - 1; i >= 0; i-- {
		k := quantileRank(len(values), qs[i])
		out[i] = nthValue(values[:hi], k)
		hi = k + 1
	}
	return out
}

// at converts hours after the origin to a date, rounded to the minute.
func (p *plan) at(h float64) time.Time {
	return p.origin.Add(time.Duration(h * float64(time.Hour))).Round(time.Minute).UTC()
}

func (p *plan) summarize(acc *workerAcc, grids []issueGrid, groupFin, personHours, personFree [][]float64) Forecast {
	in := p.in
	T := p.trials
	f := Forecast{Now: in.Now, Trials: T, Seed: p.seed}
	groupOf := map[int64]int{}
	for g, gr := range p.groups {
		groupOf[gr.id] = g
	}
	open := map[int64]int{}
	for _, i := range p.openIdx {
		is := in.Issues[i]
		open[is.Milestone]++
		out := IssueForecast{Number: is.Number, Assignee: is.Assignee}
		if r, bad := p.unsched[is.Number]; bad {
			out.Unschedulable = r
			f.Issues = append(f.Issues, out)
			continue
		}
		pos := p.itemOf[is.Number]
		h := acc.hist[int(pos)*histBuckets : int(pos+1)*histBuckets]
		out.P10 = p.at(histQuantile(h, T, 0.10, grids[pos]))
		out.P50 = p.at(histQuantile(h, T, 0.50, grids[pos]))
		out.P80 = p.at(histQuantile(h, T, 0.80, grids[pos]))
		out.CriticalFreq = round3(float64(acc.crit[pos]) / float64(T))
		if p.items[pos].unassigned {
			out.Unassigned = true
			out.Assignee = p.people[p.items[pos].person].login
		}
		f.Issues = append(f.Issues, out)
	}

	groupQs, medians := p.seriesQuantiles(groupFin, personHours, personFree)

	ms := slices.Clone(in.Milestones)
	slices.SortFunc(ms, func(a, b Milestone) int { return cmp.Compare(a.ID, b.ID) })
	for _, m := range ms {
		if m.Closed && open[m.ID] == 0 {
			continue
		}
		out := MilestoneForecast{ID: m.ID, Title: m.Title, Due: m.Due, Hard: m.Hard, Open: open[m.ID]}
		g, ok := groupOf[m.ID]
		if !ok {
			// Nothing schedulable left: done now.
			out.P10, out.P50, out.P80 = p.at(0), p.at(0), p.at(0)
			if !m.Due.IsZero() && !m.Due.Before(in.Now) {
				out.PDue = 1
			}
		} else {
			qs := groupQs[g]
			out.P10, out.P50, out.P80 = p.at(qs[0]), p.at(qs[1]), p.at(qs[2])
			for i, v := range qs[3:] {
				out.Quantiles[i] = p.at(v)
			}
			fin := finishWeeks(groupFin[g], m, p.origin)
			f.Finish = append(f.Finish, fin)
			if !m.Due.IsZero() {
				out.PDue = RoundPDue(float64(fin.OnTime) / float64(T))
			}
		}
		if !m.Due.IsZero() {
			out.SlackDays = float64(workdaysBetweenDates(out.P80, m.Due))
		}
		f.Milestones = append(f.Milestones, out)
	}

	assigned := make([]int, len(p.people))
	for _, it := range p.items {
		assigned[it.person]++
	}
	for k, person := range p.people {
		issues := assigned[k]
		if person.login == "" && issues == 0 {
			continue
		}
		f.Load = append(f.Load, PersonLoad{
			Login:       person.login,
			Hours:       math.Round(medians[k][0]*10) / 10,
			Issues:      issues,
			FreeFromP50: p.at(medians[k][1]),
		})
	}
	slices.SortFunc(f.Load, func(a, b PersonLoad) int { return strings.Compare(a.Login, b.Login) })
	return f
}

// finishWeeks counts a milestone's trial finishes (hours after origin) by
// week, the weeks ending at the due date (at origin without one); see
// MilestoneFinish. The comparison is PDue's own (v <= due), so the weeks
// up to the due date hold exactly the on-time trials.
func finishWeeks(fin []float64, m Milestone, origin time.Time) MilestoneFinish {
	out := MilestoneFinish{ID: m.ID, Trials: len(fin)}
	anchor := 0.0
	if !m.Due.IsZero() {
		anchor = m.Due.Sub(origin).Hours()
	}
	const weekH = 7 * 24
	// Bins are clamped before the conversion to int, which is undefined
	// for values out of range (an infinite draw, say); the histogram's
	// span is bounded below.
	const maxBin = 1 << 40
	bin := func(v float64) int { return int(min(max(math.Ceil((v-anchor)/weekH)-1, -maxBin), maxBin)) }
	lo, hi := 0, -1
	for i, v := range fin {
		k := bin(v)
		if i == 0 || k < lo {
			lo = k
		}
		if i == 0 || k > hi {
			hi = k
		}
		if !m.Due.IsZero() && v <= anchor {
			out.OnTime++
		}
	}
	if hi < lo {
		return out
	}
	out.Weeks = make([]int, min(hi-lo+1, MaxFinishWeeks))
	for _, v := range fin {
		if k := bin(v) - lo; k < len(out.Weeks) {
			out.Weeks[k]++
		} else {
			out.Later++
		}
	}
	start := origin
	if !m.Due.IsZero() {
		start = m.Due
	}
	out.From = start.Add(time.Duration(lo) * Week).UTC()
	return out
}

// seriesQuantiles computes the exact quantiles of the per-trial series on
// all workers (each selection is a serial pass over every trial, and
// together they would otherwise leave the other cores idle): per group
// p10, p50, p80 then the MilestoneQuantiles steps; per person the median
// hours and free time. Each series is selected on its own, so the values
// do not depend on which worker took it.
func (p *plan) seriesQuantiles(groupFin, personHours, personFree [][]float64) (groupQs [][]float64, medians [][2]float64) {
	steps := make([]float64, MilestoneQuantiles)
	for i := range steps {
		steps[i] = float64(i) / (MilestoneQuantiles - 1)
	}
	groupQs = make([][]float64, len(groupFin))
	medians = make([][2]float64, len(personHours))
	tasks := len(groupFin) + len(personHours)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(p.workers, tasks)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= tasks {
					return
				}
				if i < len(groupFin) {
					// 24 quantiles: one sort beats 24 selections, and a
					// sorted series holds every nearest-rank quantile at
					// its rank.
					v := groupFin[i]
					slices.Sort(v)
					qs := make([]float64, 0, 3+len(steps))
					for _, q := range append([]float64{0.10, 0.50, 0.80}, steps...) {
						qs = append(qs, v[quantileRank(len(v), q)])
					}
					groupQs[i] = qs
					continue
				}
				k := i - len(groupFin)
				medians[k] = [2]float64{quantiles(personHours[k], 0.5)[0], quantiles(personFree[k], 0.5)[0]}
			}
		})
	}
	wg.Wait()
	return groupQs, medians
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
