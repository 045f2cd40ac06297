package scheduler

// The throughput-only baseline is what common forecasting tools do: take
// the weekly counts of resolved issues over the year before the cut-off
// (weeks before the first resolution are not history yet), and in each
// trial resample those counts week after week until the open queue, ordered
// by creation, is used up; the k-th issue finishes in the week the running
// total reaches k, placed linearly within that week. It knows nothing of
// estimates, work in progress or people. For a set of n issues it answers
// the same question the way such tools do: how long until the team
// completes n issues (the n-th finish of the same resampling).

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// baselineMaxWeeks bounds a trial when the history resolved almost nothing.
const baselineMaxWeeks = 520

// baselineAt forecasts the work open at c from throughput alone; issues
// without a resolution are part of the queue but not returned. It also
// returns the weekly counts it resampled.
func baselineAt(items []HistoryItem, c time.Time, trials int, seed uint64) (map[int64]itemQuantiles, []int) {
	draws, counts := baselineDrawsAt(items, c, trials, seed)
	if draws == nil {
		return nil, counts
	}
	out := make(map[int64]itemQuantiles, len(draws))
	for num, d := range draws {
		out[num] = sortedQuantiles(d)
	}
	return out, counts
}

// baselineDrawsAt is baselineAt's trials: every open issue's finishes in
// days after c, sorted.
func baselineDrawsAt(items []HistoryItem, c time.Time, trials int, seed uint64) (map[int64][]float64, []int) {
	week := 7 * 24 * time.Hour
	firstResolved := time.Time{}
	var queue []int64 // ordered by creation: items are numbered so
	for _, it := range items {
		if !it.Resolved.IsZero() && !it.Resolved.After(c) && (firstResolved.IsZero() || it.Resolved.Before(firstResolved)) {
			firstResolved = it.Resolved
		}
		if isOpenAt(it, c) {
			queue = append(queue, it.Number)
		}
	}
	slices.Sort(queue)
	if len(queue) == 0 || firstResolved.IsZero() {
		return nil, nil
	}
	var counts []int
	for w := 0; w < 52; w++ {
		to := c.Add(-time.Duration(w) * week)
		from := to.Add(-week)
		if to.Before(firstResolved) {
			break
		}
		n := 0
		for _, it := range items {
			if !it.Resolved.IsZero() && it.Resolved.After(from) && !it.Resolved.After(to) {
				n++
			}
		}
		counts = append(counts, n)
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	days := make([][]float64, len(queue))
	for i := range days {
		days[i] = make([]float64, trials)
	}
	for t := range trials {
		resampleWeeks(counts, rng, len(queue), func(k int, d float64) bool {
			days[k][t] = d
			return true
		})
	}
	out := make(map[int64][]float64, len(queue))
	for i, num := range queue {
		d := days[i]
		slices.Sort(d)
		out[num] = d
	}
	return out, counts
}

func sortedQuantiles(d []float64) itemQuantiles {
	return itemQuantiles{p10: quantileSorted(d, 0.1), p50: quantileSorted(d, 0.5), p80: quantileSorted(d, 0.8), p90: quantileSorted(d, 0.9)}
}

// sortedQuantilesWithin is sortedQuantiles of the sorted trials at most L:
// the baseline conditioned on the outcome falling within L days, as the
// calibrated forecast is in the conditioned score. When no trial does, the
// baseline gave that no chance and is scored as forecast.
func sortedQuantilesWithin(sorted []float64, L float64) itemQuantiles {
	n, _ := slices.BinarySearch(sorted, math.Nextafter(L, math.Inf(1)))
	if n == 0 {
		return sortedQuantiles(sorted)
	}
	return sortedQuantiles(sorted[:n])
}

// baselineCount is the baseline's answer for a set of n issues: how long
// until the team, at its resampled weekly throughput, completes n issues,
// whichever they are.
func baselineCount(counts []int, n, trials int, seed uint64) itemQuantiles {
	if len(counts) == 0 || n == 0 {
		return itemQuantiles{}
	}
	return sortedQuantiles(baselineCountDraws(counts, n, trials, seed))
}

// baselineCountDraws is baselineCount's trials, sorted; nil when there is
// no throughput or no issue.
func baselineCountDraws(counts []int, n, trials int, seed uint64) []float64 {
	if len(counts) == 0 || n == 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x5e75))
	d := make([]float64, trials)
	for t := range trials {
		resampleWeeks(counts, rng, n, func(k int, days float64) bool {
			d[t] = days
			return true
		})
	}
	slices.Sort(d)
	return d
}

// resampleWeeks runs one trial of the baseline over a queue of issues:
// week after week it draws one of the weekly counts and finishes that many
// issues, placed linearly within the week. place gets each issue's position
// in the queue and its finish in days after the cut-off, and ends the trial
// early by returning false. Beyond baselineMaxWeeks the rest finish then.
func resampleWeeks(counts []int, rng *rand.Rand, queue int, place func(k int, days float64) bool) {
	done := 0
	for w := 0; done < queue; w++ {
		if w >= baselineMaxWeeks {
			for ; done < queue; done++ {
				if !place(done, 7*baselineMaxWeeks) {
					return
				}
			}
			return
		}
		n := counts[rng.IntN(len(counts))]
		for j := 0; j < n && done < queue; j++ {
			if !place(done, 7*(float64(w)+float64(j+1)/float64(n))) {
				return
			}
			done++
		}
	}
}

// quantileSorted is the q-quantile of sorted xs (the smallest value with at
// least q of the mass at or below it).
func quantileSorted(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(q*float64(len(xs))+0.999999) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}
