package scheduler

// Rescue plans: for every milestone at risk (a due date, and less than an
// 80% chance of meeting it), a short ranked list of ready changes that
// would make the date, each with its consequence from the same what-if.
//
// The search is greedy over a few families of candidate changes, each
// forecast with the baseline's seed (common random numbers: a candidate
// differs from the baseline only by what it changed) at Trials trials:
//
//   - cut scope: move the fewest, lowest-priority issues of the milestone
//     that are not deadline/hard (nor already in review) to the next
//     milestone whose date is not hard, or to none, until p80 is on or
//     before the due date. With few candidates (rescueExactLimit) every
//     subset is tried, smallest first, so no search needs fewer issues;
//     with many, work the rest of the milestone needs is left out, the
//     others are taken lowest priority first, biggest first within a
//     priority, and the shortest prefix that makes the date is found by
//     bisection (which assumes moving more never makes it later);
//   - re-sequence: raise the critical-chain work of the milestone to p/0,
//     and lower competing work of the same people (not deadline/hard, not
//     in a hard milestone, not needed by the milestone) to p/3;
//   - reassign started work: move critical-chain work someone already holds
//     (steeping) from the person freeing last to the one freeing first, up
//     to three moves, each kept only when it helps. Unassigned work is never
//     assigned: the planner already gives it to whoever frees first;
//   - capacity: the hours per day of the person carrying most of the
//     critical chain that make the date (bisected, at most twice their
//     hours and never above 10);
//   - move the date (milestones whose deadline is not hard): the due date
//     its p80 gives, end of that day.
//
// The best candidate of each family is re-scored at the snapshot's trial
// count (RescueConfig.Rescore, the caller's exact path) and the options are
// ranked by the chance of the due date they reach, then by cost. An option
// never drops deadline/hard work nor moves a hard date; when none makes
// the date, the answer says so and still shows the best.

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// RescueKind names a family of rescue options.
type RescueKind string

// The rescue option families, in the order they are tried.
const (
	RescueCutScope   RescueKind = "cut_scope"
	RescueResequence RescueKind = "resequence"
	RescueReassign   RescueKind = "reassign"
	RescueCapacity   RescueKind = "capacity"
	RescueMoveDate   RescueKind = "move_date"
)

// AtRiskPDue is the chance of its due date under which a milestone is at
// risk and gets rescue options.
const AtRiskPDue = 0.8

// RescueCost is what an option gives up or disturbs.
type RescueCost struct {
	IssuesMoved   int     `json:"issuesMoved"`
	HoursMoved    float64 `json:"hoursMoved"`
	PeopleTouched int     `json:"peopleTouched"`
}

// RescueOption is one ready change and its consequence for the milestone.
type RescueOption struct {
	Kind    RescueKind `json:"kind"`
	Summary string     `json:"summary"`
	Changes []Change   `json:"changes"`
	// After is the milestone's band once the changes landed, as the
	// snapshot that follows will read it.
	After Band `json:"after"`
	// Makes: p80 on or before the due date (the new one, for move_date).
	Makes    bool       `json:"makes"`
	Cost     RescueCost `json:"cost"`
	CostText string     `json:"costText"`
}

// MilestoneRescue is the rescue of one milestone at risk.
type MilestoneRescue struct {
	Milestone int64     `json:"milestone"`
	Title     string    `json:"title"`
	Due       time.Time `json:"due"`
	Hard      bool      `json:"hard,omitempty"`
	Before    Band      `json:"before"`
	// Options are best first: highest chance of the due date, then
	// cheapest.
	Options []RescueOption `json:"options"`
	// CannotMake: no option within the rules makes the date; Note says so
	// (and Options still shows the best there is).
	CannotMake bool   `json:"cannotMake,omitempty"`
	Note       string `json:"note"`
	// Forecasts counts the candidates forecast for it (search and
	// re-scoring), what its search cost.
	Forecasts int `json:"forecasts"`
}

// RescueConfig tunes the search.
type RescueConfig struct {
	// Trials per candidate (default 2,000).
	Trials int
	// SnapshotTrials is the trial count chosen options are re-scored at
	// when Rescore is nil (default Trials).
	SnapshotTrials int
	// Workers per forecast (0: every core).
	Workers int
	// Rescore forecasts the input with an option's changes as the
	// snapshot after them will; nil runs the engine on ApplyChanges at
	// SnapshotTrials with the baseline's seed.
	Rescore func(changes []Change) (Forecast, error)
	// MaxMilestones bounds how many at-risk milestones are searched (0:
	// all), earliest due first.
	MaxMilestones int
	// Interrupt, when set, is asked before every candidate forecast; an
	// error stops the search with it (a caller whose result is no longer
	// wanted stops within one forecast).
	Interrupt func() error
}

// rescueExactLimit is the most cut-scope candidates whose every subset is
// tried, on projects of at most rescueExactIssues open issues (beyond, 255
// forecasts would cost more than the whole search may).
const (
	rescueExactLimit  = 8
	rescueExactIssues = 200
)

// maxRescueOptions bounds the options per milestone; maxReassign the
// started issues a reassignment tries to hand over.
// rescueMaxMoves the issues cut scope moves at most, which is also the
// most ops apply_changes takes in one batch.
const (
	maxRescueOptions = 5
	maxReassign      = 3
	rescueMaxMoves   = 100
)

// Rescue computes the rescue options of every milestone of base (the
// forecast of in) that is at risk. in should carry its plan (Input.Planned)
// so candidates are forecast on it.
func Rescue(in Input, base Forecast, cfg RescueConfig) ([]MilestoneRescue, error) {
	if cfg.Trials <= 0 {
		cfg.Trials = 2000
	}
	if cfg.SnapshotTrials <= 0 {
		cfg.SnapshotTrials = cfg.Trials
	}
	s := &rescueSearch{in: in, base: base, cfg: cfg, cache: map[string]Forecast{}}
	s.index()
	var risky []MilestoneForecast
	for _, m := range base.Milestones {
		if s.atRisk(m) {
			risky = append(risky, m)
		}
	}
	slices.SortStableFunc(risky, func(a, b MilestoneForecast) int {
		if c := a.Due.Compare(b.Due); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if cfg.MaxMilestones > 0 && len(risky) > cfg.MaxMilestones {
		risky = risky[:cfg.MaxMilestones]
	}
	out := make([]MilestoneRescue, 0, len(risky))
	for _, m := range risky {
		r, err := s.rescue(m)
		if err != nil {
			return nil, fmt.Errorf("rescue of milestone %s: %w", m.Title, err)
		}
		out = append(out, r)
	}
	return out, nil
}

type rescueSearch struct {
	in    Input
	base  Forecast
	cfg   RescueConfig
	cache map[string]Forecast
	// runs counts the forecasts run.
	runs int

	issues     map[int64]*Issue
	fc         map[int64]*IssueForecast
	milestones map[int64]*Milestone
	dependents map[int64][]int64
	hours      map[string]float64 // hours per day by login
	free       map[string]time.Time
}

func (s *rescueSearch) index() {
	s.issues = make(map[int64]*Issue, len(s.in.Issues))
	s.dependents = map[int64][]int64{}
	for k := range s.in.Issues {
		is := &s.in.Issues[k]
		s.issues[is.Number] = is
		for _, d := range is.DependsOn {
			s.dependents[d] = append(s.dependents[d], is.Number)
		}
	}
	s.fc = make(map[int64]*IssueForecast, len(s.base.Issues))
	for k := range s.base.Issues {
		s.fc[s.base.Issues[k].Number] = &s.base.Issues[k]
	}
	s.milestones = map[int64]*Milestone{}
	for k := range s.in.Milestones {
		s.milestones[s.in.Milestones[k].ID] = &s.in.Milestones[k]
	}
	s.hours = map[string]float64{}
	for _, p := range s.in.People {
		s.hours[p.Login] = p.Calendar.HoursPerDay
	}
	s.free = map[string]time.Time{}
	for _, l := range s.base.Load {
		s.free[l.Login] = l.FreeFromP50
	}
}

func (s *rescueSearch) atRisk(m MilestoneForecast) bool {
	ms := s.milestones[m.ID]
	return ms != nil && !ms.Closed && !m.Due.IsZero() && m.Open > 0 && RoundPDue(m.PDue) < AtRiskPDue
}

func (s *rescueSearch) openCount() int {
	n := 0
	for k := range s.in.Issues {
		if open(&s.in.Issues[k]) {
			n++
		}
	}
	return n
}

// open reports whether an issue is open work the schedule plans.
func open(is *Issue) bool { return is != nil && is.State != Done }

// rescueHours is an issue's nominal size as the forecast takes it (est/m
// when it has no estimate).
func rescueHours(is *Issue) float64 {
	if h := is.Estimate.NominalHours(); h > 0 {
		return h
	}
	return SizeM.NominalHours()
}

// forecast runs the search's forecast of the input with changes.
func (s *rescueSearch) forecast(changes []Change) (Forecast, error) {
	key := changesKey(changes)
	if fc, ok := s.cache[key]; ok {
		return fc, nil
	}
	if err := s.interrupted(); err != nil {
		return Forecast{}, err
	}
	in, _, err := ApplyChanges(s.in, changes)
	if err != nil {
		return Forecast{}, err
	}
	s.runs++
	fc, err := Run(in, Options{Trials: s.cfg.Trials, Seed: s.base.Seed, Workers: s.cfg.Workers})
	if err != nil {
		return Forecast{}, err
	}
	s.cache[key] = fc
	return fc, nil
}

func changesKey(cs []Change) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%s/%d/%s/%d/%d/%s/%s/%v/%v;", c.Kind, c.Issue, c.Estimate, c.Priority, c.Milestone,
			c.Due.Format(time.RFC3339), c.Person, c.HoursPerDay, c.Assignees)
	}
	return b.String()
}

// scored is a candidate's forecast of the milestone.
type scored struct {
	changes []Change
	m       *MilestoneForecast
}

func milestoneOf(fc Forecast, id int64) *MilestoneForecast {
	for k := range fc.Milestones {
		if fc.Milestones[k].ID == id {
			return &fc.Milestones[k]
		}
	}
	return nil
}

func (s *rescueSearch) score(id int64, changes []Change) (scored, error) {
	fc, err := s.forecast(changes)
	if err != nil {
		return scored{}, err
	}
	return scored{changes: changes, m: milestoneOf(fc, id)}, nil
}

// makes: the milestone's p80 is on or before its due date (due, when
// set, stands for a moved one).
func makes(m *MilestoneForecast) bool {
	if m == nil || m.Open == 0 || m.P80.IsZero() {
		return m != nil
	}
	return DateOf(m.P80) <= DateOf(m.Due)
}

func pDueOf(m *MilestoneForecast) float64 {
	if m == nil {
		return 0
	}
	return m.PDue
}

// better: a helps the milestone more than b (higher chance, then earlier
// p80).
func better(a, b *MilestoneForecast) bool {
	pa, pb := RoundPDue(pDueOf(a)), RoundPDue(pDueOf(b))
	if pa != pb {
		return pa > pb
	}
	if a == nil || b == nil {
		return a != nil
	}
	return DateOf(a.P80) < DateOf(b.P80)
}

type rescueCandidate struct {
	kind    RescueKind
	changes []Change
	summary string
	cost    RescueCost
	text    string
}

func (s *rescueSearch) rescue(m MilestoneForecast) (MilestoneRescue, error) {
	ms := s.milestones[m.ID]
	r := MilestoneRescue{Milestone: m.ID, Title: m.Title, Due: m.Due, Hard: ms.Hard, Before: BandOf(&m), Options: []RescueOption{}}
	runs := s.runs
	base, err := s.score(m.ID, nil)
	if err != nil {
		return r, err
	}
	var cands []rescueCandidate
	for _, family := range []func(MilestoneForecast, scored) ([]rescueCandidate, error){
		s.cutScope, s.resequence, s.reassign, s.capacity, s.moveDate,
	} {
		cs, err := family(m, base)
		if err != nil {
			return r, err
		}
		cands = append(cands, cs...)
	}
	for _, c := range cands {
		fc, err := s.rescore(c.changes)
		if err != nil {
			return r, err
		}
		after := milestoneOf(fc, m.ID)
		if after == nil || !better(after, &m) {
			continue // exactly scored, it does not help
		}
		r.Options = append(r.Options, RescueOption{Kind: c.kind, Summary: c.summary, Changes: c.changes,
			After: BandOf(after), Makes: makes(after), Cost: c.cost, CostText: c.text})
	}
	slices.SortStableFunc(r.Options, func(a, b RescueOption) int {
		if c := cmp.Compare(b.After.PDue, a.After.PDue); c != 0 {
			return c
		}
		return compareCost(a.Cost, b.Cost)
	})
	if len(r.Options) > maxRescueOptions {
		r.Options = r.Options[:maxRescueOptions]
	}
	due := shortDate(s.in.Now, m.Due)
	switch {
	case len(r.Options) == 0:
		r.CannotMake = true
		r.Note = fmt.Sprintf("Nothing within the rules makes %s's due date %s, nor improves its %d%% chance: deadline/hard work is never dropped%s.",
			m.Title, due, pct(m.PDue), map[bool]string{true: " and its date is hard", false: ""}[ms.Hard])
	case !slices.ContainsFunc(r.Options, func(o RescueOption) bool { return o.Makes }):
		r.CannotMake = true
		r.Note = fmt.Sprintf("No option within the rules makes %s's due date %s (deadline/hard work is never dropped%s); the best, %s, reaches %d%%.",
			m.Title, due, map[bool]string{true: ", its hard date never moved", false: ""}[ms.Hard], r.Options[0].Summary, pct(r.Options[0].After.PDue))
	default:
		n := 0
		for _, o := range r.Options {
			if o.Makes {
				n++
			}
		}
		r.Note = fmt.Sprintf("%s is at %d%% for %s; %d of %d options make the date, best first.", m.Title, pct(m.PDue), due, n, len(r.Options))
	}
	r.Forecasts = s.runs - runs
	return r, nil
}

func pct(p float64) int { return int(math.Round(p * 100)) }

func compareCost(a, b RescueCost) int {
	if c := cmp.Compare(a.IssuesMoved, b.IssuesMoved); c != 0 {
		return c
	}
	if c := cmp.Compare(a.HoursMoved, b.HoursMoved); c != 0 {
		return c
	}
	return cmp.Compare(a.PeopleTouched, b.PeopleTouched)
}

// interrupted is the caller's Interrupt, nil when there is none.
func (s *rescueSearch) interrupted() error {
	if s.cfg.Interrupt == nil {
		return nil
	}
	return s.cfg.Interrupt()
}

// rescore is an option's exact forecast: the caller's, or the engine's at
// the snapshot's trial count.
func (s *rescueSearch) rescore(changes []Change) (Forecast, error) {
	if err := s.interrupted(); err != nil {
		return Forecast{}, err
	}
	s.runs++
	if s.cfg.Rescore != nil {
		return s.cfg.Rescore(changes)
	}
	in, _, err := ApplyChanges(s.in, changes)
	if err != nil {
		return Forecast{}, err
	}
	return Run(in, Options{Trials: s.cfg.SnapshotTrials, Seed: s.base.Seed, Workers: s.cfg.Workers})
}

// members are the open issues of milestone id.
func (s *rescueSearch) members(id int64) []*Issue {
	var out []*Issue
	for k := range s.in.Issues {
		if is := &s.in.Issues[k]; is.Milestone == id && open(is) {
			out = append(out, is)
		}
	}
	return out
}

// needed are the open issues the milestone's open issues depend on,
// directly or not (its own members included when another needs them).
func (s *rescueSearch) needed(members []*Issue) map[int64]bool {
	out := map[int64]bool{}
	var walk func(n int64)
	walk = func(n int64) {
		is := s.issues[n]
		if !open(is) {
			return
		}
		for _, d := range is.DependsOn {
			if dep := s.issues[d]; open(dep) && !out[d] {
				out[d] = true
				walk(d)
			}
		}
	}
	for _, is := range members {
		walk(is.Number)
	}
	return out
}

// nextMilestone is where cut scope moves work: the open milestone due
// soonest after this one whose deadline is not hard (0 for none).
func (s *rescueSearch) nextMilestone(m MilestoneForecast) (int64, string) {
	var best *Milestone
	for k := range s.in.Milestones {
		x := &s.in.Milestones[k]
		if x.ID == m.ID || x.Closed || x.Hard || x.Due.IsZero() || !x.Due.After(m.Due) {
			continue
		}
		if best == nil || x.Due.Before(best.Due) || x.Due.Equal(best.Due) && x.ID < best.ID {
			best = x
		}
	}
	if best == nil {
		return 0, "no milestone"
	}
	return best.ID, best.Title
}

func (s *rescueSearch) cutScope(m MilestoneForecast, base scored) ([]rescueCandidate, error) {
	members := s.members(m.ID)
	var cands []*Issue
	for _, is := range members {
		if !is.HardDeadline && is.State != InReview {
			cands = append(cands, is)
		}
	}
	exact := len(cands) <= rescueExactLimit && s.openCount() <= rescueExactIssues
	if !exact {
		// Prefixes cannot know what stays: work the milestone's other work
		// needs is not a candidate (moving it would not take it off the
		// milestone's chain).
		needed := s.needed(members)
		cands = slices.DeleteFunc(cands, func(is *Issue) bool { return needed[is.Number] })
	}
	sortCuts(cands)
	if len(cands) > rescueMaxMoves {
		cands = cands[:rescueMaxMoves] // one batch: beyond it, the most it can do
	}
	if len(cands) == 0 {
		return nil, nil
	}
	to, toTitle := s.nextMilestone(m)
	move := func(set []*Issue) []Change {
		out := make([]Change, len(set))
		for k, is := range set {
			out[k] = Change{Kind: SetMilestone, Issue: is.Number, Milestone: to}
		}
		return out
	}
	var chosen []*Issue
	if exact {
		best, err := s.exactCut(m.ID, cands, move)
		if err != nil {
			return nil, err
		}
		chosen = best
	} else {
		all, err := s.score(m.ID, move(cands))
		if err != nil {
			return nil, err
		}
		if !makes(all.m) {
			chosen = cands // even all of it does not: show the most it does
		} else {
			lo, hi := 0, len(cands) // prefix lo fails, hi makes
			for hi-lo > 1 {
				mid := (lo + hi) / 2
				sc, err := s.score(m.ID, move(cands[:mid]))
				if err != nil {
					return nil, err
				}
				if makes(sc.m) {
					hi = mid
				} else {
					lo = mid
				}
			}
			chosen = cands[:hi]
		}
	}
	if len(chosen) == 0 {
		return nil, nil
	}
	cost := RescueCost{IssuesMoved: len(chosen)}
	people := map[string]bool{}
	nums := make([]string, len(chosen))
	for k, is := range chosen {
		cost.HoursMoved += rescueHours(is)
		if a := s.worker(is); a != "" {
			people[a] = true
		}
		nums[k] = fmt.Sprintf("#%d", is.Number)
	}
	cost.PeopleTouched = len(people)
	dest := "to " + toTitle
	if to == 0 {
		dest = "out of any milestone"
	}
	return []rescueCandidate{{kind: RescueCutScope, changes: move(chosen), cost: cost,
		summary: fmt.Sprintf("move %s %s", cappedList(nums, 6), dest),
		text:    fmt.Sprintf("moves %s, %s estimated hours, %s", plural(len(chosen), "issue"), hoursText(cost.HoursMoved), dest)}}, nil
}

// sortCuts orders cut-scope candidates: lowest priority first (p/3 before
// p/0), biggest first within one, then the newest.
func sortCuts(cands []*Issue) {
	slices.SortStableFunc(cands, func(a, b *Issue) int {
		if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
			return c
		}
		if c := cmp.Compare(rescueHours(b), rescueHours(a)); c != 0 {
			return c
		}
		return cmp.Compare(b.Number, a.Number)
	})
}

// exactCut tries every subset of cands, smallest first, and returns the
// first size's best subset that makes the date (lowest priority, then
// fewest hours, then highest chance), or, when none does, all of them.
// It assumes, as the bisection does, that moving more never makes the
// milestone later; the property test holds it to a brute force that does
// not.
func (s *rescueSearch) exactCut(id int64, cands []*Issue, move func([]*Issue) []Change) ([]*Issue, error) {
	n := len(cands)
	// Moving everything that may move is the most a cut can do: when even
	// that does not make the date, no subset does, and it is the best.
	all, err := s.score(id, move(cands))
	if err != nil {
		return nil, err
	}
	if !makes(all.m) {
		return cands, nil
	}
	for k := 1; k <= n; k++ {
		var best []*Issue
		var bestM *MilestoneForecast
		for mask := 1; mask < 1<<n; mask++ {
			if popcount(mask) != k {
				continue
			}
			var set []*Issue
			for i := range n {
				if mask&(1<<i) != 0 {
					set = append(set, cands[i])
				}
			}
			sc, err := s.score(id, move(set))
			if err != nil {
				return nil, err
			}
			if !makes(sc.m) {
				continue
			}
			if best == nil || cutBetter(set, sc.m, best, bestM) {
				best, bestM = set, sc.m
			}
		}
		if best != nil {
			return best, nil
		}
	}
	return cands, nil
}

func cutBetter(a []*Issue, am *MilestoneForecast, b []*Issue, bm *MilestoneForecast) bool {
	sum := func(set []*Issue) (prio int, hours float64) {
		for _, is := range set {
			prio += is.Priority
			hours += rescueHours(is)
		}
		return
	}
	pa, ha := sum(a)
	pb, hb := sum(b)
	if pa != pb {
		return pa > pb
	}
	if ha != hb {
		return ha < hb
	}
	return RoundPDue(am.PDue) > RoundPDue(bm.PDue)
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// worker is who works an issue: its assignee, else whom the plan gives it.
func (s *rescueSearch) worker(is *Issue) string {
	if is.Assignee != "" {
		return is.Assignee
	}
	if f := s.fc[is.Number]; f != nil {
		return f.Assignee
	}
	return ""
}

// critical is the milestone's critical-chain work: its open issues and
// those they need that lie on its critical chain in at least a quarter of
// the trials (at most ten, most critical first).
func (s *rescueSearch) critical(m MilestoneForecast) []*Issue {
	members := s.members(m.ID)
	pool := slices.Clone(members)
	for n := range s.needed(members) {
		if is := s.issues[n]; is.Milestone != m.ID {
			pool = append(pool, is)
		}
	}
	var out []*Issue
	for _, is := range pool {
		if f := s.fc[is.Number]; f != nil && f.Unschedulable == "" && f.CriticalFreq >= 0.25 {
			out = append(out, is)
		}
	}
	slices.SortStableFunc(out, func(a, b *Issue) int {
		if c := cmp.Compare(s.fc[b.Number].CriticalFreq, s.fc[a.Number].CriticalFreq); c != 0 {
			return c
		}
		return cmp.Compare(a.Number, b.Number)
	})
	if len(out) > 10 {
		out = out[:10]
	}
	return out
}

func (s *rescueSearch) resequence(m MilestoneForecast, base scored) ([]rescueCandidate, error) {
	crit := s.critical(m)
	var raise []Change
	var raised []string
	people := map[string]bool{}
	maxPrio := 0
	for _, is := range crit {
		if w := s.worker(is); w != "" {
			people[w] = true
		}
		maxPrio = max(maxPrio, is.Priority)
		if is.Priority > 0 && is.State != InReview {
			raise = append(raise, Change{Kind: SetPriority, Issue: is.Number, Priority: 0})
			raised = append(raised, fmt.Sprintf("#%d", is.Number))
		}
	}
	members := s.members(m.ID)
	needed := s.needed(members)
	var lower []Change
	var lowered []string
	touched := map[string]bool{}
	for k := range s.in.Issues {
		is := &s.in.Issues[k]
		if !open(is) || is.Milestone == m.ID || needed[is.Number] || is.HardDeadline || is.State == InReview || is.Priority >= 3 || is.Priority > maxPrio {
			continue
		}
		if ms := s.milestones[is.Milestone]; ms != nil && ms.Hard {
			continue
		}
		if w := s.worker(is); w != "" && people[w] {
			if f := s.fc[is.Number]; f == nil || f.Unschedulable != "" || !f.P50.Before(m.P80) {
				continue // not ahead of the milestone's work
			}
			lower = append(lower, Change{Kind: SetPriority, Issue: is.Number, Priority: 3})
			lowered = append(lowered, fmt.Sprintf("#%d", is.Number))
			touched[w] = true
		}
		if len(lower) == 10 {
			break
		}
	}
	var out []rescueCandidate
	var best *rescueCandidate
	var bestM *MilestoneForecast = base.m
	try := func(c rescueCandidate) error {
		if len(c.changes) == 0 {
			return nil
		}
		sc, err := s.score(m.ID, c.changes)
		if err != nil {
			return err
		}
		if better(sc.m, bestM) {
			cc := c
			best, bestM = &cc, sc.m
		}
		return nil
	}
	raiseText := fmt.Sprintf("raise %s on the critical chain to p/0", cappedList(raised, 6))
	lowerText := fmt.Sprintf("lower %s, competing work of the same people, to p/3", cappedList(lowered, 6))
	if err := try(rescueCandidate{kind: RescueResequence, changes: raise, summary: raiseText,
		cost: RescueCost{PeopleTouched: len(people)}, text: fmt.Sprintf("reorders the work: %s ahead of other work", plural(len(raise), "issue"))}); err != nil {
		return nil, err
	}
	if err := try(rescueCandidate{kind: RescueResequence, changes: lower, summary: lowerText,
		cost: RescueCost{PeopleTouched: len(touched)}, text: fmt.Sprintf("delays %s of other work", plural(len(lower), "issue"))}); err != nil {
		return nil, err
	}
	if len(raise) > 0 && len(lower) > 0 {
		both := append(slices.Clone(raise), lower...)
		all := map[string]bool{}
		for p := range people {
			all[p] = true
		}
		for p := range touched {
			all[p] = true
		}
		if err := try(rescueCandidate{kind: RescueResequence, changes: both, summary: raiseText + "; " + lowerText,
			cost: RescueCost{PeopleTouched: len(all)}, text: fmt.Sprintf("reorders the work: %s ahead, %s of other work delayed", plural(len(raise), "issue"), plural(len(lower), "issue"))}); err != nil {
			return nil, err
		}
	}
	if best != nil {
		out = append(out, *best)
	}
	return out, nil
}

func (s *rescueSearch) reassign(m MilestoneForecast, base scored) ([]rescueCandidate, error) {
	var started []*Issue
	for _, is := range s.critical(m) {
		if is.State == Steeping && is.Assignee != "" {
			started = append(started, is)
		}
	}
	if len(started) == 0 {
		return nil, nil
	}
	// Who frees first: the team by their p50 free date (no load: now).
	type slot struct {
		login string
		free  time.Time
	}
	var team []slot
	for _, p := range s.in.People {
		if p.Calendar.HoursPerDay <= 0 {
			continue
		}
		f := s.free[p.Login]
		if f.IsZero() {
			f = s.in.Now
		}
		team = append(team, slot{p.Login, f})
	}
	slices.SortStableFunc(team, func(a, b slot) int {
		if c := a.free.Compare(b.free); c != 0 {
			return c
		}
		return strings.Compare(a.login, b.login)
	})
	var kept []Change
	var moves []string
	touched := map[string]bool{}
	hours := 0.0
	cur := base.m
	if len(started) > maxReassign {
		started = started[:maxReassign] // the most critical
	}
	for _, is := range started {
		from := s.free[is.Assignee]
		for _, to := range team {
			if to.login == is.Assignee || !to.free.Before(from) {
				continue
			}
			try := append(slices.Clone(kept), Change{Kind: SetAssignees, Issue: is.Number, Assignees: []string{to.login}})
			sc, err := s.score(m.ID, try)
			if err != nil {
				return nil, err
			}
			if better(sc.m, cur) {
				kept, cur = try, sc.m
				moves = append(moves, fmt.Sprintf("#%d from %s to %s", is.Number, is.Assignee, to.login))
				touched[is.Assignee], touched[to.login] = true, true
				hours += rescueHours(is)
			}
			break // only the one freeing first
		}
	}
	if len(kept) == 0 {
		return nil, nil
	}
	return []rescueCandidate{{kind: RescueReassign, changes: kept, summary: "reassign " + strings.Join(moves, ", "),
		cost: RescueCost{IssuesMoved: len(kept), HoursMoved: hours, PeopleTouched: len(touched)},
		text: fmt.Sprintf("hands over %s already started, %s estimated hours", plural(len(kept), "issue"), hoursText(hours))}}, nil
}

func (s *rescueSearch) capacity(m MilestoneForecast, base scored) ([]rescueCandidate, error) {
	load := map[string]float64{}
	for _, is := range s.critical(m) {
		if w := s.worker(is); w != "" && s.hours[w] > 0 {
			load[w] += rescueHours(is)
		}
	}
	who := ""
	for _, l := range slices.Sorted(mapKeys(load)) {
		if who == "" || load[l] > load[who] {
			who = l
		}
	}
	if who == "" {
		return nil, nil
	}
	h0 := s.hours[who]
	top := math.Min(2*h0, 10)
	if top <= h0 {
		return nil, nil
	}
	change := func(h float64) []Change {
		return []Change{{Kind: SetCapacity, Person: who, HoursPerDay: h}}
	}
	at := func(h float64) (scored, error) { return s.score(m.ID, change(h)) }
	hi, err := at(top)
	if err != nil {
		return nil, err
	}
	if !better(hi.m, base.m) {
		return nil, nil
	}
	h := top
	if makes(hi.m) {
		// Bisect on half hours: the least that makes it.
		lo, up := math.Floor(h0*2)/2, top
		for up-lo > 0.5 {
			mid := math.Round((lo+up)/2*2) / 2
			if mid <= lo || mid >= up {
				break
			}
			sc, err := at(mid)
			if err != nil {
				return nil, err
			}
			if makes(sc.m) {
				up = mid
			} else {
				lo = mid
			}
		}
		h = up
	}
	return []rescueCandidate{{kind: RescueCapacity, changes: change(h), cost: RescueCost{PeopleTouched: 1},
		summary: fmt.Sprintf("%s works %s hours a day instead of %s", who, hoursText(h), hoursText(h0)),
		text:    fmt.Sprintf("asks %s for %s more focused hours a day", who, hoursText(h-h0))}}, nil
}

func (s *rescueSearch) moveDate(m MilestoneForecast, base scored) ([]rescueCandidate, error) {
	if s.milestones[m.ID].Hard || base.m == nil || base.m.P80.IsZero() {
		return nil, nil
	}
	due := m.Due
	var sc scored
	for range 4 {
		p80 := base.m.P80
		if sc.m != nil {
			p80 = sc.m.P80
		}
		d := p80.UTC()
		next := time.Date(d.Year(), d.Month(), d.Day(), 23, 59, 59, 0, time.UTC)
		if !next.After(due) {
			break
		}
		due = next
		var err error
		if sc, err = s.score(m.ID, []Change{{Kind: SetDueDate, Milestone: m.ID, Due: due}}); err != nil {
			return nil, err
		}
		if makes(sc.m) {
			break
		}
	}
	if due.Equal(m.Due) {
		return nil, nil
	}
	shift := workdaysBetweenDates(m.Due, due)
	return []rescueCandidate{{kind: RescueMoveDate, changes: []Change{{Kind: SetDueDate, Milestone: m.ID, Due: due}},
		summary: fmt.Sprintf("move the due date %s → %s", shortDate(s.in.Now, m.Due), shortDate(s.in.Now, due)),
		text:    fmt.Sprintf("ships %s later (%s), all of the scope", plural(shift, "working day"), workingDays(float64(shift)))}}, nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// cappedList is listText of the first n, and how many more.
func cappedList(xs []string, n int) string {
	if len(xs) <= n {
		return listText(xs)
	}
	return strings.Join(xs[:n], ", ") + fmt.Sprintf(" and %d more", len(xs)-n)
}

func listText(xs []string) string {
	switch len(xs) {
	case 0:
		return "nothing"
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}
