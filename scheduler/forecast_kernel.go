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
	"sync"
	"sync/atomic"
)

// blockTrials is the number of trials one kernel pass schedules.
const blockTrials = 32

// blockState is one worker's scratch space. Per-item arrays are item-major
// (item pos, trial t at pos*blockTrials+t); per-person arrays likewise.
type blockState struct {
	fin   []float64 // wall-clock finish, hours since the origin
	pred  []int32   // the item that bound the start, -1 none
	free  []float64 // per person: working coordinate of their last finish
	hours []float64 // per person: effort scheduled
	last  []int32   // per person: their last item
	// freeAt is free as wall clock: a dependency finishing no later cannot
	// delay the person, which spares the working-hour conversion.
	freeAt []float64
	// poolKey holds one key per pool member and trial (member-major: the
	// earliest-free search runs down each member's row for all trials at
	// once, 32 independent minimum chains instead of one long one).
	poolKey []uint64
	gfin    []float64 // per group: last finish
	glast   []int32   // per group: the item that finished last
	mask    []uint64  // per item: bit g set when on group g's critical chain
	// Trace only (tests): start, effort and person of every item.
	start  []float64
	effort []float32
	who    []int32
}

func (p *plan) newBlockState() *blockState {
	n, np, ng := len(p.items), len(p.people), len(p.groups)
	s := &blockState{
		fin: make([]float64, n*blockTrials), pred: make([]int32, n*blockTrials),
		free: make([]float64, np*blockTrials), freeAt: make([]float64, np*blockTrials), hours: make([]float64, np*blockTrials), last: make([]int32, np*blockTrials),
		poolKey: make([]uint64, len(p.pool)*blockTrials),
		gfin:    make([]float64, ng*blockTrials), glast: make([]int32, ng*blockTrials),
		mask: make([]uint64, n*blockTrials),
	}
	if p.trace {
		s.start = make([]float64, n*blockTrials)
		s.effort = make([]float32, n*blockTrials)
		s.who = make([]int32, n*blockTrials)
	}
	return s
}

// poolSlotMask keeps the pool slot in a pool key's low bits; pools larger
// than that are not supported (newPlan rejects them).
const (
	poolSlotBits = 10
	poolSlotMask = 1<<poolSlotBits - 1
	maxPool      = 1 << poolSlotBits
)

// poolKeyOf orders pool members by when they free up: the time's bits
// (ordered like the float for freeAt >= 0, which every finish after the
// origin is; initial keys are clamped by the caller) with the pool slot in
// the low bits, which also breaks ties by login order.
func poolKeyOf(freeAt float64, slot int32) uint64 {
	return math.Float64bits(freeAt)&^poolSlotMask | uint64(slot)
}

// runBlock schedules trials t0 .. t0+nb-1 (nb <= blockTrials) into s. When
// acc is not nil it also counts who took each pool item.
func (p *plan) runBlock(t0, nb int, s *blockState, acc *workerAcc) {
	const B = blockTrials
	tls := p.tls
	for k := range p.people {
		start := p.people[k].start
		for t := range nb {
			s.free[k*B+t], s.hours[k*B+t], s.last[k*B+t] = start, 0, -1
			s.freeAt[k*B+t] = tls[k].finishAt(start)
		}
	}
	npool := len(p.pool)
	for ps, k := range p.pool {
		key := poolKeyOf(max(0, tls[k].finishAt(p.people[k].start)), int32(ps))
		for t := range nb {
			s.poolKey[ps*B+t] = key
		}
	}
	for g := range p.groups {
		for t := range nb {
			s.gfin[g*B+t], s.glast[g*B+t] = -1, -1
		}
	}
	items, deps, tables, pool, poolPos := p.items, p.deps, p.tables, p.pool, p.poolPos
	var ready [B]float64
	var depPred [B]int32
	var effs [B]float32
	for pos := range items {
		it := &items[pos]
		row := pos * B
		tab := tables[it.tab : it.tab+drawTableSize]
		q, r := t0/drawsPerHash, t0%drawsPerHash
		h := mix64(it.key+uint64(q)*trialStep) >> (drawBits * r)
		for t := range nb {
			idx := uint32(h) & (drawTableSize - 1)
			h >>= drawBits
			if r++; r == drawsPerHash {
				r, q = 0, q+1
				h = mix64(it.key + uint64(q)*trialStep)
			}
			slot := it.lo + (idx*it.span)>>drawBits
			e := it.scale*tab[slot&(drawTableSize-1)] - it.spent
			if e < minRemainingHours { // a compare, not max: no NaN handling
				e = minRemainingHours
			}
			effs[t] = e
		}
		hasDeps := it.depHi > it.depLo
		if hasDeps {
			// The first dependency sets the bound outright; only later ones
			// compare.
			ds := deps[it.depLo:it.depHi]
			d0 := ds[0]
			copy(ready[:], s.fin[int(d0)*B:int(d0)*B+B])
			for t := range B {
				depPred[t] = d0
			}
			for _, d := range ds[1:] {
				drow := (*[B]float64)(s.fin[int(d)*B : int(d)*B+B])
				for t := range B {
					if f := drow[t]; f > ready[t] {
						ready[t], depPred[t] = f, d
					}
				}
			}
		}
		fin := s.fin[row : row+B]
		pred := s.pred[row : row+B]
		if who := it.person; who >= 0 {
			// Assigned: one person, one calendar for the whole block.
			tl := tls[who]
			free := s.free[int(who)*B : int(who)*B+B]
			last := s.last[int(who)*B : int(who)*B+B]
			freeAt := s.freeAt[int(who)*B : int(who)*B+B]
			hours := s.hours[int(who)*B : int(who)*B+B]
			sl := poolPos[who]
			for t := range nb {
				u, pr := free[t], last[t]
				if hasDeps && ready[t] > freeAt[t] {
					if ur := tl.working(ready[t]); ur > u {
						u, pr = ur, depPred[t]
					}
				}
				end := u + float64(effs[t])
				f := tl.finishAt(end)
				fin[t], pred[t] = f, pr
				free[t], last[t], freeAt[t] = end, int32(pos), f
				hours[t] += float64(effs[t])
				if sl >= 0 {
					s.poolKey[int(sl)*B+t] = poolKeyOf(f, sl)
				}
				if p.trace {
					s.start[row+t], s.effort[row+t], s.who[row+t] = tl.startAt(u), effs[t], who
				}
			}
		} else {
			// Pool: whoever frees first. Keys stay below 2^63 and compare as
			// the times they encode; min compiles to a conditional move.
			best := (*[B]uint64)(s.poolKey[:B])
			earliest := *best
			for ps := 1; ps < npool; ps++ {
				keys := (*[B]uint64)(s.poolKey[ps*B : ps*B+B])
				for t := range B {
					earliest[t] = min(earliest[t], keys[t])
				}
			}
			for t := range nb {
				sl := int32(earliest[t] & poolSlotMask)
				who := pool[sl]
				tl := tls[who]
				k := int(who)*B + t
				u, pr := s.free[k], s.last[k]
				if hasDeps && ready[t] > s.freeAt[k] {
					if ur := tl.working(ready[t]); ur > u {
						u, pr = ur, depPred[t]
					}
				}
				end := u + float64(effs[t])
				f := tl.finishAt(end)
				fin[t], pred[t] = f, pr
				s.free[k], s.last[k], s.freeAt[k] = end, int32(pos), f
				s.hours[k] += float64(effs[t])
				s.poolKey[int(sl)*B+t] = poolKeyOf(f, sl)
				if acc != nil {
					acc.poolWho[int(it.poolSlot)*npool+int(sl)]++
					acc.poolIssues[sl]++
				}
				if p.trace {
					s.start[row+t], s.effort[row+t], s.who[row+t] = tl.startAt(u), effs[t], who
				}
			}
		}
		g := int(it.group) * B
		gfin, glast := s.gfin[g:g+B], s.glast[g:g+B]
		for t := range nb {
			if f := fin[t]; f > gfin[t] {
				gfin[t], glast[t] = f, int32(pos)
			}
		}
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
	return max(0, min(b, histBuckets-1))
}

// workerAcc is one worker's share of the results; merging sums them, so the
// outcome does not depend on which worker ran which trials.
type workerAcc struct {
	hist       []uint32 // items × histBuckets
	crit       []uint32 // per item: trials on its group's critical chain
	poolWho    []uint32 // pool items × pool size
	poolIssues []int64  // per pool member: pool items taken, summed over trials
}

// maxCriticalGroups is how many milestones get critical-chain counts: one
// bit each in blockState.mask. Issues of further milestones report 0.
const maxCriticalGroups = 64

// accumulate adds a scheduled block to acc and to the per-trial series.
func (p *plan) accumulate(t0, nb int, s *blockState, acc *workerAcc, grids []issueGrid, groupFin, personHours, personFree [][]float64) {
	const B = blockTrials
	for pos := range p.items {
		h := acc.hist[pos*histBuckets : (pos+1)*histBuckets]
		g := grids[pos]
		for _, f := range s.fin[pos*B : pos*B+nb] {
			h[g.bucket(f)]++
		}
	}
	// Critical chains: seed each group's last item, then sweep the items
	// backwards (a predecessor always comes earlier in the list), handing
	// each item's chain bits to its predecessor.
	clear(s.mask)
	for g := range min(len(p.groups), maxCriticalGroups) {
		for t := range nb {
			groupFin[g][t0+t] = s.gfin[g*B+t]
			if l := s.glast[g*B+t]; l >= 0 {
				s.mask[int(l)*B+t] |= 1 << g
			}
		}
	}
	for g := maxCriticalGroups; g < len(p.groups); g++ {
		for t := range nb {
			groupFin[g][t0+t] = s.gfin[g*B+t]
		}
	}
	for pos := len(p.items) - 1; pos >= 0; pos-- {
		row := pos * B
		bit := uint64(0)
		if gi := p.items[pos].group; gi < maxCriticalGroups {
			bit = 1 << gi
		}
		var n uint32
		for t := range nb {
			m := s.mask[row+t]
			if m == 0 {
				continue
			}
			if m&bit != 0 {
				n++
			}
			if pr := s.pred[row+t]; pr >= 0 {
				s.mask[int(pr)*B+t] |= m
			}
		}
		acc.crit[pos] += n
	}
	for k := range p.people {
		for t := range nb {
			personHours[k][t0+t] = s.hours[k*B+t]
			personFree[k][t0+t] = p.tls[k].finishAt(s.free[k*B+t])
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

	grids := p.pilot()

	blocks := (T + blockTrials - 1) / blockTrials
	workers := max(1, min(p.workers, blocks))
	accs := make([]*workerAcc, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		acc := &workerAcc{
			hist: make([]uint32, n*histBuckets), crit: make([]uint32, n),
			poolWho: make([]uint32, p.poolN*len(p.pool)), poolIssues: make([]int64, len(p.pool)),
		}
		accs[w] = acc
		wg.Go(func() {
			s := p.newBlockState()
			for {
				b := int(next.Add(1)) - 1
				if b >= blocks {
					return
				}
				t0 := b * blockTrials
				nb := min(blockTrials, T-t0)
				p.runBlock(t0, nb, s, acc)
				p.accumulate(t0, nb, s, acc, grids, groupFin, personHours, personFree)
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
		for i, v := range a.poolIssues {
			accs[0].poolIssues[i] += v
		}
	}
	return p.summarize(accs[0], grids, groupFin, personHours, personFree)
}

// pilot runs the first trials to size each issue's histogram: the range of
// pilot finishes, widened by that range on each side, in power-of-two-hour
// buckets aligned to the origin. Equal finishes give equal grids, so an
// issue a what-if does not reach keeps its exact quantiles.
func (p *plan) pilot() []issueGrid {
	const B = blockTrials
	n := len(p.items)
	lo := make([]float64, n)
	hi := make([]float64, n)
	for i := range lo {
		lo[i], hi[i] = math.Inf(1), math.Inf(-1)
	}
	trials := min(pilotTrials, p.trials)
	blocks := (trials + B - 1) / B
	workers := max(1, min(p.workers, blocks))
	var mu sync.Mutex
	var wg sync.WaitGroup
	var next atomic.Int64
	for range workers {
		wg.Go(func() {
			s := p.newBlockState()
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
				p.runBlock(b*B, nb, s, nil)
				for i := range n {
					for _, f := range s.fin[i*B : i*B+nb] {
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
	p.runBlock(trial, 1, s, nil)
	out := make([]itemResult, len(p.items))
	for pos := range out {
		k := pos * blockTrials
		out[pos] = itemResult{start: s.start[k], fin: s.fin[k], effort: s.effort[k], pred: s.pred[k], who: s.who[k]}
	}
	return out
}
