package scheduler

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// generatedHistory is a steady project: an issue every ~day, each open for
// a lognormal number of days, story points loosely tied to that time.
func generatedHistory(n int, seed uint64) []HistoryItem {
	rng := rand.New(rand.NewPCG(seed, 9))
	t := time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC)
	items := make([]HistoryItem, n)
	for i := range items {
		t = t.Add(time.Duration(rng.ExpFloat64() * float64(24*time.Hour)))
		points := []float64{1, 2, 3, 5, 8}[rng.IntN(5)]
		days := math.Exp(math.Log(4*points) + 0.9*rng.NormFloat64())
		resolved := t.Add(time.Duration(days * float64(24*time.Hour)))
		it := HistoryItem{ID: "G", Number: int64(i + 1), Created: t, Resolved: resolved, StoryPoints: points}
		if rng.Float64() < 0.7 {
			it.Started = resolved.Add(-time.Duration(days * rng.Float64() * float64(24*time.Hour)))
		}
		items[i] = it
	}
	return items
}

func TestBacktestOnGeneratedHistory(t *testing.T) {
	items := generatedHistory(400, 1)
	opts := BacktestOptions{Trials: 300, Every: 21 * 24 * time.Hour}
	res, err := Backtest(items, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(BacktestCutoffs(items, opts)); res.Cutoffs != want || res.Baseline.Cutoffs != want || want < 5 {
		t.Fatalf("cut-offs %d / baseline %d, want %d", res.Cutoffs, res.Baseline.Cutoffs, want)
	}
	for _, s := range []BacktestScore{res.BacktestScore, res.Baseline} {
		if s.Items == 0 || !(s.P50Coverage <= s.P80Coverage && s.P80Coverage <= s.P90Coverage && s.P90Coverage <= 1) {
			t.Errorf("incoherent score %+v", s)
		}
		if s.MedianRelWidth <= 0 || s.PinballLoss <= 0 {
			t.Errorf("width or loss not positive: %+v", s)
		}
	}
	// A steady history is what the model assumes: its ranges should be
	// roughly right (loose bounds: this is a small sample).
	if res.P80Coverage < 0.6 || res.P80Coverage > 0.97 || res.P50Coverage < 0.3 || res.P50Coverage > 0.75 {
		t.Errorf("p50 %.3f p80 %.3f on a steady history", res.P50Coverage, res.P80Coverage)
	}
	again, err := Backtest(items, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res, again) {
		t.Error("the same history and seed gave a different result")
	}
}

func TestBacktestSeesOnlyThePast(t *testing.T) {
	items := generatedHistory(300, 4)
	c := items[150].Created.Add(time.Hour)
	cal, team := calibrateAt(items, c, CalibrationOptions{})
	future := make([]HistoryItem, len(items))
	copy(future, items)
	for i := range future {
		if future[i].Resolved.After(c) {
			// What happens after the cut-off must not matter, as long as
			// the issue stays open at it.
			future[i].Resolved = future[i].Resolved.Add(30 * 24 * time.Hour)
			if future[i].Started.After(c) {
				future[i].Started = future[i].Started.Add(24 * time.Hour)
			}
		}
	}
	cal2, team2 := calibrateAt(future, c, CalibrationOptions{})
	if !reflect.DeepEqual(cal, cal2) || !reflect.DeepEqual(team, team2) {
		t.Error("the calibration at a cut-off depends on what happened after it")
	}
	base, _ := baselineAt(items, c, 200, 1)
	base2, _ := baselineAt(future, c, 200, 1)
	if !reflect.DeepEqual(base, base2) {
		t.Error("the baseline at a cut-off depends on what happened after it")
	}
}

func TestBacktestTooShort(t *testing.T) {
	if _, err := Backtest(generatedHistory(5, 1), BacktestOptions{}); err == nil {
		t.Error("no error for a five-issue history")
	}
	if _, err := Backtest(nil, BacktestOptions{}); err == nil {
		t.Error("no error for an empty history")
	}
}

func TestBaselineQueueOrder(t *testing.T) {
	items := generatedHistory(200, 2)
	c := items[120].Created.Add(time.Hour)
	q, _ := baselineAt(items, c, 500, 3)
	var prev itemQuantiles
	first := true
	for _, it := range items {
		got, ok := q[it.Number]
		if !isOpenAt(it, c) {
			if ok {
				t.Fatalf("issue %d is not open at the cut-off but forecast", it.Number)
			}
			continue
		}
		if !first && got.p50 < prev.p50 {
			t.Errorf("issue %d (p50 %.1f) forecast before an older one (%.1f)", it.Number, got.p50, prev.p50)
		}
		if !(got.p10 <= got.p50 && got.p50 <= got.p80 && got.p80 <= got.p90) {
			t.Errorf("issue %d quantiles out of order: %+v", it.Number, got)
		}
		prev, first = got, false
	}
}

func TestExtendToP90(t *testing.T) {
	// A lognormal delay: d50 = 10, sigma 1 gives d80 = 10e^0.8416, d90 = 10e^1.2816.
	got := extendToP90(10, 10*math.Exp(0.8416212335729143))
	if want := 10 * math.Exp(1.2815515655446004); math.Abs(got-want) > 1e-9 {
		t.Errorf("p90 %.6f, want %.6f", got, want)
	}
	if got := extendToP90(5, 5); got != 5 {
		t.Errorf("no spread: %v", got)
	}
}

func TestPoolBacktests(t *testing.T) {
	var a, b BacktestResult
	a.add(itemQuantiles{1, 2, 3, 4}, 1.5) // within all
	b.add(itemQuantiles{1, 2, 3, 4}, 3.5) // only p90
	b.add(itemQuantiles{1, 2, 3, 4}, 9)   // none
	p := PoolBacktests([]BacktestResult{a, b})
	if p.Items != 3 || math.Abs(p.P50Coverage-1.0/3) > 1e-9 || math.Abs(p.P90Coverage-2.0/3) > 1e-9 {
		t.Errorf("pooled %+v", p.BacktestScore)
	}
	if p.MedianRelWidth != 1.5 {
		t.Errorf("width %v, want (4-1)/2", p.MedianRelWidth)
	}
}

// Sets: the open issues created in the trailing window, scored by their
// last finish against the baseline's time to complete that many.
func TestBacktestScoresSets(t *testing.T) {
	items := generatedHistory(400, 1)
	opts := BacktestOptions{Trials: 300, Every: 21 * 24 * time.Hour}
	res, err := Backtest(items, opts)
	if err != nil {
		t.Fatal(err)
	}
	cutoffs := BacktestCutoffs(items, opts)
	withSet := 0
	for _, c := range cutoffs {
		if set := setAt(items, c, 28*24*time.Hour, 2); set != nil {
			withSet++
			for _, n := range set {
				it := items[n-1]
				if !isOpenAt(it, c) || !it.Created.After(c.Add(-28*24*time.Hour)) {
					t.Fatalf("issue %d in the set at %s: created %s resolved %s", n, c, it.Created, it.Resolved)
				}
			}
		}
	}
	s := res.Sets
	if withSet < 5 || s.Items != withSet || s.Cutoffs != withSet || s.Baseline.Items != withSet {
		t.Fatalf("%d cut-offs with a set; scored %+v / baseline %+v", withSet, s.BacktestScore, s.Baseline)
	}
	for _, sc := range []BacktestScore{s.BacktestScore, s.Baseline} {
		if !(sc.P50Coverage <= sc.P80Coverage && sc.P80Coverage <= sc.P90Coverage) || sc.PinballLoss <= 0 || sc.MedianRelWidth <= 0 {
			t.Errorf("incoherent set score %+v", sc)
		}
	}
	if none := setAt(items, cutoffs[0], 28*24*time.Hour, 1000); none != nil {
		t.Errorf("a set of %d below the minimum size", len(none))
	}
}

// The baseline's set answer is the n-th finish of its resampling: more
// issues never take less time.
func TestBaselineCount(t *testing.T) {
	counts := []int{0, 2, 3, 5, 1}
	prev := itemQuantiles{}
	for n := 1; n <= 30; n += 7 {
		q := baselineCount(counts, n, 500, 3)
		if !(q.p10 <= q.p50 && q.p50 <= q.p80 && q.p80 <= q.p90) || q.p50 < prev.p50 || q.p90 < prev.p90 {
			t.Errorf("n=%d: %+v after %+v", n, q, prev)
		}
		prev = q
	}
}
