package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
	"github.com/commitea/commitea/worker/tools"
)

// The quote is what happens (scheduler/doc.go, "One planning rule"): on
// small generated projects served by the fake forge, random batches of
// every change the write tools make, capacity directives and due dates a
// person edits in the forge are quoted, go through the fake Gitea, its
// webhooks (or the reconcile, for what Gitea sends no webhook for) and the
// recompute job, with a clock that moves all the while and now and then
// across the hour; the first snapshot after each change must read as the
// quote said, every milestone and issue of it. On the same projects, more
// work, less capacity or an added dependency must never make anything
// earlier, nor the reverse later.

// quoteCases is how many changes TestQuotesComeTrueThroughTheForge quotes
// and checks: projects × cases per project.
const (
	quoteProjects       = 8
	quoteCasesEach      = 26
	quoteTrials         = 96
	quoteMonotoneChance = 0.5
)

func TestQuotesComeTrueThroughTheForge(t *testing.T) {
	t.Parallel()
	_, pool := storetest.NewDB(t)
	var mu sync.Mutex
	total := map[string]int{}
	t.Run("projects", func(t *testing.T) {
		for k := range quoteProjects {
			seed := uint64(k + 1)
			t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
				t.Parallel()
				q := newQuoteProject(t, pool, seed, quoteTrials)
				counts := q.run(quoteCasesEach)
				mu.Lock()
				for kind, n := range counts {
					total[kind] += n
				}
				mu.Unlock()
			})
		}
	})
	t.Logf("cases checked: %v", total)
	if total["quote"] < 200 {
		t.Errorf("only %d quotes checked, want at least 200", total["quote"])
	}
}

// BenchmarkQuoteProperty runs the property on more projects and changes
// than the normal test run: one project of 60 changes per iteration.
func BenchmarkQuoteProperty(b *testing.B) {
	_, pool := storetest.NewDB(b)
	seed := uint64(1000)
	for b.Loop() {
		seed++
		q := newQuoteProject(b, pool, seed, 400)
		q.run(60)
	}
}

// tickingClock moves forward a little every time anyone reads it, so no
// two steps of a change see the same instant.
type tickingClock struct {
	mu   sync.Mutex
	t    time.Time
	rng  *rand.Rand
	tick time.Duration
}

func (c *tickingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Duration(c.rng.Int64N(int64(c.tick) + 1)))
	return c.t
}

// jumpTo moves the clock forward to t (never back).
func (c *tickingClock) jumpTo(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.t) {
		c.t = t
	}
}

// recordedJobs takes the recompute jobs the write path and the ingester
// enqueue; the test runs them with the recompute job's worker.
type recordedJobs struct {
	mu      sync.Mutex
	pending map[int64]bool
}

func (j *recordedJobs) InsertManyTx(_ context.Context, _ store.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, p := range params {
		if a, ok := p.Args.(worker.RecomputeArgs); ok {
			j.pending[a.ProjectID] = true
		}
	}
	return nil, nil
}

func (j *recordedJobs) take(id int64) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	was := j.pending[id]
	delete(j.pending, id)
	return was
}

// quoteProject is one generated project behind the fake forge, with the
// whole write path wired to it.
type quoteProject struct {
	t        testing.TB
	ctx      context.Context
	rng      *rand.Rand
	pool     *store.Pool
	p        store.Project
	fake     *giteafake.Server
	clock    *tickingClock
	jobs     *recordedJobs
	engine   *worker.Forecaster
	syncer   *worker.Syncer
	svc      *tools.Service
	reg      *tools.Registry
	recomp   *worker.RecomputeWorker
	team     []string
	name     string
	proposal int
}

var quoteApprover = tools.Caller{Name: "pm", Scopes: []string{tools.ScopeRead, tools.ScopeWrite, tools.ScopeApprove}}

func newQuoteProject(t testing.TB, pool *store.Pool, seed uint64, trials int) *quoteProject {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 0x9e07e))
	start := time.Date(2026, 12, 1+rng.IntN(10), 7+rng.IntN(10), rng.IntN(60), 0, 0, time.UTC)
	clock := &tickingClock{t: start, rng: rand.New(rand.NewPCG(seed, 1)), tick: 4 * time.Second}

	// A team of two to four with their own calendars and some time off.
	zones := []string{"UTC", "Europe/Berlin", "America/Sao_Paulo", "Asia/Shanghai"}
	weeks := [][]time.Weekday{
		{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday},
		{time.Sunday, time.Monday, time.Tuesday, time.Wednesday, time.Thursday},
		{time.Monday, time.Tuesday, time.Wednesday},
	}
	var team []giteafake.Person
	var people []scheduler.Person
	for k, login := range []string{"ada", "bea", "cyd", "dov"}[:2+rng.IntN(3)] {
		gp := giteafake.Person{Login: login, Speed: 0.7 + rng.Float64(), HoursPerDay: float64(3 + rng.IntN(5)),
			WorkingDays: weeks[rng.IntN(len(weeks))], TimeZone: zones[rng.IntN(len(zones))]}
		if k == 0 || rng.IntN(2) == 0 {
			from := 1 + rng.IntN(15)
			gp.TimeOff = []giteafake.DayRange{{From: from, To: from + rng.IntN(10)}}
		}
		team = append(team, gp)
		loc, err := time.LoadLocation(gp.TimeZone)
		if err != nil {
			t.Fatal(err)
		}
		cal := scheduler.Calendar{HoursPerDay: gp.HoursPerDay, Location: loc}
		for _, d := range gp.WorkingDays {
			cal.WorkingDays[d] = true
		}
		for _, r := range gp.TimeOff {
			day := func(n int) time.Time {
				d := start.AddDate(0, 0, n).In(loc)
				return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc)
			}
			cal.TimeOff = append(cal.TimeOff, scheduler.DateRange{From: day(r.From), To: day(r.To)})
		}
		people = append(people, scheduler.Person{Login: login, Calendar: cal})
	}

	name := fmt.Sprintf("q%d", seed)
	secret := "quote-property-secret"
	fake, err := giteafake.New(giteafake.Options{HookSecret: secret, Now: clock.Now, Generate: &giteafake.Project{
		Owner: "acme", Name: name, Seed: seed, Now: start, Team: team, HistoryDays: 40, Backlog: 3 + rng.IntN(3)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	p, err := store.EnsureProject(ctx, pool, "acme", name)
	if err != nil {
		t.Fatal(err)
	}
	client, err := gitea.New(fake.URL, fake.Token(), gitea.Options{BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	log := quietLog()
	jobs := &recordedJobs{pending: map[int64]bool{}}
	syncer := &worker.Syncer{Pool: pool, Gitea: client, Jobs: jobs, Replayer: worker.LifecycleReplayer{}, Log: log, Now: clock.Now}
	if err := syncer.Backfill(ctx, p); err != nil {
		t.Fatal(err)
	}
	engine := &worker.Forecaster{Pool: pool, Log: log, Trials: trials, People: people, Now: clock.Now}
	in := worker.NewIngester(pool, jobs, []store.Project{p}, log, worker.IngesterConfig{})
	in.Start()
	t.Cleanup(in.Close)
	srv := httptest.NewServer(NewRouter(Config{WebhookSecret: secret, Sink: in, Decode: gitea.DecodeDelivery, Log: log}))
	t.Cleanup(srv.Close)
	fake.SetHook(srv.URL+"/webhooks/gitea", secret)
	svc := tools.NewService(pool, []store.Project{p}, log)
	svc.Write = tools.WriteConfig{Gitea: client, Engine: engine, Jobs: jobs, Now: clock.Now}
	q := &quoteProject{t: t, ctx: ctx, rng: rng, pool: pool, p: p, fake: fake, clock: clock, jobs: jobs, engine: engine,
		syncer: syncer, svc: svc, reg: svc.Registry(), recomp: &worker.RecomputeWorker{Pool: pool, Recomputer: engine, Log: log},
		name: name}
	for _, person := range team {
		q.team = append(q.team, person.Login)
	}
	jobs.pending[p.ID] = true
	q.settle()
	return q
}

// settle runs the recompute job until nothing is pending.
func (q *quoteProject) settle() {
	q.t.Helper()
	for q.jobs.take(q.p.ID) {
		for {
			err := q.recomp.Work(q.ctx, &river.Job[worker.RecomputeArgs]{Args: worker.RecomputeArgs{ProjectID: q.p.ID}})
			var snooze *river.JobSnoozeError
			if errors.As(err, &snooze) {
				continue
			}
			if err != nil {
				q.t.Fatal(err)
			}
			break
		}
	}
}

func (q *quoteProject) latestVersion() int64 {
	q.t.Helper()
	v, err := store.LatestSnapshotVersion(q.ctx, q.pool, q.p.ID)
	if err != nil {
		q.t.Fatal(err)
	}
	return v
}

func (q *quoteProject) forecastAt(version int64) scheduler.Forecast {
	q.t.Helper()
	raw, err := store.SnapshotPart(q.ctx, q.pool, q.p.ID, version, "forecast")
	if err != nil {
		q.t.Fatal(err)
	}
	var fc scheduler.Forecast
	if err := json.Unmarshal(raw, &fc); err != nil {
		q.t.Fatal(err)
	}
	return fc
}

// change is one case: what it does, and how to do it once quoted.
type change struct {
	kind  string
	ops   []string
	what  string
	quote func() (worker.Quote, error)
	apply func() (filed map[int64]int64)
	// reconcile: Gitea sends no webhook for it, the periodic reconcile
	// brings it in.
	reconcile bool
}

// run checks cases changes and returns how many of each kind of check ran.
func (q *quoteProject) run(cases int) map[string]int {
	q.t.Helper()
	counts := map[string]int{}
	for c := range cases {
		q.settle()
		if q.rng.Float64() < quoteMonotoneChance {
			counts["monotone"] += q.checkMonotone()
		}
		if q.rng.IntN(4) == 0 {
			// Quote just before the hour: the recompute comes after it.
			now := q.clock.Now()
			q.clock.jumpTo(now.Truncate(time.Hour).Add(time.Hour - time.Duration(5+q.rng.IntN(40))*time.Second))
			counts["across the hour"]++
		}
		ch := q.randomChange(c)
		v0 := q.latestVersion()
		quote, err := ch.quote()
		if err != nil {
			q.t.Fatalf("case %d (%s): quote: %v", c, ch.what, err)
		}
		filed := ch.apply()
		if ch.reconcile {
			q.clock.jumpTo(q.clock.Now().Add(time.Duration(q.rng.IntN(600)) * time.Second))
			if err := q.syncer.Reconcile(q.ctx, q.p); err != nil {
				q.t.Fatal(err)
			}
		}
		if q.rng.IntN(2) == 0 {
			// The recompute may run before the webhooks are in.
			q.settle()
		}
		q.fake.FlushHooks()
		q.settle()
		if q.latestVersion() == v0 {
			q.t.Fatalf("case %d (%s): no snapshot after the change", c, ch.what)
		}
		want := quote.After
		if len(want.Milestones) == 0 && len(want.Issues) == 0 {
			want = q.forecastAt(v0) // nothing to change: the forecast stands
		}
		got := q.forecastAt(v0 + 1)
		if miss := scheduler.ForecastMismatches(want, got, filed); len(miss) > 0 {
			q.t.Errorf("case %d: %s quoted %q on the plan of %s; the first snapshot after it (as of %s) differs:\n  %s",
				c, ch.what, quote.Consequence, quote.After.Now.Format(time.RFC3339), got.Now.Format(time.RFC3339), strings.Join(miss, "\n  "))
		}
		counts["quote"]++
		counts[ch.kind]++
		for _, op := range ch.ops {
			counts[op]++
		}
	}
	return counts
}

// state is what a change is chosen from: the mirror and the forecast.
type quoteState struct {
	issues     []store.Issue // open issues
	all        []int64       // every issue number
	milestones []int64       // open milestones
	deps       []store.Dependency
}

func (q *quoteProject) state() quoteState {
	q.t.Helper()
	m, err := store.LoadMirror(q.ctx, q.pool, q.p.ID)
	if err != nil {
		q.t.Fatal(err)
	}
	var s quoteState
	open := map[int64]bool{}
	for _, is := range m.Issues {
		if is.IsPull {
			continue
		}
		s.all = append(s.all, is.Number)
		if is.State == "open" {
			s.issues = append(s.issues, is)
			open[is.Number] = true
		}
	}
	for _, ms := range m.Milestones {
		if ms.State == "open" {
			s.milestones = append(s.milestones, ms.ID)
		}
	}
	for _, d := range m.Dependencies {
		if d.DependsOnRepo == "" && open[d.Issue] {
			s.deps = append(s.deps, d)
		}
	}
	return s
}

// reaches reports whether from depends, directly or not, on to.
func (s quoteState) reaches(from, to int64) bool {
	seen := map[int64]bool{}
	next := []int64{from}
	for len(next) > 0 {
		n := next[len(next)-1]
		next = next[:len(next)-1]
		if n == to {
			return true
		}
		if seen[n] {
			continue
		}
		seen[n] = true
		for _, d := range s.deps {
			if d.Issue == n {
				next = append(next, d.DependsOn)
			}
		}
	}
	return false
}

var quoteSizes = []string{"est/xs", "est/s", "est/m", "est/l", "est/xl"}

func (q *quoteProject) pick(xs []int64) int64 { return xs[q.rng.IntN(len(xs))] }

func (q *quoteProject) openIssue(s quoteState) store.Issue {
	return s.issues[q.rng.IntN(len(s.issues))]
}

// randomChange draws a case: most often an apply_changes batch, else a
// capacity directive or a due date edited in the forge.
func (q *quoteProject) randomChange(c int) change {
	s := q.state()
	switch r := q.rng.IntN(20); {
	case r < 3:
		return q.capacityChange()
	case r < 6 && len(s.milestones) > 0:
		return q.dueDateEdit(s)
	}
	var ops []tools.Op
	for range 1 + q.rng.IntN(3) {
		if op, ok := q.randomOp(s, c, ops); ok {
			ops = append(ops, op)
		}
	}
	if len(ops) == 0 {
		is := q.openIssue(s)
		ops = append(ops, tools.Op{Op: "set_priority", Issue: is.Number, Priority: "p/0"})
	}
	raw, _ := json.Marshal(ops)
	var kinds []string
	for _, op := range ops {
		kinds = append(kinds, op.Op)
	}
	return change{
		kind:  "apply_changes",
		ops:   kinds,
		what:  "apply_changes " + string(raw),
		quote: func() (worker.Quote, error) { return q.svc.QuoteOps(q.ctx, "", ops) },
		apply: func() map[int64]int64 {
			in, _ := json.Marshal(tools.ApplyChangesInput{Ops: ops, Approved: true})
			env, terr := q.reg.Call(q.ctx, quoteApprover, "apply_changes", in)
			if terr != nil {
				q.t.Fatalf("apply_changes %s: %v", raw, terr)
			}
			out := env.Data.(tools.ApplyChangesOutput)
			if out.Applied != len(ops) {
				q.t.Fatalf("apply_changes %s: %+v", raw, out)
			}
			return q.filed(ops, out.Created)
		},
	}
}

// filed maps the numbers the quote gave proposed issues (after the
// highest number there was, in order) to those Gitea gave them.
func (q *quoteProject) filed(ops []tools.Op, created []int64) map[int64]int64 {
	if len(created) == 0 {
		return nil
	}
	s := q.state()
	top := int64(0)
	for _, n := range s.all {
		if !slices.Contains(created, n) {
			top = max(top, n)
		}
	}
	heads, err := store.IssueHeads(q.ctx, q.pool, q.p.ID)
	if err != nil {
		q.t.Fatal(err)
	}
	for _, h := range heads {
		if h.IsPull && !slices.Contains(created, h.Number) {
			top = max(top, h.Number)
		}
	}
	out := map[int64]int64{}
	for k, n := range created {
		out[top+int64(k+1)] = n
	}
	return out
}

func (q *quoteProject) randomOp(s quoteState, c int, earlier []tools.Op) (tools.Op, bool) {
	is := q.openIssue(s)
	switch q.rng.IntN(10) {
	case 8:
		// Reassign, hand back or share: nobody, one or two of the team.
		var who []string
		for range q.rng.IntN(3) {
			who = append(who, q.team[q.rng.IntN(len(q.team))])
		}
		return tools.Op{Op: "set_assignees", Issue: is.Number, Assignees: who}, true
	case 0:
		return tools.Op{Op: "set_estimate", Issue: is.Number, Estimate: quoteSizes[q.rng.IntN(len(quoteSizes))]}, true
	case 1:
		return tools.Op{Op: "set_priority", Issue: is.Number, Priority: fmt.Sprintf("p/%d", q.rng.IntN(4))}, true
	case 2:
		op := tools.Op{Op: "set_milestone", Issue: is.Number}
		if len(s.milestones) > 0 && q.rng.IntN(4) > 0 {
			m := q.pick(s.milestones)
			op.Milestone = &m
		}
		return op, true
	case 3:
		if len(s.milestones) == 0 {
			return tools.Op{}, false
		}
		m, hard := q.pick(s.milestones), q.rng.IntN(2) == 0
		return tools.Op{Op: "set_deadline_hard", Milestone: &m, Hard: &hard}, true
	case 4:
		d := q.pick(s.all)
		if d == is.Number {
			return tools.Op{}, false
		}
		return tools.Op{Op: "add_dep", Issue: is.Number, DependsOn: d}, true
	case 5:
		if len(s.deps) == 0 {
			return tools.Op{}, false
		}
		d := s.deps[q.rng.IntN(len(s.deps))]
		return tools.Op{Op: "remove_dep", Issue: d.Issue, DependsOn: d.DependsOn}, true
	case 6:
		for _, op := range earlier {
			if op.Issue == is.Number {
				return tools.Op{}, false // a batch does not close what it changes
			}
		}
		return tools.Op{Op: "close_issue", Issue: is.Number}, true
	case 7:
		for _, l := range is.Labels {
			if ll := strings.ToLower(l); strings.HasPrefix(ll, "est/") || strings.HasPrefix(ll, "p/") || ll == "deadline/hard" {
				return tools.Op{Op: "remove_label", Issue: is.Number, Label: l}, true
			}
		}
		return tools.Op{}, false
	}
	q.proposal++
	op := tools.Op{Op: "create_issue", Title: fmt.Sprintf("Proposal %s-%d", q.name, q.proposal), Body: "Proposed in a property test.",
		Labels: []string{quoteSizes[q.rng.IntN(len(quoteSizes))]}}
	if q.rng.IntN(2) == 0 {
		op.Labels = append(op.Labels, fmt.Sprintf("p/%d", q.rng.IntN(4)))
	}
	if q.rng.IntN(5) == 0 {
		op.Labels = append(op.Labels, "deadline/hard")
	}
	if len(s.milestones) > 0 && q.rng.IntN(4) > 0 {
		m := q.pick(s.milestones)
		op.Milestone = &m
	}
	if q.rng.IntN(2) == 0 {
		op.Deps = append(op.Deps, is.Number)
	}
	creates := 0
	for _, e := range earlier {
		if e.Op == "create_issue" {
			creates++
		}
	}
	if creates > 0 && q.rng.IntN(2) == 0 {
		op.Deps = append(op.Deps, -int64(1+q.rng.IntN(creates)))
	}
	return op, true
}

// capacityChange is a capacity directive: fewer or more hours, time off
// ahead, or both, for someone on the team or a newcomer.
func (q *quoteProject) capacityChange() change {
	who := q.team[q.rng.IntN(len(q.team))]
	if q.rng.IntN(6) == 0 {
		who = "newhire"
	}
	params := map[string]any{}
	ch := scheduler.Change{Kind: scheduler.SetCapacity, Person: who}
	if q.rng.IntN(2) == 0 {
		h := float64(1 + q.rng.IntN(8))
		params["hoursPerDay"], ch.HoursPerDay = h, h
	}
	if len(params) == 0 || q.rng.IntN(2) == 0 {
		from := q.clock.Now().UTC().AddDate(0, 0, q.rng.IntN(20))
		to := from.AddDate(0, 0, q.rng.IntN(12))
		span := store.DateSpan{From: from.Format(time.DateOnly), To: to.Format(time.DateOnly)}
		params["timeOff"] = []store.DateSpan{span}
		r, err := worker.ParseDateSpan(span, nil)
		if err != nil {
			q.t.Fatal(err)
		}
		ch.TimeOff = []scheduler.DateRange{r}
	}
	raw, _ := json.Marshal(map[string]any{"kind": "capacity", "quote": "capacity for " + who, "target": map[string]string{"member": who}, "params": params})
	var quote worker.Quote
	return change{
		kind: "capacity directive",
		what: "record_directive " + string(raw),
		quote: func() (worker.Quote, error) {
			var err error
			quote, err = q.engine.WhatIf(q.ctx, q.p.ID, func(scheduler.Input) []scheduler.Change { return []scheduler.Change{ch} })
			return quote, err
		},
		apply: func() map[int64]int64 {
			env, terr := q.reg.Call(q.ctx, quoteApprover, "record_directive", raw)
			if terr != nil {
				q.t.Fatalf("record_directive %s: %v", raw, terr)
			}
			out := env.Data.(tools.RecordDirectiveOutput)
			if !strings.HasPrefix(out.Summary, quote.Consequence) {
				q.t.Errorf("record_directive %s answered %q; the same what-if says %q", raw, out.Summary, quote.Consequence)
			}
			return nil
		},
	}
}

// dueDateEdit moves a milestone's due date in the forge, as a person does
// in Gitea's milestone form (end of the chosen day).
func (q *quoteProject) dueDateEdit(s quoteState) change {
	id := q.pick(s.milestones)
	day := q.clock.Now().UTC().AddDate(0, 0, q.rng.IntN(120)).Truncate(24 * time.Hour)
	due := day.Add(24*time.Hour - time.Second)
	return change{
		kind: "due date in the forge",
		what: fmt.Sprintf("due date of milestone %d set to %s in the forge", id, due.Format(time.RFC3339)),
		quote: func() (worker.Quote, error) {
			return q.engine.WhatIf(q.ctx, q.p.ID, func(scheduler.Input) []scheduler.Change {
				return []scheduler.Change{{Kind: scheduler.SetDueDate, Milestone: id, Due: due}}
			})
		},
		apply: func() map[int64]int64 {
			body, _ := json.Marshal(map[string]any{"due_on": due.Format(time.RFC3339)})
			req, _ := http.NewRequest(http.MethodPatch, fmt.Sprintf("%s/api/v1/repos/acme/%s/milestones/%d", q.fake.URL, q.name, id), bytes.NewReader(body))
			req.Header.Set("Authorization", "token "+q.fake.Token())
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				q.t.Fatalf("edit milestone %d: %v %v", id, resp, err)
			}
			resp.Body.Close()
			return nil
		},
		reconcile: true,
	}
}

// checkMonotone quotes changes whose direction a person knows and checks
// nothing moves the other way; it returns how many it checked.
func (q *quoteProject) checkMonotone() int {
	q.t.Helper()
	s := q.state()
	is := q.openIssue(s)
	size, _, _ := scheduler.ParseLabels(is.Labels)
	var more, less []scheduler.Change
	if k := slices.Index(quoteSizes, "est/"+string(size)); k >= 0 {
		if k+1 < len(quoteSizes) {
			more = append(more, scheduler.Change{Kind: scheduler.SetEstimate, Issue: is.Number, Estimate: scheduler.Size(strings.TrimPrefix(quoteSizes[k+1], "est/"))})
		}
		if k > 0 {
			less = append(less, scheduler.Change{Kind: scheduler.SetEstimate, Issue: is.Number, Estimate: scheduler.Size(strings.TrimPrefix(quoteSizes[k-1], "est/"))})
		}
	}
	who := q.team[q.rng.IntN(len(q.team))]
	from := q.clock.Now().UTC().AddDate(0, 0, 1+q.rng.IntN(10)).Truncate(24 * time.Hour)
	switch q.rng.IntN(4) {
	case 0:
		more = append(more, scheduler.Change{Kind: scheduler.SetCapacity, Person: who, TimeOff: []scheduler.DateRange{{From: from, To: from.AddDate(0, 0, q.rng.IntN(15))}}})
	case 1:
		more = append(more, scheduler.Change{Kind: scheduler.SetCapacity, Person: who, HoursPerDay: 1})
	case 2:
		less = append(less, scheduler.Change{Kind: scheduler.SetCapacity, Person: who, HoursPerDay: 12})
	case 3:
		var m int64
		if len(s.milestones) > 0 {
			m = q.pick(s.milestones)
		}
		more = append(more, scheduler.Change{Kind: scheduler.AddIssue, NewIssue: &scheduler.Issue{Number: -1, Title: "more work", Estimate: scheduler.SizeL,
			Labels: []string{"est/l", fmt.Sprintf("p/%d", q.rng.IntN(4))}, Milestone: m}})
	}
	type check struct {
		later   bool
		changes []scheduler.Change
		only    int64 // when set, only this issue is held to the direction
	}
	checks := []check{{true, more, 0}, {false, less, 0}}
	if d := q.pick(s.all); d != is.Number && !s.reaches(d, is.Number) {
		// A dependency on work already ahead in the work order only adds a
		// wait: nothing may move earlier. One on work queued behind pulls
		// that work ahead (it is needed first), which may then finish
		// earlier, and so may what follows it; the dependent never does.
		// (One closing a cycle makes its issues unschedulable, and their
		// milestone is forecast from the rest: not "more work".)
		var base scheduler.Input
		if _, err := q.engine.WhatIf(q.ctx, q.p.ID, func(in scheduler.Input) []scheduler.Change { base = in; return nil }); err != nil {
			q.t.Fatal(err)
		}
		order, err := scheduler.WorkOrder(base)
		if err != nil {
			q.t.Fatal(err)
		}
		dep := scheduler.Change{Kind: scheduler.AddDep, Issue: is.Number, DependsOn: d}
		a, c := slices.Index(order, is.Number), slices.Index(order, d)
		if c < a {
			checks[0].changes = append(checks[0].changes, dep)
		} else {
			checks = append(checks, check{true, []scheduler.Change{dep}, is.Number})
		}
	}
	n := 0
	for _, c := range checks {
		if len(c.changes) == 0 {
			continue
		}
		quote, err := q.engine.WhatIf(q.ctx, q.p.ID, func(scheduler.Input) []scheduler.Change { return c.changes })
		if err != nil {
			q.t.Fatal(err)
		}
		if v := monotoneViolations(quote, c.later, c.only); len(v) > 0 {
			raw, _ := json.Marshal(c.changes)
			q.t.Errorf("%s must move nothing %s, yet (%s):\n  %s", raw, map[bool]string{true: "earlier", false: "later"}[c.later],
				quote.Consequence, strings.Join(v, "\n  "))
		}
		n++
	}
	return n
}

// monotoneViolations lists what moved against the direction: earlier (or
// a higher chance of the due date) when later is set, else the reverse.
func monotoneViolations(quote worker.Quote, later bool, only int64) []string {
	var out []string
	against := func(before, after time.Time) bool {
		b, a := scheduler.DateOf(before), scheduler.DateOf(after)
		if b == "" || a == "" {
			return false
		}
		if later {
			return a < b
		}
		return a > b
	}
	for _, d := range quote.Milestones {
		b, a := d.Before, d.After
		if b == nil || a == nil || only != 0 {
			continue
		}
		pd := scheduler.RoundPDue(a.PDue) - scheduler.RoundPDue(b.PDue)
		if against(b.P10, a.P10) || against(b.P50, a.P50) || against(b.P80, a.P80) || (later && pd > 1e-9) || (!later && pd < -1e-9) {
			out = append(out, fmt.Sprintf("milestone %s: p10/p50/p80 %s/%s/%s pDue %.2f → %s/%s/%s pDue %.2f", d.Title,
				scheduler.DateOf(b.P10), scheduler.DateOf(b.P50), scheduler.DateOf(b.P80), b.PDue,
				scheduler.DateOf(a.P10), scheduler.DateOf(a.P50), scheduler.DateOf(a.P80), a.PDue))
		}
	}
	for _, d := range quote.Issues {
		b, a := d.Before, d.After
		if b == nil || a == nil || b.Unschedulable != "" || a.Unschedulable != "" || (only != 0 && d.Number != only) {
			continue
		}
		if against(b.P10, a.P10) || against(b.P50, a.P50) || against(b.P80, a.P80) {
			out = append(out, fmt.Sprintf("#%d: p10/p50/p80 %s/%s/%s → %s/%s/%s", d.Number,
				scheduler.DateOf(b.P10), scheduler.DateOf(b.P50), scheduler.DateOf(b.P80),
				scheduler.DateOf(a.P10), scheduler.DateOf(a.P50), scheduler.DateOf(a.P80)))
		}
	}
	return out
}
