package standup

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/commitea/commitea/scheduler"
)

// Input is everything one standup is computed from.
type Input struct {
	Project string
	// Day is the local date of the standup (any time on that date).
	Day time.Time
	// Location is the standup's time zone; dates are written in it.
	Location *time.Location
	// Calendar is the default working calendar, for working-day distances.
	Calendar scheduler.Calendar
	// Now is when the standup is computed.
	Now      time.Time
	Snapshot Snapshot
	Issues   []Issue
	// Previous is the baseline of the previous standup; nil for the first.
	Previous *Baseline
	// Reconstructed says Previous is no stored standup's but the project
	// as it stood at Previous.At, read back from its history: the first
	// standup then still says how the forecast moved since the previous
	// working day.
	Reconstructed bool
	// Transitions are the lifecycle changes since Previous.At (or since
	// the previous working day when there is no previous standup).
	Transitions []Transition
	// StaleWorkingDays is the staleness threshold, reported for context.
	StaleWorkingDays int
}

// Snapshot is the part of a stored snapshot a standup reads.
type Snapshot struct {
	Version     int64
	ComputedAt  time.Time
	Statuses    []scheduler.IssueStatus
	Calibration scheduler.Calibration
	// Forecast needs, per issue, P50, CriticalFreq and Assignee, and its
	// milestones whole.
	Forecast scheduler.Forecast
	// Capacity is the runway's per-person capacity and load (optional).
	Capacity []scheduler.RunwayCapacity
	// SLE, FlowWindowDays and Age are the snapshot's flow figures: the
	// service level expectation and the age of work in progress, oldest
	// first (optional).
	SLE            scheduler.SLE
	FlowWindowDays int
	Age            []scheduler.WorkItemAge
	// Rescue is the snapshot's rescue options of milestones at risk
	// (optional); RescuePending says they are still being computed (the
	// search runs after the snapshot is published).
	Rescue        []scheduler.MilestoneRescue
	RescuePending bool
}

// Issue is what a standup needs of a mirrored issue besides its status.
type Issue struct {
	Number       int64
	Title        string
	Milestone    int64 // 0: none
	Assignee     string
	LastActivity time.Time
}

// Transition is one recorded lifecycle change.
type Transition struct {
	Issue int64
	From  string
	To    string
	At    time.Time
}

// Report is a computed standup. Dates are local dates (YYYY-MM-DD) in the
// standup's time zone. Each list is one section of the report as a reader
// sees it (Sections, sections.go); a new section adds its field here.
type Report struct {
	Project         string `json:"project"`
	Day             string `json:"day"`
	Weekday         string `json:"weekday"`
	Since           string `json:"since,omitempty"` // the previous standup's day
	SnapshotVersion int64  `json:"snapshotVersion"`
	FirstStandup    bool   `json:"firstStandup,omitempty"`
	// Reconstructed is set when Since is no stored standup's day: drift
	// compares with the forecast of the project as it stood then,
	// reconstructed from its history (a first standup).
	Reconstructed bool              `json:"reconstructed,omitempty"`
	AtRisk        []AtRiskMilestone `json:"atRisk"`
	Drift         []Drift           `json:"drift"`
	Plan          []PersonPlan      `json:"plan"`
	StaleBlockers []StaleBlocker    `json:"staleBlockers"`
	Aging         Aging             `json:"aging"`
	Baseline      Baseline          `json:"baseline"`
}

// Drift is one milestone whose p50 or p80 moved by a working day or more.
type Drift struct {
	Milestone int64  `json:"milestone"`
	Title     string `json:"title"`
	Due       string `json:"due,omitempty"`
	P50Before string `json:"p50Before"`
	P50After  string `json:"p50After"`
	P80Before string `json:"p80Before"`
	P80After  string `json:"p80After"`
	// P50Days and P80Days are the moves in working days, later positive,
	// rounded to a tenth.
	P50Days float64 `json:"p50Days"`
	P80Days float64 `json:"p80Days"`
	Causes  []Cause `json:"causes"`
}

// Cause kinds, in the order a drift lists them.
const (
	CauseScopeAdded   = "scope_added"
	CauseScopeRemoved = "scope_removed"
	CauseReestimated  = "reestimated"
	CauseCalibration  = "calibration"
	CauseNoProgress   = "no_progress"
	CauseProgress     = "progress"
	// CauseElsewhere: nothing in the milestone changed; the move comes from
	// work it shares people or dependencies with.
	CauseElsewhere = "elsewhere"
)

// Cause is one reason a milestone moved.
type Cause struct {
	Kind   string  `json:"kind"`
	Issues []int64 `json:"issues,omitempty"`
	// Hours is the nominal effort added or removed (scope), or the change
	// of nominal effort (re-estimates, signed).
	Hours float64 `json:"hours,omitempty"`
	// Reestimates are the size changes of a reestimated cause.
	Reestimates []Reestimate `json:"reestimates,omitempty"`
	// Multiplier and Sigma are the calibration before and after.
	MultiplierBefore float64 `json:"multiplierBefore,omitempty"`
	MultiplierAfter  float64 `json:"multiplierAfter,omitempty"`
	SigmaBefore      float64 `json:"sigmaBefore,omitempty"`
	SigmaAfter       float64 `json:"sigmaAfter,omitempty"`
	// WorkingDays is the time that passed (no_progress).
	WorkingDays float64 `json:"workingDays,omitempty"`
}

// Reestimate is one issue's size change.
type Reestimate struct {
	Issue int64          `json:"issue"`
	From  scheduler.Size `json:"from"`
	To    scheduler.Size `json:"to"`
}

// PersonPlan is one person's part of the standup. Each list is capped;
// the More counts say how many were left out.
type PersonPlan struct {
	Login string `json:"login"`
	// HoursPerWeek, LoadWeeks and FreeFrom are the runway's capacity of
	// the person: focused hours a week, scheduled work in weeks of them,
	// and the median date they run out of work. Zero when unknown.
	// LoadWeeks is written even when zero: the template says "0 weeks of
	// work" of a person with capacity, and prose may repeat it.
	HoursPerWeek float64 `json:"hoursPerWeek,omitempty"`
	LoadWeeks    float64 `json:"loadWeeks"`
	FreeFrom     string  `json:"freeFrom,omitempty"`
	Done         []Item  `json:"done,omitempty"`
	Now          []Item  `json:"now,omitempty"`
	Next         []Item  `json:"next,omitempty"`
	Blocked      []Item  `json:"blocked,omitempty"`
	MoreDone     int     `json:"moreDone,omitempty"`
	MoreNow      int     `json:"moreNow,omitempty"`
	MoreBlocked  int     `json:"moreBlocked,omitempty"`
}

// Item is one issue in a plan.
type Item struct {
	Number    int64           `json:"number"`
	Title     string          `json:"title"`
	State     scheduler.State `json:"state,omitempty"`
	P50       string          `json:"p50,omitempty"`
	BlockedBy []int64         `json:"blockedBy,omitempty"`
	// Critical is set when the issue is on its milestone's critical chain
	// in at least half the trials.
	Critical *CriticalFlag `json:"critical,omitempty"`
}

// StaleBlocker is a stale issue that other open issues wait for.
type StaleBlocker struct {
	Number   int64           `json:"number"`
	Title    string          `json:"title"`
	Assignee string          `json:"assignee,omitempty"`
	State    scheduler.State `json:"state"`
	// IdleDays is the working days since the issue's last activity.
	IdleDays float64 `json:"idleDays"`
	Blocks   []int64 `json:"blocks"`
	// BlocksCount is len(Blocks) before the list was capped.
	BlocksCount int `json:"blocksCount"`
}

// Baseline is what the next standup compares against.
type Baseline struct {
	At               time.Time           `json:"at"`
	SnapshotVersion  int64               `json:"snapshotVersion"`
	Multiplier       float64             `json:"multiplier"`
	Sigma            float64             `json:"sigma"`
	CalibrationCount int                 `json:"calibrationCount"`
	Milestones       []BaselineMilestone `json:"milestones"`
}

// BaselineMilestone is one milestone's forecast and open scope.
type BaselineMilestone struct {
	ID   int64     `json:"id"`
	P50  time.Time `json:"p50"`
	P80  time.Time `json:"p80"`
	Open []BaselineIssue
}

// BaselineIssue is an open issue of a milestone and its estimate. It is
// stored in a compact form (baseline.go).
type BaselineIssue struct {
	N int64
	S scheduler.Size
}

// Caps on the lists of a report, so that a large project's standup stays
// readable and its prompt small.
const (
	maxItems         = 5
	maxNext          = 3
	maxStaleBlockers = 15
	maxBlocks        = 8
	maxCauseIssues   = 10
)

// calibrationShift is the relative change of the calibration multiplier
// (or absolute change of sigma) reported as a cause.
const calibrationShift = 0.02

// localDates is a standup's time zone (UTC when nil) and how it writes
// dates: local YYYY-MM-DD, "" for none.
func localDates(loc *time.Location) (*time.Location, func(time.Time) string) {
	if loc == nil {
		loc = time.UTC
	}
	return loc, func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.In(loc).Format(time.DateOnly)
	}
}

// Build computes a standup. It is deterministic: equal inputs give equal
// reports.
func Build(in Input) Report {
	loc, date := localDates(in.Location)
	day := in.Day.In(loc)
	r := Report{
		Project: in.Project, Day: day.Format(time.DateOnly), Weekday: day.Weekday().String(),
		SnapshotVersion: in.Snapshot.Version, FirstStandup: in.Previous == nil || in.Reconstructed,
		Reconstructed: in.Previous != nil && in.Reconstructed,
		AtRisk:        []AtRiskMilestone{}, Drift: []Drift{}, Plan: []PersonPlan{}, StaleBlockers: []StaleBlocker{},
	}
	if in.Previous != nil {
		r.Since = date(in.Previous.At)
	}

	status := make(map[int64]*scheduler.IssueStatus, len(in.Snapshot.Statuses))
	for i := range in.Snapshot.Statuses {
		status[in.Snapshot.Statuses[i].Number] = &in.Snapshot.Statuses[i]
	}
	issues := make(map[int64]*Issue, len(in.Issues))
	for i := range in.Issues {
		issues[in.Issues[i].Number] = &in.Issues[i]
	}
	fc := make(map[int64]*scheduler.IssueForecast, len(in.Snapshot.Forecast.Issues))
	for i := range in.Snapshot.Forecast.Issues {
		fc[in.Snapshot.Forecast.Issues[i].Number] = &in.Snapshot.Forecast.Issues[i]
	}
	open := func(n int64) bool {
		s := status[n]
		return s != nil && s.State != scheduler.Done
	}

	r.Baseline = baselineOf(in, open, status)
	if in.Previous != nil {
		r.Drift = drift(in, date, r.Baseline, status)
	}
	r.AtRisk = atRisk(in, date, issues)
	r.Plan = plans(in, date, status, issues, fc, r.AtRisk)
	r.StaleBlockers = staleBlockers(in, status, issues)
	r.Aging = agingWork(in, issues)
	return r
}

// BaselineOf is what a standup of in keeps for the next one to compare
// against: its snapshot's milestone dates and calibration, and each
// milestone's open issues with their estimates. It reads Snapshot
// (Version, ComputedAt, Statuses, Calibration, Forecast.Milestones) and
// Issues.
func BaselineOf(in Input) Baseline {
	status := make(map[int64]*scheduler.IssueStatus, len(in.Snapshot.Statuses))
	for i := range in.Snapshot.Statuses {
		status[in.Snapshot.Statuses[i].Number] = &in.Snapshot.Statuses[i]
	}
	return baselineOf(in, func(n int64) bool {
		s := status[n]
		return s != nil && s.State != scheduler.Done
	}, status)
}

func baselineOf(in Input, open func(int64) bool, status map[int64]*scheduler.IssueStatus) Baseline {
	cal := in.Snapshot.Calibration
	b := Baseline{At: in.Snapshot.ComputedAt, SnapshotVersion: in.Snapshot.Version,
		Multiplier: cal.GlobalMultiplier, Sigma: cal.Sigma, CalibrationCount: cal.N}
	byMilestone := map[int64][]BaselineIssue{}
	for _, is := range in.Issues {
		if is.Milestone == 0 || !open(is.Number) {
			continue
		}
		byMilestone[is.Milestone] = append(byMilestone[is.Milestone], BaselineIssue{N: is.Number, S: status[is.Number].Estimate})
	}
	for _, m := range in.Snapshot.Forecast.Milestones {
		b.Milestones = append(b.Milestones, BaselineMilestone{ID: m.ID, P50: m.P50, P80: m.P80, Open: byMilestone[m.ID]})
	}
	return b
}

func roundTenth(x float64) float64 { return math.Round(x*10) / 10 }

// drift compares the previous baseline with the current one.
func drift(in Input, date func(time.Time) string, now Baseline, status map[int64]*scheduler.IssueStatus) []Drift {
	prev := map[int64]BaselineMilestone{}
	for _, m := range in.Previous.Milestones {
		prev[m.ID] = m
	}
	titles := map[int64]scheduler.MilestoneForecast{}
	for _, m := range in.Snapshot.Forecast.Milestones {
		titles[m.ID] = m
	}
	// Progress per issue: a transition forward since the previous standup.
	advanced := map[int64]bool{}
	for _, t := range in.Transitions {
		switch scheduler.State(t.To) {
		case scheduler.Steeping, scheduler.InReview, scheduler.Done:
			advanced[t.Issue] = true
		}
	}
	elapsed := roundTenth(scheduler.WorkingDaysBetween(in.Calendar, in.Previous.At, in.Snapshot.ComputedAt))

	var out []Drift
	for _, cur := range now.Milestones {
		before, ok := prev[cur.ID]
		if !ok || before.P50.IsZero() || cur.P50.IsZero() {
			continue
		}
		d50 := roundTenth(scheduler.WorkingDaysBetween(in.Calendar, before.P50, cur.P50))
		d80 := roundTenth(scheduler.WorkingDaysBetween(in.Calendar, before.P80, cur.P80))
		if math.Abs(d50) < 1 && math.Abs(d80) < 1 {
			continue
		}
		m := titles[cur.ID]
		d := Drift{
			Milestone: cur.ID, Title: m.Title, Due: date(m.Due),
			P50Before: date(before.P50), P50After: date(cur.P50), P80Before: date(before.P80), P80After: date(cur.P80),
			P50Days: d50, P80Days: d80,
		}
		move := d50
		if math.Abs(d80) > math.Abs(move) {
			move = d80
		}
		d.Causes = causes(in, before, cur, status, advanced, elapsed, move)
		out = append(out, d)
	}
	if out == nil {
		out = []Drift{}
	}
	return out
}

func causes(in Input, before, cur BaselineMilestone, status map[int64]*scheduler.IssueStatus,
	advanced map[int64]bool, elapsed, move float64) []Cause {
	later := move > 0
	was := make(map[int64]scheduler.Size, len(before.Open))
	for _, b := range before.Open {
		was[b.N] = b.S
	}
	is := make(map[int64]scheduler.Size, len(cur.Open))
	for _, c := range cur.Open {
		is[c.N] = c.S
	}
	var added, removed, done []int64
	var addedHours, removedHours, reHours float64
	var re []Reestimate
	for _, c := range cur.Open {
		s, ok := was[c.N]
		switch {
		case !ok:
			added = append(added, c.N)
			addedHours += c.S.NominalHours()
		case s != c.S:
			re = append(re, Reestimate{Issue: c.N, From: s, To: c.S})
			reHours += c.S.NominalHours() - s.NominalHours()
		}
	}
	for _, b := range before.Open {
		if _, ok := is[b.N]; ok {
			continue
		}
		if st := status[b.N]; st != nil && st.State == scheduler.Done && !st.Discarded {
			done = append(done, b.N)
			continue
		}
		removed = append(removed, b.N)
		removedHours += b.S.NominalHours()
	}
	var out []Cause
	if len(added) > 0 {
		out = append(out, Cause{Kind: CauseScopeAdded, Issues: capList(added), Hours: addedHours})
	}
	if len(removed) > 0 {
		out = append(out, Cause{Kind: CauseScopeRemoved, Issues: capList(removed), Hours: removedHours})
	}
	if len(re) > 0 {
		slices.SortFunc(re, func(a, b Reestimate) int { return cmp.Compare(a.Issue, b.Issue) })
		if len(re) > maxCauseIssues {
			re = re[:maxCauseIssues]
		}
		out = append(out, Cause{Kind: CauseReestimated, Reestimates: re, Hours: reHours})
	}
	pm, cm := in.Previous.Multiplier, in.Snapshot.Calibration.GlobalMultiplier
	ps, cs := in.Previous.Sigma, in.Snapshot.Calibration.Sigma
	if (pm > 0 && math.Abs(cm/pm-1) >= calibrationShift) || math.Abs(cs-ps) >= calibrationShift {
		out = append(out, Cause{Kind: CauseCalibration, MultiplierBefore: round2(pm), MultiplierAfter: round2(cm),
			SigmaBefore: round2(ps), SigmaAfter: round2(cs)})
	}
	progressed := len(done) > 0
	for _, c := range cur.Open {
		progressed = progressed || advanced[c.N]
	}
	if later && !progressed && elapsed >= 0.5 && len(cur.Open) > 0 {
		out = append(out, Cause{Kind: CauseNoProgress, WorkingDays: elapsed})
	}
	if len(done) > 0 {
		out = append(out, Cause{Kind: CauseProgress, Issues: capList(done)})
	}
	// Nothing of the milestone's own changed and the move is more than
	// time alone explains: the work it shares people or dependencies with
	// moved it.
	own := len(added) > 0 || len(removed) > 0 || len(re) > 0 || len(done) > 0
	if !own && (len(out) == 0 || math.Abs(move) > elapsed+1) {
		out = append(out, Cause{Kind: CauseElsewhere})
	}
	return out
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

func capList(ns []int64) []int64 {
	slices.Sort(ns)
	if len(ns) > maxCauseIssues {
		return ns[:maxCauseIssues]
	}
	return ns
}

// plans builds each person's plan. An issue belongs to its first assignee;
// an unassigned open issue belongs, for "next", to whom the schedule gave
// it most often.
func plans(in Input, date func(time.Time) string, status map[int64]*scheduler.IssueStatus,
	issues map[int64]*Issue, fc map[int64]*scheduler.IssueForecast, risky []AtRiskMilestone) []PersonPlan {
	titles := make(map[int64]string, len(in.Snapshot.Forecast.Milestones))
	for _, m := range in.Snapshot.Forecast.Milestones {
		titles[m.ID] = m.Title
	}
	atRisk := make(map[int64]bool, len(risky))
	listed := map[int64]bool{}
	for _, m := range risky {
		atRisk[m.Milestone] = true
		for _, c := range m.Chain {
			listed[c.Number] = true
		}
	}
	by := map[string]*PersonPlan{}
	person := func(login string) *PersonPlan {
		p := by[login]
		if p == nil {
			p = &PersonPlan{Login: login}
			by[login] = p
		}
		return p
	}
	item := func(n int64) Item {
		it := Item{Number: n}
		if is := issues[n]; is != nil {
			it.Title = is.Title
		}
		if s := status[n]; s != nil {
			it.State = s.State
			if s.Blocked {
				it.BlockedBy = s.BlockedBy
			}
		}
		if f := fc[n]; f != nil {
			it.P50 = date(f.P50)
		}
		if it.State != scheduler.Done {
			it.Critical = criticalFlag(n, issues, fc, titles, atRisk, listed)
		}
		return it
	}

	// Done since the last standup: the latest transition of each issue
	// into done, when the issue is still done and was not discarded.
	doneSeen := map[int64]bool{}
	for i := len(in.Transitions) - 1; i >= 0; i-- {
		t := in.Transitions[i]
		if scheduler.State(t.To) != scheduler.Done || doneSeen[t.Issue] {
			continue
		}
		doneSeen[t.Issue] = true
		s, is := status[t.Issue], issues[t.Issue]
		if s == nil || is == nil || s.State != scheduler.Done || s.Discarded || is.Assignee == "" {
			continue
		}
		p := person(is.Assignee)
		p.Done = append(p.Done, Item{Number: t.Issue, Title: is.Title})
	}

	// Candidates for "next" are kept as numbers; only the few shown become
	// items (formatting dates for thousands of issues is most of the cost).
	type next struct {
		p50    time.Time
		number int64
	}
	nexts := map[string][]next{}
	// Now and blocked lists are collected as numbers and become items
	// once sorted and capped.
	nowOf, blockedOf := map[string][]int64{}, map[string][]int64{}
	for _, s := range in.Snapshot.Statuses {
		if s.State == scheduler.Done {
			continue
		}
		is := issues[s.Number]
		if is == nil {
			continue
		}
		who := is.Assignee
		switch {
		case s.Blocked && who != "":
			person(who)
			blockedOf[who] = append(blockedOf[who], s.Number)
		case s.State == scheduler.Steeping || s.State == scheduler.InReview:
			if who != "" {
				person(who)
				nowOf[who] = append(nowOf[who], s.Number)
			}
		case !s.Blocked:
			f := fc[s.Number]
			if who == "" && f != nil {
				who = f.Assignee
			}
			if who == "" || f == nil || f.P50.IsZero() {
				continue
			}
			nexts[who] = append(nexts[who], next{f.P50, s.Number})
		}
	}
	for who, ns := range nexts {
		slices.SortFunc(ns, func(a, b next) int {
			if c := a.p50.Compare(b.p50); c != 0 {
				return c
			}
			return cmp.Compare(a.number, b.number)
		})
		p := person(who)
		for _, n := range ns[:min(len(ns), maxNext)] {
			p.Next = append(p.Next, item(n.number))
		}
	}

	items := func(ns []int64) ([]Item, int) {
		slices.Sort(ns)
		var out []Item
		for _, n := range ns[:min(len(ns), maxItems)] {
			out = append(out, item(n))
		}
		return out, max(len(ns)-maxItems, 0)
	}
	capacity := make(map[string]scheduler.RunwayCapacity, len(in.Snapshot.Capacity))
	for _, c := range in.Snapshot.Capacity {
		capacity[c.Login] = c
	}
	out := make([]PersonPlan, 0, len(by))
	for login, p := range by {
		if c, ok := capacity[login]; ok {
			p.HoursPerWeek, p.LoadWeeks, p.FreeFrom = roundTenth(c.HoursPerWeek), c.LoadWeeks, date(c.FreeFromP50)
		}
		slices.SortFunc(p.Done, func(a, b Item) int { return cmp.Compare(a.Number, b.Number) })
		p.Done, p.MoreDone = capItems(p.Done)
		p.Now, p.MoreNow = items(nowOf[login])
		p.Blocked, p.MoreBlocked = items(blockedOf[login])
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b PersonPlan) int { return cmp.Compare(a.Login, b.Login) })
	return out
}

func capItems(items []Item) ([]Item, int) {
	if len(items) <= maxItems {
		return items, 0
	}
	return items[:maxItems], len(items) - maxItems
}

// staleBlockers lists stale open issues that other open issues wait for,
// the ones blocking most first.
func staleBlockers(in Input, status map[int64]*scheduler.IssueStatus, issues map[int64]*Issue) []StaleBlocker {
	blocks := map[int64][]int64{}
	for _, s := range in.Snapshot.Statuses {
		if s.State == scheduler.Done || !s.Blocked {
			continue
		}
		for _, b := range s.BlockedBy {
			if bs := status[b]; bs != nil && bs.Stale && bs.State != scheduler.Done {
				blocks[b] = append(blocks[b], s.Number)
			}
		}
	}
	out := []StaleBlocker{}
	for n, waiting := range blocks {
		s := status[n]
		sb := StaleBlocker{Number: n, State: s.State, BlocksCount: len(waiting)}
		slices.Sort(waiting)
		sb.Blocks = waiting[:min(len(waiting), maxBlocks)]
		if is := issues[n]; is != nil {
			sb.Title, sb.Assignee = is.Title, is.Assignee
			if !is.LastActivity.IsZero() {
				sb.IdleDays = roundTenth(scheduler.WorkingDaysBetween(in.Calendar, is.LastActivity, in.Now))
			}
		}
		out = append(out, sb)
	}
	slices.SortFunc(out, func(a, b StaleBlocker) int {
		if c := cmp.Compare(b.BlocksCount, a.BlocksCount); c != 0 {
			return c
		}
		return cmp.Compare(a.Number, b.Number)
	})
	if len(out) > maxStaleBlockers {
		out = out[:maxStaleBlockers]
	}
	return out
}
