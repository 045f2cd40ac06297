package scheduler

// Leave-one-history-out cross-validation of the forecast's parameters over
// the eight shared Jira histories (testdata/jira-history, a copy of
// ../shared/data/jira-history). Every candidate is backtested on every
// history once; each fold then picks, on the seven other histories pooled,
// the candidate with the lowest training objective and scores it on the one
// left out. The held-out scores, pooled, are what the package doc reports.
//
//	go test ./scheduler -run RealDataCV -v                       # the CI grid
//	COMMITEA_CV=full go test ./scheduler -run RealDataCV -v -timeout 60m

import (
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cvCandidate is one point of the grid.
type cvCandidate struct {
	name string
	opts BacktestOptions
}

// cvHistories reads the eight histories from testdata.
func cvHistories(t testing.TB) ([]string, [][]HistoryItem) {
	files, _ := filepath.Glob(filepath.Join("testdata", "jira-history", "*.csv.gz"))
	if len(files) != 8 {
		t.Fatalf("want the eight shared histories in testdata/jira-history, found %d", len(files))
	}
	sort.Strings(files)
	var names []string
	var hs [][]HistoryItem
	for _, fn := range files {
		f, err := os.Open(fn)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		items, err := ReadHistoryCSV(zr)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", fn, err)
		}
		names = append(names, strings.TrimSuffix(filepath.Base(fn), ".csv.gz"))
		hs = append(hs, items)
	}
	return names, hs
}

// cvCutoffs backtests one history cut-off by cut-off: every cut-off's
// result, finished on its own.
func cvCutoffs(t testing.TB, items []HistoryItem, opts BacktestOptions) []BacktestResult {
	opts = opts.withDefaults()
	cutoffs := BacktestCutoffs(items, opts)
	rs, err := backtestCutoffs(items, cutoffs, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		rs[i].finish()
	}
	return rs
}

// cvScore is a pooled score of items or sets: each cut-off weighs the same
// (a cut-off of MESOS with 600 open issues counts as much as one of DAEMON
// with 8), and the same cut-offs' baseline.
type cvScore struct {
	cutoffs               int
	p50, p80, p90         float64
	pinball, basePinball  float64
	itemP50, itemP80      float64 // pooled by scored pair instead, for comparison
	itemP90, itemPinRatio float64
}

func (s cvScore) ratio() float64 { return s.pinball / s.basePinball }

// poolByCutoff pools per-cut-off results; sets selects the sets' scores.
func poolByCutoff(rs []BacktestResult, sets bool) cvScore {
	return poolComparisons(rs, func(r BacktestResult) BacktestComparison {
		if sets {
			return r.Sets
		}
		return BacktestComparison{BacktestScore: r.BacktestScore, Baseline: r.Baseline}
	})
}

// writePooled prints pooled held-out scores of items and sets under a heading.
func writePooled(w io.Writer, heading string, it, st cvScore) {
	fmt.Fprintln(w, heading)
	fmt.Fprintf(w, "  items %4d cut-offs: p50 %.3f p80 %.3f p90 %.3f pinball %.1f vs baseline %.1f (%.3fx)\n", it.cutoffs, it.p50, it.p80, it.p90, it.pinball, it.basePinball, it.ratio())
	fmt.Fprintf(w, "  sets  %4d cut-offs: p50 %.3f p80 %.3f p90 %.3f pinball %.1f vs baseline %.1f (%.3fx)\n", st.cutoffs, st.p50, st.p80, st.p90, st.pinball, st.basePinball, st.ratio())
	fmt.Fprintf(w, "  items pooled by issue instead: p50 %.3f p80 %.3f p90 %.3f pinball %.3fx\n", it.itemP50, it.itemP80, it.itemP90, it.itemPinRatio)
}

// poolConditionedByCutoff is poolByCutoff of the scores conditioned on the
// export (BacktestResult.Conditioned).
func poolConditionedByCutoff(rs []BacktestResult, sets bool) cvScore {
	return poolComparisons(rs, func(r BacktestResult) BacktestComparison {
		if sets {
			return r.Conditioned.Sets
		}
		return r.Conditioned.Items
	})
}

// poolComparisons pools the comparison pick selects from each cut-off's
// result, each cut-off weighing the same.
func poolComparisons(rs []BacktestResult, pick func(BacktestResult) BacktestComparison) cvScore {
	var out cvScore
	var byItem BacktestResult
	for _, r := range rs {
		c := pick(r)
		s, b := c.BacktestScore, c.Baseline
		if s.Items == 0 || b.Items == 0 {
			continue
		}
		out.cutoffs++
		out.p50 += s.P50Coverage
		out.p80 += s.P80Coverage
		out.p90 += s.P90Coverage
		out.pinball += s.PinballLoss
		out.basePinball += b.PinballLoss
		byItem.BacktestScore.merge(s)
		byItem.Baseline.merge(b)
	}
	if out.cutoffs > 0 {
		n := float64(out.cutoffs)
		out.p50, out.p80, out.p90, out.pinball, out.basePinball = out.p50/n, out.p80/n, out.p90/n, out.pinball/n, out.basePinball/n
	}
	byItem.finish()
	out.itemP50, out.itemP80, out.itemP90 = byItem.P50Coverage, byItem.P80Coverage, byItem.P90Coverage
	out.itemPinRatio = byItem.PinballLoss / byItem.Baseline.PinballLoss
	return out
}

// cvObjective is what a fold minimises on its training histories: the
// coverage errors of p50, p80 and p90 plus the pinball loss relative to the
// baseline's, for items and sets alike.
func cvObjective(rs []BacktestResult) float64 {
	obj := 0.0
	for _, sets := range []bool{false, true} {
		s := poolByCutoff(rs, sets)
		obj += math.Abs(s.p50-0.5) + math.Abs(s.p80-0.8) + math.Abs(s.p90-0.9) + s.ratio()
	}
	return obj
}

// cvGrid is the candidates TestRealDataCV chooses among: every
// combination of the values of each parameter (COMMITEA_CV_GRID, e.g.
// "narrow=-1,100;floor=-1,0.5;shared=-1,8", overrides them; -1 is "off"):
// wide and narrow are the sigma prior's weights (SigmaPriorWeight,
// NarrowSigmaPriorWeight), floor BacktestOptions.QueueFloor, shared
// CalibrationOptions.SharedScale, cap MaxSharedShare (named only when
// varied).
func cvGrid(spec string, trials int) []cvCandidate {
	values := map[string][]float64{"wide": {100, 400}, "narrow": {100}, "floor": {-1}, "shared": {-1, 8, 16}}
	if raceDetector {
		values["wide"], values["shared"] = []float64{400}, []float64{-1, 8}
	}
	for _, part := range strings.Split(spec, ";") {
		name, list, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		var vs []float64
		for _, v := range strings.Split(list, ",") {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				vs = append(vs, f)
			}
		}
		values[name] = vs
	}
	var out []cvCandidate
	caps := values["cap"]
	if len(caps) == 0 {
		caps = []float64{0.8}
	}
	for _, cp := range caps {
		for _, wide := range values["wide"] {
			for _, w := range values["narrow"] {
				for _, f := range values["floor"] {
					for _, sh := range values["shared"] {
						out = append(out, cvCandidate{
							name: fmt.Sprintf("wide=%g narrow=%g floor=%g shared=%g", wide, math.Max(w, 0), math.Max(f, 0), math.Max(sh, 0)),
							opts: BacktestOptions{Trials: trials, QueueFloor: f,
								Calibration: CalibrationOptions{SigmaPriorWeight: wide, NarrowSigmaPriorWeight: w, SharedScale: sh, MaxSharedShare: cp}},
						})
						if len(caps) > 1 {
							out[len(out)-1].name += fmt.Sprintf(" cap=%g", cp)
						}
					}
				}
			}
		}
	}
	return out
}

// TestRealDataCV cross-validates the forecast's parameters (the choices in
// the package doc) and holds the held-out figures to the goals.
func TestRealDataCV(t *testing.T) {
	// 400 trials, as BenchmarkRealDataBacktest: quantiles are nearest
	// rank, and the 180th of 200 draws sits on average at 180/201 = 0.896
	// of the forecast's own distribution (p90 coverage 0.4 points low, the
	// sets' 0.868 at 200 trials against 0.871 at 400); the 360th of 400 at
	// 0.898, the live forecast's 1,800th of 2,000 at 0.900.
	trials := 400
	if raceDetector {
		// Under -race (CI) the replay runs about twenty times slower: the
		// harness runs on every fourth cut-off at 25 trials, which proves it
		// and its folds but not the figures, so only the baseline is held to.
		trials = 25
	}
	if v, err := strconv.Atoi(os.Getenv("COMMITEA_CV_TRIALS")); err == nil {
		trials = v
	}
	names, hs := cvHistories(t)
	grid := cvGrid(os.Getenv("COMMITEA_CV_GRID"), trials)
	if raceDetector {
		for i := range grid {
			grid[i].opts.Every = 56 * 24 * time.Hour
		}
	}
	// runs[c][h]: candidate c's per-cut-off results on history h.
	runs := make([][][]BacktestResult, len(grid))
	for c, cand := range grid {
		runs[c] = make([][]BacktestResult, len(hs))
		for h := range hs {
			runs[c][h] = cvCutoffs(t, hs[h], cand.opts)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "training objective by candidate (all eight, for reference only):\n")
	for c, cand := range grid {
		var all []BacktestResult
		for h := range hs {
			all = append(all, runs[c][h]...)
		}
		it, st := poolByCutoff(all, false), poolByCutoff(all, true)
		fmt.Fprintf(&b, "  %-40s %.3f | items %.3f %.3f %.3f %.3fx | sets %.3f %.3f %.3f %.3fx\n", cand.name, cvObjective(all),
			it.p50, it.p80, it.p90, it.ratio(), st.p50, st.p80, st.p90, st.ratio())
	}
	var heldItems, heldSets []BacktestResult
	fmt.Fprintf(&b, "%-9s %-40s | %5s %5s %5s %6s | %5s %5s %5s %6s\n", "held out", "chosen on the others", "i.p50", "i.p80", "i.p90", "i.pin", "s.p50", "s.p80", "s.p90", "s.pin")
	for h := range hs {
		best, bestObj := 0, math.Inf(1)
		for c := range grid {
			var train []BacktestResult
			for o := range hs {
				if o != h {
					train = append(train, runs[c][o]...)
				}
			}
			if obj := cvObjective(train); obj < bestObj {
				best, bestObj = c, obj
			}
		}
		held := runs[best][h]
		heldItems = append(heldItems, held...)
		heldSets = append(heldSets, held...)
		it, st := poolByCutoff(held, false), poolByCutoff(held, true)
		fmt.Fprintf(&b, "%-9s %-40s | %.3f %.3f %.3f %5.3fx | %.3f %.3f %.3f %5.3fx\n", names[h], grid[best].name,
			it.p50, it.p80, it.p90, it.ratio(), st.p50, st.p80, st.p90, st.ratio())
	}
	it, st := poolByCutoff(heldItems, false), poolByCutoff(heldSets, true)
	writePooled(&b, fmt.Sprintf("pooled by cut-off, held out (%d trials):", trials), it, st)
	// The same held-out forecasts scored conditioned on the export (the
	// histories hold only issues resolved by then): printed beside the
	// figures above, not held to the goals.
	cit, cst := poolConditionedByCutoff(heldItems, false), poolConditionedByCutoff(heldSets, true)
	writePooled(&b, "conditioned on the export (outcomes within export − cut-off), the same held-out forecasts:", cit, cst)
	t.Log("\n" + b.String())
	for _, g := range []struct {
		name string
		s    cvScore
	}{{"items", it}, {"sets", st}} {
		if g.s.cutoffs == 0 || g.s.ratio() >= 1 {
			t.Errorf("%s: held-out pinball loss %.3fx the baseline's over %d cut-offs, want below it", g.name, g.s.ratio(), g.s.cutoffs)
		}
	}
	if raceDetector || trials < 400 {
		return
	}
	in := func(name string, v, lo, hi float64) {
		if v < lo || v > hi {
			t.Errorf("%s %.3f outside %.2f-%.2f", name, v, lo, hi)
		}
	}
	in("items: held-out p50 coverage", it.p50, 0.45, 0.55)
	in("items: held-out p80 coverage", it.p80, 0.78, 0.85)
	in("items: held-out p90 coverage", it.p90, 0.87, 1)
	in("items: held-out pinball loss over the baseline's", it.ratio(), 0, 0.85)
	in("sets: held-out p50 coverage", st.p50, 0.45, 0.55)
	in("sets: held-out p80 coverage", st.p80, 0.78, 0.85)
	in("sets: held-out p90 coverage", st.p90, 0.87, 1)
	in("sets: held-out pinball loss over the baseline's", st.ratio(), 0, 0.85)
	for _, g := range []struct {
		name string
		s    cvScore
	}{{"items", it}, {"sets", st}} {
		s := g.s
		if s.p50 < 0.45 || s.p50 > 0.55 || s.p80 < 0.78 || s.p80 > 0.85 || s.p90 < 0.87 || s.ratio() >= 0.85 {
			t.Logf("%s: goal missed (p50 0.45-0.55, p80 0.78-0.85, p90 >= 0.87, pinball < 0.85x): p50 %.3f p80 %.3f p90 %.3f pinball %.3fx",
				g.name, s.p50, s.p80, s.p90, s.ratio())
		}
	}
}
