package scheduler

// Monte Carlo schedule. Choices a project manager would otherwise ask about:
//
//   - Work order is one fixed list for all trials: priority (p/0 first), then
//     hard deadlines (the issue's deadline/hard or a hard milestone), then the
//     earliest milestone due date (no due date last), then issues already
//     steeping or in review, then issue number; dependencies are then pulled
//     ahead of their dependents (a topological sort that always takes the
//     best-ranked ready issue). Each person works their share of the list in
//     that order, one issue at a time; an issue whose dependencies are not
//     finished makes its person wait rather than skip ahead. Because nothing
//     in a trial re-orders on sampled durations, more work can never make
//     anything earlier (no list-scheduling anomalies) for assigned work.
//   - Unassigned issues go, at their turn in the list, to the team member who
//     frees up first (ties: login order) and are marked Unassigned. That
//     choice depends on the sampled durations, so for unassigned work the
//     "more work is never earlier" guarantee holds only in distribution, not
//     per trial. The team is Input.People; when it is empty, everyone who
//     holds an assignment; when nobody does, one virtual member with the
//     default calendar.
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
//   - Slack is due − p80 in working days of the team calendar (6 h Monday to
//     Friday, UTC), to one decimal. PDue counts trials finishing on or before
//     the due instant.
//   - Milestone quantiles are exact (nearest rank over all trials). Issue
//     quantiles come from a 256-bucket histogram per issue whose range is set
//     by a pilot of the first trials, interpolated inside the bucket: exact to
//     a fraction of the issue's spread. Person load is the median over trials.
//   - Dates are rounded to the minute.

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
	key      uint64 // draw stream
	tab      int32  // offset of its effort table
	person   int32  // index into plan.people, -1 for the team pool
	poolSlot int32  // index among pool items, -1 when assigned
	group    int32  // index into plan.groups
	depLo    int32  // deps[depLo:depHi] are positions of its dependencies
	depHi    int32
	issue    int32 // index into Input.Issues
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
	in       Input
	origin   time.Time
	trials   int
	seed     uint64
	workers  int
	items    []planItem
	deps     []int32
	tables   []float32
	people   []planPerson
	pool     []int32
	poolN    int
	groups   []planGroup
	unsched  map[int64]string // open issue number -> reason
	openIdx  []int32          // open issues (Input.Issues indices) by number
	itemOf   map[int64]int32  // issue number -> position, schedulable only
	minHours float64
}

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
	for num, i := range byNumber {
		if in.Issues[i].State != Done {
			p.openIdx = append(p.openIdx, i)
		}
		_ = num
	}
	slices.SortFunc(p.openIdx, func(a, b int32) int { return cmpInt64(in.Issues[a].Number, in.Issues[b].Number) })

	// Rank the open issues by the work-order key.
	ranked := slices.Clone(p.openIdx)
	keyOf := func(i int32) (prio int, hard bool, due int64, started bool) {
		is := in.Issues[i]
		m, ok := milestones[is.Milestone]
		due = math.MaxInt64
		if ok && !m.Due.IsZero() {
			due = m.Due.Unix()
		}
		return is.Priority, is.HardDeadline || (ok && m.Hard), due, is.State == Steeping || is.State == InReview
	}
	slices.SortStableFunc(ranked, func(a, b int32) int {
		pa, ha, da, sa := keyOf(a)
		pb, hb, db, sb := keyOf(b)
		if c := cmp.Compare(pa, pb); c != 0 {
			return c
		}
		if ha != hb {
			if ha {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(da, db); c != 0 {
			return c
		}
		if sa != sb {
			if sa {
				return -1
			}
			return 1
		}
		return cmpInt64(in.Issues[a].Number, in.Issues[b].Number)
	})
	rank := make(map[int32]int, len(ranked))
	for r, i := range ranked {
		rank[i] = r
	}

	// Dependencies between open issues; unknown ones and oversize estimates
	// make an issue unschedulable outright.
	p.unsched = make(map[int64]string)
	openDeps := make(map[int32][]int32, len(p.openIdx))
	dependents := make(map[int32][]int32)
	indeg := make(map[int32]int, len(p.openIdx))
	for _, i := range p.openIdx {
		is := in.Issues[i]
		if tooLarge(is.Labels) && is.Estimate == "" {
			p.unsched[is.Number] = ReasonTooLarge
		}
		seen := map[int64]bool{}
		for _, d := range is.DependsOn {
			if seen[d] {
				continue
			}
			seen[d] = true
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

	// Topological order that always takes the best-ranked ready issue; what
	// never becomes ready sits on or behind a cycle.
	ready := &rankHeap{rank: rank}
	for _, i := range p.openIdx {
		if indeg[i] == 0 {
			ready.push(i)
		}
	}
	order := make([]int32, 0, len(p.openIdx))
	for ready.len() > 0 {
		i := ready.pop()
		order = append(order, i)
		for _, j := range dependents[i] {
			indeg[j]--
			if indeg[j] == 0 {
				ready.push(j)
			}
		}
	}
	inOrder := make(map[int32]bool, len(order))
	for _, i := range order {
		inOrder[i] = true
	}
	for _, i := range p.openIdx {
		if !inOrder[i] {
			p.unsched[in.Issues[i].Number] = ReasonCycle
		}
	}
	// Whatever depends on an unschedulable issue inherits its reason.
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

	// Milestone groups and effort tables.
	groupIdx := map[int64]int32{}
	tableAt := map[[3]float64]int32{}
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
		tk := [3]float64{mu, sigma, spent}
		tab, ok := tableAt[tk]
		if !ok {
			tab = int32(len(p.tables))
			tableAt[tk] = tab
			p.tables = append(p.tables, make([]float32, drawTableSize)...)
			lognormalTable(p.tables[tab:tab+drawTableSize], mu, sigma, spent)
		}
		it := planItem{key: issueStream(p.seed, is.Number), tab: tab, person: -1, poolSlot: -1, group: g, issue: i}
		mean := math.Exp(mu + sigma*sigma/2)
		if is.Assignee != "" {
			it.person = personIdx[is.Assignee]
			meanByPerson[it.person] += mean
		} else {
			it.poolSlot = int32(p.poolN)
			p.poolN++
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

	// Timelines long enough for four times each person's expected load plus
	// a year; past that they extrapolate optimistically (see workingBeyond).
	// The horizon only grows with the load, which keeps more work from ever
	// moving a date earlier.
	poolShare := poolMean / float64(len(p.pool))
	for k := range p.people {
		c := cals[k].normalized()
		load := meanByPerson[k]
		if slices.Contains(p.pool, int32(k)) {
			load += poolShare
		}
		days := int(load*4/c.HoursPerDay*7/5) + 400
		if days > maxCalendarDays {
			days = maxCalendarDays
		}
		p.people[k].tl = newTimeline(cals[k], p.origin, days)
		p.people[k].start = p.people[k].tl.working(0)
	}
	return p, nil
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

// rankHeap is a min-heap of issue indices by rank.
type rankHeap struct {
	rank map[int32]int
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

// trialState is one worker's scratch space, reused for every trial.
type trialState struct {
	start, fin []float64 // per item, wall-clock hours since origin
	effort     []float32
	pred       []int32 // per item: the item that bound its start, -1 none
	who        []int32 // per item: the person who did it
	free       []float64
	freeWall   []float64 // when each person can next start, wall-clock
	last       []int32
	hours      []float64
}

func (p *plan) newTrialState() *trialState {
	n, np := len(p.items), len(p.people)
	return &trialState{
		start: make([]float64, n), fin: make([]float64, n), effort: make([]float32, n),
		pred: make([]int32, n), who: make([]int32, n),
		free: make([]float64, np), freeWall: make([]float64, np), last: make([]int32, np), hours: make([]float64, np),
	}
}

// runTrial schedules one trial into s.
func (p *plan) runTrial(trial int, s *trialState) {
	for k := range p.people {
		s.free[k] = p.people[k].start
		s.freeWall[k] = p.people[k].tl.startAt(p.people[k].start)
		s.last[k] = -1
		s.hours[k] = 0
	}
	items, deps, tables, people, pool := p.items, p.deps, p.tables, p.people, p.pool
	fin := s.fin
	for pos := range items {
		it := &items[pos]
		eff := tables[int(it.tab)+int(drawIndex(it.key, trial))]
		ready, depPred := 0.0, int32(-1)
		for _, d := range deps[it.depLo:it.depHi] {
			if f := fin[d]; f > ready {
				ready, depPred = f, d
			}
		}
		who := it.person
		if who < 0 {
			who = pool[0]
			best := s.freeWall[who]
			for _, q := range pool[1:] {
				if fw := s.freeWall[q]; fw < best {
					best, who = fw, q
				}
			}
		}
		tl := people[who].tl
		u, pred := s.free[who], s.last[who]
		if depPred >= 0 {
			if ur := tl.working(ready); ur > u {
				u, pred = ur, depPred
			}
		}
		end := u + float64(eff)
		s.start[pos] = tl.startAt(u)
		fin[pos] = tl.finishAt(end)
		s.free[who] = end
		s.freeWall[who] = tl.startAt(end)
		s.last[who] = int32(pos)
		s.hours[who] += float64(eff)
		s.effort[pos] = eff
		s.pred[pos] = pred
		s.who[pos] = who
	}
}

// Histogram layout for issue quantiles.
const (
	histBuckets = 256
	pilotTrials = 256
)

// issueGrid maps an item's finish hour to a histogram bucket: bucket b
// covers [(base+b)*width, (base+b+1)*width) hours after the origin.
type issueGrid struct {
	invW, base float64
}

func (g issueGrid) bucket(t float64) int {
	b := int(t*g.invW - g.base)
	if b < 0 {
		return 0
	}
	if b >= histBuckets {
		return histBuckets - 1
	}
	return b
}

// workerAcc is one worker's share of the results; merging sums them, so the
// outcome does not depend on which worker ran which trials.
type workerAcc struct {
	hist     []uint32 // items × histBuckets
	crit     []uint32 // per item: trials on its group's critical chain
	poolWho  []uint32 // pool items × pool size
	issueSum []int64  // per person: issues done, summed over trials
}

func (p *plan) run() Forecast {
	n, T := len(p.items), p.trials
	// Per-trial series that are few enough to keep whole: milestone
	// (group) finishes, person hours and person free times.
	groupFin := make([][]float64, len(p.groups))
	for g := range groupFin {
		groupFin[g] = make([]float64, T)
	}
	personHours := make([][]float64, len(p.people))
	personFree := make([][]float64, len(p.people))
	for k := range p.people {
		personHours[k] = make([]float64, T)
		personFree[k] = make([]float64, T)
	}

	grids := p.pilot()

	workers := min(p.workers, max(1, T/64))
	accs := make([]*workerAcc, workers)
	const block = 64
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		acc := &workerAcc{
			hist: make([]uint32, n*histBuckets), crit: make([]uint32, n),
			poolWho: make([]uint32, p.poolN*len(p.pool)), issueSum: make([]int64, len(p.people)),
		}
		accs[w] = acc
		wg.Go(func() {
			s := p.newTrialState()
			poolPos := make([]int32, len(p.people))
			for k, q := range p.pool {
				poolPos[q] = int32(k)
			}
			for {
				lo := int(next.Add(block)) - block
				if lo >= T {
					return
				}
				for trial := lo; trial < min(lo+block, T); trial++ {
					p.runTrial(trial, s)
					for pos := range p.items {
						acc.hist[pos*histBuckets+grids[pos].bucket(s.fin[pos])]++
						if sl := p.items[pos].poolSlot; sl >= 0 {
							acc.poolWho[int(sl)*len(p.pool)+int(poolPos[s.who[pos]])]++
						}
						acc.issueSum[s.who[pos]]++
					}
					p.markCritical(s, acc.crit, groupFin, trial)
					for k := range p.people {
						personHours[k][trial] = s.hours[k]
						personFree[k][trial] = p.people[k].tl.finishAt(s.free[k])
					}
				}
			}
		})
	}
	wg.Wait()
	for _, a := range accs[1:] {
		for i, v := range a.hist {
			accs[0].hist[i] += v
		}
		for i, v := range a.crit {
			accs[0].crit[i] += v
		}
		for i, v := range a.poolWho {
			accs[0].poolWho[i] += v
		}
		for i, v := range a.issueSum {
			accs[0].issueSum[i] += v
		}
	}
	return p.summarize(accs[0], grids, groupFin, personHours, personFree)
}

// markCritical records each group's finish for the trial and walks its
// critical chain back from the last-finishing issue.
func (p *plan) markCritical(s *trialState, crit []uint32, groupFin [][]float64, trial int) {
	for g := range p.groups {
		groupFin[g][trial] = -1
	}
	// Last finishing item per group; a small fixed set, so a scan per group
	// is cheaper than bookkeeping in the kernel.
	var lastPos [8]int32
	lasts := lastPos[:0]
	if len(p.groups) > len(lastPos) {
		lasts = make([]int32, 0, len(p.groups))
	}
	for range p.groups {
		lasts = append(lasts, -1)
	}
	for pos := range p.items {
		g := p.items[pos].group
		if f := s.fin[pos]; f > groupFin[g][trial] {
			groupFin[g][trial] = f
			lasts[g] = int32(pos)
		}
	}
	for g := range p.groups {
		for pos := lasts[g]; pos >= 0; pos = s.pred[pos] {
			if p.items[pos].group == int32(g) {
				crit[pos]++
			}
		}
	}
}

// pilot runs the first trials to size each issue's histogram: the range of
// pilot finishes, widened by that range on each side, in power-of-two-hour
// buckets aligned to the origin.
func (p *plan) pilot() []issueGrid {
	n := len(p.items)
	lo := make([]float64, n)
	hi := make([]float64, n)
	for i := range lo {
		lo[i], hi[i] = math.Inf(1), math.Inf(-1)
	}
	trials := min(pilotTrials, p.trials)
	var mu sync.Mutex
	var wg sync.WaitGroup
	workers := min(p.workers, max(1, trials/32))
	per := (trials + workers - 1) / workers
	for w := range workers {
		wg.Go(func() {
			s := p.newTrialState()
			l := slices.Repeat([]float64{math.Inf(1)}, n)
			h := slices.Repeat([]float64{math.Inf(-1)}, n)
			for t := w * per; t < min((w+1)*per, trials); t++ {
				p.runTrial(t, s)
				for i, f := range s.fin {
					l[i] = min(l[i], f)
					h[i] = max(h[i], f)
				}
			}
			mu.Lock()
			for i := range lo {
				lo[i] = min(lo[i], l[i])
				hi[i] = max(hi[i], h[i])
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	grids := make([]issueGrid, n)
	for i := range grids {
		span := hi[i] - lo[i]
		from := max(0, lo[i]-span)
		width := 1.0 / 64
		for width*histBuckets < (hi[i]+span)-from {
			width *= 2
		}
		grids[i] = issueGrid{invW: 1 / width, base: math.Floor(from / width)}
	}
	return grids
}

// histQuantile reads quantile q from a histogram of total counts,
// interpolating linearly inside the bucket that holds it.
func histQuantile(h []uint32, total int, q float64, g issueGrid) float64 {
	target := q * float64(total)
	var cum float64
	for b, c := range h {
		if c == 0 {
			continue
		}
		if cum+float64(c) >= target {
			frac := (target - cum) / float64(c)
			return (g.base + float64(b) + frac) / g.invW
		}
		cum += float64(c)
	}
	return (g.base + histBuckets) / g.invW
}

// milestoneQuantileSteps is how many steps MilestoneForecast.Quantiles has
// between probability 0 and 1 (5% each).
const milestoneQuantileSteps = 20

// rankQuantile is the nearest-rank quantile of sorted values.
func rankQuantile(sorted []float64, q float64) float64 {
	k := int(math.Ceil(q*float64(len(sorted)))) - 1
	k = max(0, min(k, len(sorted)-1))
	return sorted[k]
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
		if sl := p.items[pos].poolSlot; sl >= 0 {
			out.Unassigned = true
			counts := acc.poolWho[int(sl)*len(p.pool) : int(sl+1)*len(p.pool)]
			best := 0
			for k, c := range counts {
				if c > counts[best] {
					best = k
				}
			}
			out.Assignee = p.people[p.pool[best]].login
		}
		f.Issues = append(f.Issues, out)
	}

	ms := slices.Clone(in.Milestones)
	slices.SortFunc(ms, func(a, b Milestone) int { return cmpInt64(a.ID, b.ID) })
	team := Calendar{}
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
			sorted := slices.Clone(groupFin[g])
			slices.Sort(sorted)
			out.P10 = p.at(rankQuantile(sorted, 0.10))
			out.P50 = p.at(rankQuantile(sorted, 0.50))
			out.P80 = p.at(rankQuantile(sorted, 0.80))
			out.Quantiles = make([]time.Time, milestoneQuantileSteps+1)
			for i := range out.Quantiles {
				out.Quantiles[i] = p.at(rankQuantile(sorted, float64(i)/milestoneQuantileSteps))
			}
			if !m.Due.IsZero() {
				dueH := m.Due.Sub(p.origin).Hours()
				k, _ := slices.BinarySearch(sorted, math.Nextafter(dueH, math.Inf(1)))
				out.PDue = round3(float64(k) / float64(T))
			}
		}
		if !m.Due.IsZero() {
			out.SlackDays = math.Round(WorkingDaysBetween(team, out.P80, m.Due)*10) / 10
		}
		f.Milestones = append(f.Milestones, out)
	}

	for k, person := range p.people {
		if person.login == "" && acc.issueSum[k] == 0 {
			continue
		}
		hours := slices.Clone(personHours[k])
		slices.Sort(hours)
		free := slices.Clone(personFree[k])
		slices.Sort(free)
		f.Load = append(f.Load, PersonLoad{
			Login:       person.login,
			Hours:       math.Round(rankQuantile(hours, 0.5)*10) / 10,
			Issues:      int(math.Round(float64(acc.issueSum[k]) / float64(T))),
			FreeFromP50: p.at(rankQuantile(free, 0.5)),
		})
	}
	slices.SortFunc(f.Load, func(a, b PersonLoad) int { return strings.Compare(a.Login, b.Login) })
	return f
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
