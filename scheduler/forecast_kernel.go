package scheduler

// The kernel schedules a block of blockTrials trials at once, item by item:
// for each issue in list order it computes that issue's draw, start and
// finish in every trial of the block before moving on. Trials are
// independent, so the inner loop has no chain of dependent operations and
// the processor overlaps them, and each issue's results for the block sit in
// one contiguous row that its histogram and its dependents read in order.
// Buffers are allocated once per worker and reused for every block.

import (
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
)

// blockTrials is the number of trials one kernel pass schedules.
const blockTrials = 64

// blockState is one worker's scratch space: one row of blockTrials values
// per item, person or group, so every inner loop runs over a fixed-size
// array (no bounds checks, no dependency between its iterations).
type blockState struct {
	fin [][blockTrials]float64 // per item: wall-clock finish, hours since the origin
	// pred is, per item with dependencies, the item that bound its start:
	// the dependency that finished last, or the person's previous item
	// (plan.prevSame, fixed per plan); -1 when neither did. Items without
	// dependencies are always bound by prevSame, so their rows are not
	// written (see predOf).
	pred [][blockTrials]int32
	free [][blockTrials]float64 // per person: working coordinate of their last finish
	idle [][blockTrials]float64 // per person: working hours spent waiting on dependencies
	// startAt is, per person, the wall clock of their first free moment:
	// what "free at" is before their first item (afterwards it is the
	// previous item's fin row). A dependency finishing no later cannot delay
	// the person, which spares the working-hour conversion.
	startAt [][blockTrials]float64
	gfin    [][blockTrials]float64 // per group: last finish (accumulate)
	glast   [][blockTrials]int32   // per group: the item that finished last
	// chain is, per group and item, the trials of the block in which the
	// item is on that group's critical chain, one bit per trial.
	chain []uint64
	// Trace only (tests): start, effort and person of every item.
	start  [][blockTrials]float64
	effort [][blockTrials]float32
	who    [][blockTrials]int32
}

func (p *plan) newBlockState() *blockState {
	n, np, ng := len(p.items), len(p.people), len(p.groups)
	s := &blockState{
		fin: make([][blockTrials]float64, n), pred: make([][blockTrials]int32, n),
		free: make([][blockTrials]float64, np), idle: make([][blockTrials]float64, np),
		startAt: make([][blockTrials]float64, np),
		gfin:    make([][blockTrials]float64, ng), glast: make([][blockTrials]int32, ng),
		chain: make([]uint64, ng*n),
	}
	for k := range p.people {
		at := p.tls[k].finishAt(p.people[k].start)
		for t := range blockTrials {
			s.startAt[k][t] = at
		}
	}
	if p.trace {
		s.start = make([][blockTrials]float64, n)
		s.effort = make([][blockTrials]float32, n)
		s.who = make([][blockTrials]int32, n)
	}
	return s
}

// predOf is the item that bound item pos's start in trial t of the block.
func (p *plan) predOf(s *blockState, pos int32, t int) int32 {
	if it := &p.items[pos]; it.depHi > it.depLo {
		return s.pred[pos][t]
	}
	return p.prevSame[pos]
}

// runBlock schedules trials t0 .. t0+blockTrials-1 into s (callers use
// the first nb; fixed-size loops are cheaper than the bounds checks of
// variable ones).
//
// When hist is not nil the whole block counts: each item's finishes go into
// its histogram (grids) while they are still in cache.
func (p *plan) runBlock(t0 int, s *blockState, hist []uint64, grids []issueGrid) {
	const B = blockTrials
	tls := p.tls
	for k := range p.people {
		start := p.people[k].start
		for t := range B {
			s.free[k][t], s.idle[k][t] = start, 0
		}
	}
	items, deps, tables := p.items, p.deps, p.tables
	var ready [B]float64
	var depPred [B]int32
	var effs [B]float64
	// The trial's common score, times its weight (see copula).
	var common [B]float64
	if c := p.shared; c != nil {
		for t := range B {
			common[t] = c.a * float64(c.score[drawIndex(p.sharedKey, t0+t)])
		}
	}
	for pos := range items {
		it := &items[pos]
		tab := (*[drawTableSize]float32)(tables[it.tab : it.tab+drawTableSize])
		scale, spent := float64(it.scale), float64(it.spent)
		if p.shared != nil {
			p.blockDraws(it, tab, t0, &effs, &common)
		} else if t0%drawsPerHash == 0 && spent == 0 {
			// The common case: an aligned block of an issue not started,
			// the whole lognormal straight from the four slices of each
			// hash (see drawIndex). A compare, not max: no NaN handling.
			for g := range B / drawsPerHash {
				h := mix64(it.key + uint64(t0/drawsPerHash+g)*trialStep)
				e0 := scale * float64(tab[uint32(h)&(drawTableSize-1)])
				e1 := scale * float64(tab[uint32(h>>16)&(drawTableSize-1)])
				e2 := scale * float64(tab[uint32(h>>32)&(drawTableSize-1)])
				e3 := scale * float64(tab[uint32(h>>48)&(drawTableSize-1)])
				if e0 < minRemainingHours {
					e0 = minRemainingHours
				}
				if e1 < minRemainingHours {
					e1 = minRemainingHours
				}
				if e2 < minRemainingHours {
					e2 = minRemainingHours
				}
				if e3 < minRemainingHours {
					e3 = minRemainingHours
				}
				e := (*[drawsPerHash]float64)(effs[drawsPerHash*g : drawsPerHash*g+drawsPerHash])
				e[0], e[1], e[2], e[3] = e0, e1, e2, e3
			}
		} else {
			p.blockDraws(it, tab, t0, &effs, nil)
		}
		hasDeps := it.depHi > it.depLo
		if hasDeps {
			// The first dependency sets the bound outright; only later ones
			// compare.
			ds := deps[it.depLo:it.depHi]
			d0 := ds[0]
			ready = s.fin[d0]
			for t := range B {
				depPred[t] = d0
			}
			for _, d := range ds[1:] {
				drow := &s.fin[d]
				for t := range B {
					if f := drow[t]; f > ready[t] {
						ready[t], depPred[t] = f, d
					}
				}
			}
		}
		fin := &s.fin[pos]
		// One person, one calendar for the whole block (unassigned issues
		// got their person in the planning pass).
		who := it.person
		tl := tls[who]
		offs, inv := tl.offsets, tl.invHPD
		free, idle := &s.free[who], &s.idle[who]
		prevSame := p.prevSame[pos]
		if !hasDeps {
			for t := range B {
				end := free[t] + effs[t]
				// tl.finishAt, inlined.
				var f float64
				if k := int((end - boundaryNudge) * inv); uint(k) < uint(len(offs)) {
					f = offs[k] + end
				} else {
					f = tl.finishAt(end)
				}
				fin[t], free[t] = f, end
			}
		} else {
			pred := &s.pred[pos]
			// The person is free (wall clock) when their previous item
			// finished.
			freeAt := &s.startAt[who]
			if prevSame >= 0 {
				freeAt = &s.fin[prevSame]
			}
			for t := range B {
				u, pr := free[t], prevSame
				if ready[t] > freeAt[t] {
					if ur := tl.working(ready[t]); ur > u {
						idle[t] += ur - u
						u, pr = ur, depPred[t]
					}
				}
				end := u + effs[t]
				var f float64
				if k := int((end - boundaryNudge) * inv); uint(k) < uint(len(offs)) {
					f = offs[k] + end
				} else {
					f = tl.finishAt(end)
				}
				fin[t], pred[t] = f, pr
				free[t] = end
			}
		}
		if hist != nil {
			// Straight into the item's row, four 16-bit buckets per word.
			// (Four local rows added at the end, to spare consecutive
			// trials in the same bucket a wait on each other's increment,
			// measured no faster: zeroing and adding them cost as much.)
			g := grids[pos]
			h := (*[histWords]uint64)(hist[pos*histWords : (pos+1)*histWords])
			for t := range B {
				b := g.bucket(fin[t])
				h[(b>>2)&(histWords-1)] += 1 << (16 * (b & 3))
			}
		}
		if p.trace {
			// Tests only: replay the lane to record where each item started.
			for t := range B {
				u := s.free[who][t] - effs[t]
				s.start[pos][t], s.effort[pos][t], s.who[pos][t] = tl.startAt(u), float32(effs[t]), who
				if !hasDeps {
					s.pred[pos][t] = prevSame
				}
			}
		}
	}
}

// blockDraws fills effs with an item's efforts for trials t0 .. t0+B-1
// in the general case: any alignment, started or not, and correlated
// through the trials' common scores when common is not nil.
func (p *plan) blockDraws(it *planItem, tab *[drawTableSize]float32, t0 int, effs *[blockTrials]float64, common *[blockTrials]float64) {
	const B = blockTrials
	// Slot indices for the block: four per hash (see drawIndex).
	var idx [B]uint32
	if t0%drawsPerHash == 0 {
		for g := range B / drawsPerHash {
			h := mix64(it.key + uint64(t0/drawsPerHash+g)*trialStep)
			idx[4*g] = uint32(h) & (drawTableSize - 1)
			idx[4*g+1] = uint32(h>>16) & (drawTableSize - 1)
			idx[4*g+2] = uint32(h>>32) & (drawTableSize - 1)
			idx[4*g+3] = uint32(h>>48) & (drawTableSize - 1)
		}
	} else {
		for t := range B {
			idx[t] = drawIndex(it.key, t0+t)
		}
	}
	if c := p.shared; common != nil && c != nil {
		for t := range B {
			idx[t] = c.slotOf(common[t] + c.b*float64(c.score[idx[t]&(drawTableSize-1)]))
		}
	}
	scale, spent, lo, span := float64(it.scale), float64(it.spent), it.lo, it.span
	if spent == 0 {
		// Not started: the whole lognormal. (A compare, not max: no NaN
		// handling.)
		for t := range B {
			effs[t] = scale * float64(tab[idx[t]&(drawTableSize-1)])
			if effs[t] < minRemainingHours {
				effs[t] = minRemainingHours
			}
		}
	} else {
		// Started: the truncated range above the spent hours.
		for t := range B {
			effs[t] = scale*float64(tab[(lo+(idx[t]*span)>>drawBits)&(drawTableSize-1)]) - spent
			if effs[t] < minRemainingHours {
				effs[t] = minRemainingHours
			}
		}
	}
}

// Histogram layout for issue quantiles.
const (
	histBuckets = 256
	// histWords is a histogram row of 16-bit counts packed four to a word.
	histWords   = histBuckets / 4
	pilotTrials = 256
)

// issueGrid maps an item's finish hour to a histogram bucket: bucket b
// covers [(base+b)*width, (base+b+1)*width) hours after the origin, days
// whole UTC days from the origin's date on.
type issueGrid struct {
	invW, base float64
	days       int
}

func (g issueGrid) bucket(t float64) int {
	b := int(t*g.invW - g.base)
	return max(0, min(b, histBuckets-1))
}

// workerAcc is one worker's share of the results; merging sums them, so the
// outcome does not depend on which worker ran which trials.
type workerAcc struct {
	hist []uint32 // items × histBuckets
	// counts is hist's working copy in 16 bits (half the cache footprint),
	// added into hist before it can overflow: a block adds at most
	// blockTrials to a bucket.
	counts []uint16
	// packed is the same in four 16-bit lanes per word, for whole blocks
	// (runBlock); counts takes the last, partial block. The flush bound
	// keeps every lane below 1<<16, so no addition carries into the next.
	packed  []uint64
	pending int      // blocks counted since the last flush
	crit    []uint32 // per item: trials on its group's critical chain
	doneBy  *doneByAcc
}

// histogram counts the first nb trials of a block into the issues'
// histograms (full blocks are counted by runBlock itself).
func (p *plan) histogram(nb int, s *blockState, acc *workerAcc, grids []issueGrid) {
	for pos := range p.items {
		h := (*[histBuckets]uint16)(acc.counts[pos*histBuckets : (pos+1)*histBuckets])
		for _, f := range s.fin[pos][:nb] {
			h[grids[pos].bucket(f)&(histBuckets-1)]++
		}
	}
}

// maxPendingBlocks is how many blocks the 16-bit counts (and lanes) can take.
const maxPendingBlocks = math.MaxUint16 / blockTrials

// counted notes one more block in counts and flushes them into hist when
// another could overflow them (or at the end, with final set).
func (a *workerAcc) counted(final bool) {
	a.pending++
	if a.pending < maxPendingBlocks && !final {
		return
	}
	for i, c := range a.counts {
		a.hist[i] += uint32(c)
	}
	clear(a.counts)
	for w, c := range a.packed {
		for lane := range 4 {
			a.hist[4*w+lane] += uint32(uint16(c >> (16 * lane)))
		}
	}
	clear(a.packed)
	a.pending = 0
}

// accumulate adds a scheduled block to acc and to the per-trial series.
func (p *plan) accumulate(t0, nb int, s *blockState, acc *workerAcc, groupFin, personHours, personFree [][]float64) {
	// Group finishes: each person's items finish in list order, strictly
	// later each time, so a group's last finish is that of one of its
	// per-person last items (p.groupTails, in list order; the strict
	// comparison keeps the earliest item among equal finishes).
	for g, tails := range p.groupTails {
		gfin, glast := &s.gfin[g], &s.glast[g]
		for t := range blockTrials {
			gfin[t], glast[t] = -1, -1
		}
		for _, pos := range tails {
			fin := &s.fin[pos]
			for t := range blockTrials {
				if f := fin[t]; f > gfin[t] {
					gfin[t], glast[t] = f, pos
				}
			}
		}
		copy(groupFin[g][t0:t0+nb], gfin[:nb])
	}
	// Critical chains: from each group's last item, follow the binding
	// predecessors back; an item counts when the chain is its own group's.
	// Predecessors come earlier in the list, so one backward sweep carries
	// each group's chain as a bit per trial from an item to its predecessor.
	n := len(p.items)
	chain := s.chain
	clear(chain)
	for g := range p.groups {
		for t, l := range s.glast[g][:nb] {
			if l >= 0 {
				chain[g*n+int(l)] |= 1 << t
			}
		}
	}
	for pos := n - 1; pos >= 0; pos-- {
		it := &p.items[pos]
		hasDeps := it.depHi > it.depLo
		prev := p.prevSame[pos]
		for g := range p.groups {
			m := chain[g*n+pos]
			if m == 0 {
				continue
			}
			if it.group == int32(g) {
				acc.crit[pos] += uint32(bits.OnesCount64(m))
			}
			if !hasDeps {
				if prev >= 0 {
					chain[g*n+int(prev)] |= m
				}
				continue
			}
			pred := &s.pred[pos]
			for ; m != 0; m &= m - 1 {
				t := bits.TrailingZeros64(m)
				if q := pred[t&(blockTrials-1)]; q >= 0 {
					chain[g*n+int(q)] |= 1 << t
				}
			}
		}
	}
	if acc.doneBy != nil {
		p.countDoneBy(t0, nb, s, acc.doneBy)
	}
	for k := range p.people {
		start := p.people[k].start
		for t := range nb {
			// Effort is the working time used minus the time spent waiting.
			personHours[k][t0+t] = s.free[k][t] - start - s.idle[k][t]
			personFree[k][t0+t] = p.tls[k].finishAt(s.free[k][t])
		}
	}
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

	grids, pilotStates := p.pilotBlocks()

	blocks := (T + blockTrials - 1) / blockTrials
	workers := max(1, min(p.workers, blocks))
	accs := make([]*workerAcc, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		acc := &workerAcc{
			hist: make([]uint32, n*histBuckets), counts: make([]uint16, n*histBuckets),
			packed: make([]uint64, n*histWords),
			crit:   make([]uint32, n), doneBy: p.newDoneByAcc(),
		}
		accs[w] = acc
		wg.Go(func() {
			var s *blockState
			for {
				b := int(next.Add(1)) - 1
				if b >= blocks {
					acc.counted(true)
					return
				}
				t0 := b * blockTrials
				nb := min(blockTrials, T-t0)
				if b < len(pilotStates) {
					// The pilot already scheduled this block: count it, and
					// keep its buffers for later blocks.
					ps := pilotStates[b]
					p.histogram(nb, ps, acc, grids)
					acc.counted(false)
					p.accumulate(t0, nb, ps, acc, groupFin, personHours, personFree)
					if s == nil {
						s = ps
					}
					continue
				}
				if s == nil {
					s = p.newBlockState()
				}
				if nb == blockTrials {
					p.runBlock(t0, s, acc.packed, grids)
				} else {
					p.runBlock(t0, s, nil, nil)
					p.histogram(nb, s, acc, grids)
				}
				acc.counted(false)
				p.accumulate(t0, nb, s, acc, groupFin, personHours, personFree)
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
		if a.doneBy != nil {
			for i, v := range a.doneBy.hist {
				accs[0].doneBy.hist[i] += v
			}
		}
	}
	if accs[0].doneBy != nil {
		p.doneByHist = accs[0].doneBy.hist
	}
	return p.summarize(accs[0], grids, groupFin, personHours, personFree)
}

// pilot runs the first trials to size each issue's histogram: day buckets
// from the origin's date to a quarter past the latest pilot finish
// (finishes beyond go to the last bucket, far from p10..p80). Equal
// finishes give equal grids, so an issue a what-if does not reach keeps
// its exact quantiles.
func (p *plan) pilot() []issueGrid {
	grids, _ := p.pilotBlocks()
	return grids
}

// pilotBlocks is pilot that also returns the scheduled blocks, one state
// per block of pilot trials, so the main run counts them instead of
// scheduling them again.
func (p *plan) pilotBlocks() ([]issueGrid, []*blockState) {
	const B = blockTrials
	n := len(p.items)
	lo := make([]float64, n)
	hi := make([]float64, n)
	for i := range lo {
		lo[i], hi[i] = math.Inf(1), math.Inf(-1)
	}
	trials := min(pilotTrials, p.trials)
	blocks := (trials + B - 1) / B
	states := make([]*blockState, blocks)
	workers := max(1, min(p.workers, blocks))
	var mu sync.Mutex
	var wg sync.WaitGroup
	var next atomic.Int64
	for range workers {
		wg.Go(func() {
			l := make([]float64, n)
			h := make([]float64, n)
			for i := range l {
				l[i], h[i] = math.Inf(1), math.Inf(-1)
			}
			for {
				b := int(next.Add(1)) - 1
				if b >= blocks {
					break
				}
				nb := min(B, trials-b*B)
				s := p.newBlockState()
				states[b] = s
				p.runBlock(b*B, s, nil, nil)
				for i := range n {
					for _, f := range s.fin[i][:nb] {
						l[i] = min(l[i], f)
						h[i] = max(h[i], f)
					}
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
	// Buckets are whole UTC days (or 2, 4, ... of them when the pilot
	// reaches beyond histBuckets days), counted from the origin's date, so
	// a quantile's date is read exactly and two forecasts' buckets share
	// their edges. The width grows with the pilot's latest finish only:
	// when every trial of one forecast finishes no earlier than in the
	// other (more work), so does its pilot, its buckets are as wide or
	// wider, and its quantile dates are no earlier (see histQuantile).
	off := p.origin.UTC().Sub(p.origin.UTC().Truncate(24 * time.Hour)).Hours()
	grids := make([]issueGrid, n)
	for i := range grids {
		need := (hi[i]+off)/24*1.25 + 1
		days := 1
		for float64(days*histBuckets) < need {
			days *= 2
		}
		w := 24 * float64(days)
		grids[i] = issueGrid{invW: 1 / w, base: -off / w, days: days}
	}
	return grids, states
}

// itemResult is where one trial put one item.
type itemResult struct {
	start, fin float64 // wall-clock hours since the origin
	effort     float32
	pred       int32 // the item that bound its start, -1 none
	who        int32 // the person who did it
}

// traceTrial schedules a single trial and returns every item's placement,
// for tests of the schedule's invariants.
func (p *plan) traceTrial(trial int) []itemResult {
	p.trace = true
	s := p.newBlockState()
	p.runBlock(trial, s, nil, nil)
	out := make([]itemResult, len(p.items))
	for pos := range out {
		out[pos] = itemResult{start: s.start[pos][0], fin: s.fin[pos][0], effort: s.effort[pos][0], pred: p.predOf(s, int32(pos), 0), who: s.who[pos][0]}
	}
	return out
}
