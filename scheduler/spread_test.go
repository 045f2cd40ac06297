package scheduler

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// A narrow spread of measured effort stands; the same spread read from the
// queue-share stand-in is pooled towards the prior, in proportion to the
// stand-in's share of the samples.
func TestSpreadSigmaTrustsNarrowOnlyFromMeasuredEffort(t *testing.T) {
	measured := lognormalSamples(200, 0, 0.4, 5)
	standIn := slices.Clone(measured)
	half := slices.Clone(measured)
	for i := range standIn {
		standIn[i].Effort = EffortQueueShare
		if i%2 == 0 {
			half[i].Effort = EffortQueueShare
		}
	}
	m, s, h := Calibrate(measured, CalibrationOptions{}), Calibrate(standIn, CalibrationOptions{}), Calibrate(half, CalibrationOptions{})
	if m.Sigma > 0.5 {
		t.Errorf("measured effort, sigma 0.4: got %.3f, want it kept", m.Sigma)
	}
	want := math.Sqrt((200*m.Sigma*m.Sigma + 100*priorSigma*priorSigma) / 300) // NarrowSigmaPriorWeight 100
	if math.Abs(s.Sigma-want) > 1e-9 {
		t.Errorf("stand-in effort: sigma %.3f, want %.3f (pooled with the prior as 100 samples)", s.Sigma, want)
	}
	if !(h.Sigma > m.Sigma && h.Sigma < s.Sigma) {
		t.Errorf("half stand-in: sigma %.3f, want between %.3f and %.3f", h.Sigma, m.Sigma, s.Sigma)
	}
	if got := SpreadSigma(0.4, 200, 200, CalibrationOptions{NarrowSigmaPriorWeight: -1}); got != 0.4 {
		t.Errorf("narrow pooling off: %.3f, want 0.4", got)
	}
	// Wide: pooled whatever the source.
	if a, b := SpreadSigma(3, 30, 0, CalibrationOptions{}), SpreadSigma(3, 30, 30, CalibrationOptions{}); a != b || a >= 3 {
		t.Errorf("wide sigma 3 from 30 samples: %.3f measured, %.3f stand-in; want equal and pooled", a, b)
	}
}

// driftingSamples are n samples a day apart whose log ratio is a per-28-day
// offset of spread drift plus independent noise of spread sigma.
func driftingSamples(n int, drift, sigma float64, seed uint64) []Sample {
	rng := rand.New(rand.NewPCG(seed, 2))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	offsets := map[int]float64{}
	out := make([]Sample, n)
	for i := range out {
		p := i / 28
		if _, ok := offsets[p]; !ok {
			offsets[p] = drift * rng.NormFloat64()
		}
		nominal := []float64{1, 3, 8, 20, 40}[i%5]
		out[i] = Sample{Number: int64(i + 1), NominalHours: nominal, FinishedAt: t0.Add(time.Duration(i) * 24 * time.Hour),
			ActualHours: nominal * math.Exp(offsets[p]+sigma*rng.NormFloat64())}
	}
	return out
}

// The shared spread measures the team's drift between periods, not the
// noise of a period's median: a steady team's issues are nearly
// independent, a drifting team's share its drift.
func TestSharedSpreadMeasuresDrift(t *testing.T) {
	steady := Calibrate(driftingSamples(360, 0, 0.5, 1), CalibrationOptions{})
	if steady.SharedSigma > 0.15 {
		t.Errorf("steady team: shared sigma %.3f, want near 0 (the centre's uncertainty only)", steady.SharedSigma)
	}
	drifting := Calibrate(driftingSamples(360, 0.2, 0.5, 1), CalibrationOptions{SharedScale: 1})
	if drifting.SharedSigma < 0.1 || drifting.SharedSigma > 0.3 {
		t.Errorf("drift 0.2: shared sigma %.3f, want about 0.2", drifting.SharedSigma)
	}
	scaled := Calibrate(driftingSamples(360, 0.2, 0.5, 1), CalibrationOptions{SharedScale: 2})
	if r := scaled.SharedSigma / drifting.SharedSigma; r < 1.8 || r > 2.05 {
		t.Errorf("SharedScale 2: shared sigma %.3f, %.2fx scale 1's; want about 2x", scaled.SharedSigma, r)
	}
	if s := Calibrate(driftingSamples(360, 0, 0.5, 1), CalibrationOptions{SharedScale: 8}).SharedSigma; s > 0.15 {
		t.Errorf("steady team, scale 8: shared sigma %.3f, want the centre's uncertainty only", s)
	}
	if off := Calibrate(driftingSamples(360, 0.5, 0.5, 1), CalibrationOptions{SharedScale: -1}); off.SharedSigma != 0 {
		t.Errorf("SharedScale -1: shared sigma %.3f, want 0", off.SharedSigma)
	}
}

// A shared factor keeps every issue's own range (its total spread is
// Sigma either way) but makes the last of many finish earlier and wider:
// issues that run slow together.
func TestSharedSigmaCorrelatesAMilestone(t *testing.T) {
	in := Input{Now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), Milestones: []Milestone{{ID: 1, Title: "m"}},
		Calibration: Calibration{N: 100, GlobalMultiplier: 1, Sigma: 0.8}}
	for k := range 20 {
		login := "p" + string(rune('a'+k))
		in.People = append(in.People, Person{Login: login})
		in.Issues = append(in.Issues, Issue{Number: int64(k + 1), State: Steeping, Estimate: SizeM, Assignee: login, Milestone: 1})
	}
	indep, err := Run(in, Options{Trials: 4000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	in.Calibration.SharedSigma = 0.6
	shared, err := Run(in, Options{Trials: 4000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	h := func(f Forecast, q int) float64 { return f.Milestones[0].Quantiles[q].Sub(in.Now).Hours() }
	if !(h(shared, 10) < h(indep, 10)) {
		t.Errorf("milestone p50: shared %.0f h, independent %.0f h; want earlier with a shared factor", h(shared, 10), h(indep, 10))
	}
	if w, wi := h(shared, 18)/h(shared, 2), h(indep, 18)/h(indep, 2); !(w > wi) {
		t.Errorf("milestone p90/p10: shared %.2f, independent %.2f; want wider", w, wi)
	}
	// One issue alone: the same range within sampling error.
	one := func(f Forecast) float64 {
		return f.Issues[0].P80.Sub(in.Now).Hours() / f.Issues[0].P50.Sub(in.Now).Hours()
	}
	if a, b := one(shared), one(indep); math.Abs(a/b-1) > 0.1 {
		t.Errorf("issue p80/p50: shared %.2f, independent %.2f; want the same spread", a, b)
	}
}

// The shared spread is the same bits on every run: the forecast's seed
// hashes it.
func TestSharedSpreadIsDeterministic(t *testing.T) {
	samples := driftingSamples(360, 0.5, 0.5, 4)
	first := Calibrate(samples, CalibrationOptions{}).SharedSigma
	for range 50 {
		if got := Calibrate(samples, CalibrationOptions{}).SharedSigma; got != first {
			t.Fatalf("shared sigma %v, then %v", first, got)
		}
	}
}
