package scheduler

// Random draws: every effort sample is a pure function of (seed, issue
// number, trial). A splitmix64 counter hash of (seed, issue, trial/4) gives
// 64 random bits, cut into four 16-bit slices, one per trial of the group
// of four; the low drawBits bits of a slice index a table of lognormal
// quantiles. No sequential stream exists, so trials run in any order on any
// core with identical results, and a what-if that changes one issue leaves
// every other issue's draws untouched (common random numbers).
//
// The table holds the quantiles at the midpoints of drawTableSize equal
// probability slices, so the draw is exact in distribution up to that
// discretisation: it reaches ±3.7 sigma, not beyond. For a steeping issue
// the truncated range is cut at the slot holding its spent hours, so its
// remaining effort has the same resolution.

import (
	"cmp"
	"encoding/binary"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"time"
)

const (
	drawBits      = 12
	drawTableSize = 1 << drawBits
)

// mix64 is splitmix64's finaliser: a bijection with full avalanche.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// issueStream returns the per-issue key; the draws of trials 4q..4q+3 are
// the slices of mix64(key + q*trialStep), lowest first.
func issueStream(seed uint64, number int64) uint64 {
	return mix64(seed ^ mix64(uint64(number)*0x9e3779b97f4a7c15+0x632be59bd9b4e019))
}

const trialStep = 0x9e3779b97f4a7c15

// drawsPerHash is how many 16-bit slices one 64-bit hash yields.
const drawsPerHash = 4

// drawIndex is the table slot of one trial for an issue key; the kernel
// computes the same thing four trials per hash.
func drawIndex(key uint64, trial int) uint32 {
	h := mix64(key + uint64(trial/drawsPerHash)*trialStep)
	return uint32(h>>(16*(trial%drawsPerHash))) & (drawTableSize - 1)
}

// sharedDrawKey is the draw key of the per-trial factor every effort of a
// trial shares (Calibration.SharedSigma): no issue or proposal has it.
const sharedDrawKey = math.MinInt64 + 1

// The shared trial factor (Calibration.SharedSigma) correlates the draws
// of a trial through their normal scores (a Gaussian copula): an issue's
// slot index i gives its own score z_i = Φ⁻¹((i+½)/N), the trial's key gives
// a common score z_t, and the draw uses the slot of Φ(a·z_t + b·z_i) with
// a = SharedSigma/Sigma, b = √(1−a²). a·z_t + b·z_i is standard normal
// again, so every issue's own distribution, conditioned on its spent
// hours or not, is exactly what it is without the factor; only the issues
// of one trial now run slow or fast together. Below minSharedCorrelation
// (a < 0.1, 1% of the variance) the factor is left out.
const minSharedCorrelation = 0.1

// scoreCells is the resolution of the table that maps a normal score back
// to its slot: scores in [−scoreRange, scoreRange), in 2^15 cells.
const (
	scoreCells = 1 << 15
	scoreRange = 4.0
)

// copula holds the tables of the shared factor.
type copula struct {
	a, b  float64
	score [drawTableSize]float32 // z of each slot
	slot  []uint16               // per score cell, the slot of its centre
}

func newCopula(a float64) *copula {
	c := &copula{a: a, b: math.Sqrt(1 - a*a), slot: make([]uint16, scoreCells)}
	for i := range c.score {
		c.score[i] = float32(normalQuantile((float64(i) + 0.5) / drawTableSize))
	}
	for k := range c.slot {
		z := -scoreRange + (float64(k)+0.5)*(2*scoreRange/scoreCells)
		c.slot[k] = uint16(min(math.Floor(normalCDF(z)*drawTableSize), drawTableSize-1))
	}
	return c
}

// slotOf is the slot of the normal score z.
func (c *copula) slotOf(z float64) uint32 {
	k := int((z + scoreRange) * (scoreCells / (2 * scoreRange)))
	if k < 0 {
		k = 0
	} else if k >= scoreCells {
		k = scoreCells - 1
	}
	return uint32(c.slot[k])
}

// normalQuantile is the standard normal inverse CDF.
func normalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// normalCDF is the standard normal CDF.
func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// sigmaTable fills exp(sigma·z) at the drawTableSize normal quantiles: one
// table per distinct sigma, shared by every issue, so it stays in cache. An
// issue's effort is exp(mu) times an entry.
func sigmaTable(dst []float32, sigma float64) {
	for i := range dst {
		dst[i] = float32(math.Exp(sigma * normalQuantile((float64(i)+0.5)/drawTableSize)))
	}
}

// truncationIndex is the first table slot of a lognormal (mu, sigma)
// conditioned on exceeding spent: draws of a steeping issue map their
// uniform index onto the slots from there up (inverse-CDF sampling of the
// truncated distribution, no rejection), and subtract spent.
func truncationIndex(mu, sigma, spent float64) uint32 {
	if spent <= 0 {
		return 0
	}
	lo := normalCDF((math.Log(spent) - mu) / sigma)
	return uint32(min(math.Floor(lo*drawTableSize), drawTableSize-1))
}

// minRemainingHours is the least effort a draw schedules: a steeping issue
// drawn right at its spent hours still needs a moment to close.
const minRemainingHours = 0.25

// InputSeed is the seed Run derives when Options.Seed is 0: FNV-1a over a
// canonical encoding of the input (issues by number, labels and dependencies
// sorted, people by login, milestones by id), so equal inputs in any order
// give the same seed.
func InputSeed(in Input) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	u64 := func(v uint64) { binary.LittleEndian.PutUint64(buf[:], v); h.Write(buf[:]) }
	f64 := func(v float64) { u64(math.Float64bits(v)) }
	str := func(s string) { u64(uint64(len(s))); h.Write([]byte(s)) }
	u64(uint64(in.Now.UnixNano()))

	people := slices.Clone(in.People)
	slices.SortFunc(people, func(a, b Person) int { return strings.Compare(a.Login, b.Login) })
	u64(uint64(len(people)))
	for _, p := range people {
		str(p.Login)
		c := p.Calendar
		f64(c.HoursPerDay)
		for _, d := range c.WorkingDays {
			if d {
				u64(1)
			} else {
				u64(0)
			}
		}
		if c.Location != nil {
			str(c.Location.String())
		} else {
			str("")
		}
		hol := make([]int64, 0, len(c.Holidays))
		for _, t := range c.Holidays {
			hol = append(hol, dayNumber(t))
		}
		slices.Sort(hol)
		u64(uint64(len(hol)))
		for _, d := range hol {
			u64(uint64(d))
		}
		u64(uint64(len(c.TimeOff)))
		for _, r := range c.TimeOff {
			u64(uint64(dayNumber(r.From)))
			u64(uint64(dayNumber(r.To)))
		}
	}

	ms := slices.Clone(in.Milestones)
	slices.SortFunc(ms, func(a, b Milestone) int { return cmp.Compare(a.ID, b.ID) })
	u64(uint64(len(ms)))
	for _, m := range ms {
		u64(uint64(m.ID))
		str(m.Title)
		u64(uint64(m.Due.UnixNano()))
		u64(boolBit(m.Hard) | boolBit(m.Closed)<<1 | boolBit(m.Due.IsZero())<<2)
	}

	issues := slices.Clone(in.Issues)
	slices.SortFunc(issues, func(a, b Issue) int { return cmp.Compare(a.Number, b.Number) })
	u64(uint64(len(issues)))
	for _, is := range issues {
		u64(uint64(is.Number))
		str(is.Title)
		str(string(is.State))
		str(string(is.Estimate))
		u64(uint64(is.Priority))
		u64(boolBit(is.HardDeadline) | boolBit(is.Discarded)<<1)
		u64(uint64(is.Milestone))
		str(is.Assignee)
		labels := slices.Clone(is.Labels)
		slices.Sort(labels)
		u64(uint64(len(labels)))
		for _, l := range labels {
			str(l)
		}
		deps := slices.Clone(is.DependsOn)
		slices.Sort(deps)
		u64(uint64(len(deps)))
		for _, d := range deps {
			u64(uint64(d))
		}
		f64(is.SpentHours)
		u64(uint64(drawKey(is)))
	}
	planned := make([]int64, 0, len(in.Planned))
	for n := range in.Planned {
		planned = append(planned, n)
	}
	slices.Sort(planned)
	u64(uint64(len(planned)))
	for _, n := range planned {
		u64(uint64(n))
		str(in.Planned[n])
	}

	c := in.Calibration
	u64(uint64(c.N))
	u64(boolBit(c.ColdStart))
	f64(c.GlobalMultiplier)
	f64(c.Sigma)
	if c.SharedSigma != 0 {
		f64(c.SharedSigma)
	}
	for _, list := range [][]Bias{c.ByLabelBias, c.ByPersonBias} {
		u64(uint64(len(list)))
		for _, b := range list {
			str(b.Key)
			f64(b.Multiplier)
			u64(uint64(b.N))
		}
	}
	s := h.Sum64()
	if s == 0 {
		s = 1 // 0 means "derive", so never derive it
	}
	return s
}

// dayNumber is a date's day count, independent of its location.
func dayNumber(t time.Time) int64 {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC).Unix() / 86400
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
