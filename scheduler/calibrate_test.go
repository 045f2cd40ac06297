package scheduler

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func lognormalSamples(n int, mu, sigma float64, seed uint64) []Sample {
	rng := rand.New(rand.NewPCG(seed, 1))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([]Sample, n)
	for i := range out {
		nominal := []float64{1, 3, 8, 20, 40}[i%5]
		out[i] = Sample{
			Number:       int64(i + 1),
			NominalHours: nominal,
			ActualHours:  nominal * math.Exp(mu+sigma*rng.NormFloat64()),
			FinishedAt:   t0.Add(time.Duration(i) * time.Hour),
		}
	}
	return out
}

func TestCalibrateRecoversMultiplierAndSigma(t *testing.T) {
	cal := Calibrate(lognormalSamples(200, math.Log(1.5), 0.5, 7), CalibrationOptions{})
	if cal.ColdStart || cal.N != 200 {
		t.Fatalf("N=%d coldStart=%v", cal.N, cal.ColdStart)
	}
	if math.Abs(cal.GlobalMultiplier-1.5) > 0.15 {
		t.Errorf("multiplier %.3f, want about 1.5", cal.GlobalMultiplier)
	}
	if math.Abs(cal.Sigma-0.5) > 0.08 {
		t.Errorf("sigma %.3f, want about 0.5", cal.Sigma)
	}
}

// A spread wider than the prior's is pooled towards it, hard from a few
// dozen issues and barely from a thousand; a narrower one stands.
func TestCalibratePoolsOnlyAWideSigma(t *testing.T) {
	few := Calibrate(lognormalSamples(30, 0, 3.5, 3), CalibrationOptions{})
	if few.Sigma >= 2.6 || few.Sigma <= priorSigma {
		t.Errorf("30 samples of sigma 3.5 gave %.3f, want pooled well below 3.5 but above the prior", few.Sigma)
	}
	many := Calibrate(lognormalSamples(1000, 0, 2.5, 3), CalibrationOptions{})
	if many.Sigma < 2.2 {
		t.Errorf("1,000 samples of sigma 2.5 gave %.3f, want nearly all of it", many.Sigma)
	}
	raw := Calibrate(lognormalSamples(1000, 0, 2.5, 3), CalibrationOptions{SigmaPriorWeight: 1e-9})
	if many.Sigma >= raw.Sigma || raw.Sigma/many.Sigma > 1.1 {
		t.Errorf("pooling moved 1,000 samples' sigma from %.3f to %.3f, want under 10%%", raw.Sigma, many.Sigma)
	}
	narrow := Calibrate(lognormalSamples(30, 0, 0.4, 3), CalibrationOptions{})
	if narrow.Sigma > 0.6 {
		t.Errorf("30 samples of sigma 0.4 gave %.3f, want it kept", narrow.Sigma)
	}
}

func TestCalibrateIsRobustToOutliers(t *testing.T) {
	s := lognormalSamples(100, 0, 0.4, 3)
	clean := Calibrate(s, CalibrationOptions{})
	for i := range 8 {
		s[i*10].ActualHours *= 1000
	}
	dirty := Calibrate(s, CalibrationOptions{})
	if r := dirty.GlobalMultiplier / clean.GlobalMultiplier; r > 1.15 {
		t.Errorf("8%% outliers moved the multiplier by %.2fx", r)
	}
	if dirty.Sigma > clean.Sigma*1.3 {
		t.Errorf("outliers moved sigma from %.3f to %.3f", clean.Sigma, dirty.Sigma)
	}
}

func TestCalibrateColdStartUsesPriors(t *testing.T) {
	cal := Calibrate(lognormalSamples(3, math.Log(2), 0.1, 1), CalibrationOptions{})
	if !cal.ColdStart || cal.N != 3 {
		t.Fatalf("N=%d coldStart=%v", cal.N, cal.ColdStart)
	}
	if cal.Sigma != priorSigma {
		t.Errorf("sigma %v, want the prior %v", cal.Sigma, priorSigma)
	}
	// Three samples at 2x move the prior 3/(3+5) of the way in log space.
	want := math.Exp(math.Log(priorGlobalMultiplier) + 3.0/8*(math.Log(2)-math.Log(priorGlobalMultiplier)))
	if math.Abs(cal.GlobalMultiplier-want) > 0.05 {
		t.Errorf("multiplier %.3f, want about %.3f", cal.GlobalMultiplier, want)
	}
	if empty := Calibrate(nil, CalibrationOptions{}); !empty.ColdStart || empty.GlobalMultiplier != priorGlobalMultiplier {
		t.Errorf("no samples: %+v", empty)
	}
}

func TestCalibrateLabelAndPersonBiasWithPooling(t *testing.T) {
	s := lognormalSamples(120, 0, 0.2, 11)
	for i := range s {
		s[i].Labels = []string{"est/m", "p/1"}
		s[i].Person = "ann"
		if i%4 == 0 {
			s[i].Labels = append(s[i].Labels, "Area/DB")
			s[i].ActualHours *= 2
		}
		if i%5 == 0 {
			s[i].Person = "bob"
			s[i].ActualHours *= 0.5
		}
	}
	cal := Calibrate(s, CalibrationOptions{})
	byKey := func(bs []Bias, key string) (Bias, bool) {
		for _, b := range bs {
			if b.Key == key {
				return b, true
			}
		}
		return Bias{}, false
	}
	for _, key := range []string{"est/m", "p/1"} {
		if _, ok := byKey(cal.ByLabelBias, key); ok {
			t.Errorf("label %s has a bias; est/ and p/ are inputs, not groups", key)
		}
	}
	db, ok := byKey(cal.ByLabelBias, "area/db")
	if !ok || db.N != 30 {
		t.Fatalf("area/db bias %+v", db)
	}
	// Shrunk by 30/35 towards 1.
	if db.Multiplier < 1.6 || db.Multiplier > 2.0 {
		t.Errorf("area/db multiplier %.3f, want about 2^(30/35)=1.81", db.Multiplier)
	}
	bob, ok := byKey(cal.ByPersonBias, "bob")
	if !ok || bob.Multiplier > 0.7 || bob.Multiplier < 0.45 {
		t.Errorf("bob bias %+v, want about 0.55", bob)
	}
	mu, _ := cal.EffortParams(8, []string{"area/db"}, "bob")
	if got := math.Exp(mu) / 8; math.Abs(got-db.Multiplier*bob.Multiplier*cal.GlobalMultiplier) > 1e-9 {
		t.Errorf("EffortParams ignores the biases: %v", got)
	}
}

func TestCalibrateUsesOnlyRecentSamplesAndIgnoresOrder(t *testing.T) {
	s := lognormalSamples(300, 0, 0.3, 5)
	for i := range 100 { // the oldest 100 are 3x slower
		s[i].ActualHours *= 3
	}
	cal := Calibrate(s, CalibrationOptions{MaxSamples: 200})
	if cal.N != 200 || math.Abs(math.Log(cal.GlobalMultiplier)) > 0.1 {
		t.Errorf("N=%d multiplier=%.3f: old samples leaked in", cal.N, cal.GlobalMultiplier)
	}
	rev := make([]Sample, len(s))
	for i := range s {
		rev[len(s)-1-i] = s[i]
	}
	if again := Calibrate(rev, CalibrationOptions{MaxSamples: 200}); again.GlobalMultiplier != cal.GlobalMultiplier || again.Sigma != cal.Sigma {
		t.Error("calibration depends on sample order")
	}
	if all := Calibrate(s, CalibrationOptions{}); all.N != 300 {
		t.Errorf("default window kept %d of 300 samples a few days apart", all.N)
	}
	old := Calibrate(s, CalibrationOptions{MaxAge: 50 * time.Hour})
	if old.N != 51 {
		t.Errorf("MaxAge 50h kept %d samples, want 51", old.N)
	}
}

func TestSharedWorkingHours(t *testing.T) {
	mon := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC) // a Monday
	day := 24 * time.Hour
	got := SharedWorkingHours([]WorkInterval{
		{Number: 1, Person: "ann", From: mon, To: mon.Add(2 * day)},              // Mon-Tue, Tue shared
		{Number: 2, Person: "ann", From: mon.Add(day), To: mon.Add(3 * day)},     // Tue-Wed, Tue shared
		{Number: 3, Person: "bob", From: mon.Add(4 * day), To: mon.Add(7 * day)}, // Fri-Sun: one working day
		{Number: 4, Person: "bob", From: mon, To: mon},                           // empty
	}, map[string]Calendar{"bob": {HoursPerDay: 8}})
	want := map[int64]float64{1: 6 + 3, 2: 3 + 6, 3: 8, 4: 0}
	for n, w := range want {
		if math.Abs(got[n]-w) > 1e-9 {
			t.Errorf("issue %d: %.3f hours, want %.3f", n, got[n], w)
		}
	}
}

func TestCalendarWorkingHoursFastPathMatchesDayWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	plain := Calendar{}
	// A holiday far away forces the day-by-day walk with the same result.
	walked := Calendar{Holidays: []time.Time{time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC)}}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 200 {
		a := base.Add(time.Duration(rng.Int64N(int64(400 * 24 * time.Hour))))
		b := a.Add(time.Duration(rng.Int64N(int64(60 * 24 * time.Hour))))
		f, w := calendarWorkingHours(plain, a, b), calendarWorkingHours(walked, a, b)
		if math.Abs(f-w) > 1e-6 {
			t.Fatalf("%s..%s: fast %.6f, walked %.6f", a, b, f, w)
		}
		h := rng.Float64() * 100
		end := calendarAddWorkingHours(walked, a, h)
		if got := calendarWorkingHours(walked, a, end); math.Abs(got-h) > 1e-6 {
			t.Fatalf("add %.3f hours then count: %.6f", h, got)
		}
	}
}

func TestCalendarHonoursHolidaysAndTimeOff(t *testing.T) {
	mon := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	c := Calendar{HoursPerDay: 5, Holidays: []time.Time{mon}, TimeOff: []DateRange{{From: mon.AddDate(0, 0, 2), To: mon.AddDate(0, 0, 3)}}}
	if got := calendarWorkingHours(c, mon, mon.AddDate(0, 0, 7)); got != 10 {
		t.Errorf("week with a holiday and two days off: %v hours, want 10", got)
	}
}

// Bulk closes and imports closed within a minute of filing are not work:
// with four of them for every genuine issue the team is not read as
// infinitely fast, in the live currency (samples) or the replay's (a
// history through the backtest's calibration).
func TestCalibrateIgnoresWorkClosedTooFastToBeWork(t *testing.T) {
	genuine := lognormalSamples(100, math.Log(1.3), 0.6, 21)
	mixed := append([]Sample(nil), genuine...)
	for i := range 400 {
		mixed = append(mixed, Sample{
			Number: int64(1000 + i), NominalHours: []float64{1, 3, 8, 20, 40}[i%5],
			ActualHours: 0.25 / 60, // a minute of wall-clock time on a 6-hour day
			FinishedAt:  genuine[i%len(genuine)].FinishedAt,
		})
	}
	want, got := Calibrate(genuine, CalibrationOptions{}), Calibrate(mixed, CalibrationOptions{})
	if r := got.GlobalMultiplier / want.GlobalMultiplier; r < 1/1.5 || r > 1.5 {
		t.Errorf("samples: multiplier %.3f with the quick closes, %.3f without", got.GlobalMultiplier, want.GlobalMultiplier)
	}
	if got.Implausible != 400 || got.N != want.N {
		t.Errorf("implausible %d, n %d; want 400 and %d", got.Implausible, got.N, want.N)
	}

	items := generatedHistory(300, 5)
	var withQuick []HistoryItem
	rng := rand.New(rand.NewPCG(5, 5))
	for _, it := range items {
		withQuick = append(withQuick, it)
		for range 4 {
			at := it.Created.Add(time.Duration(rng.Float64() * float64(24*time.Hour)))
			withQuick = append(withQuick, HistoryItem{ID: "Q", Created: at, Resolved: at.Add(time.Duration(rng.IntN(60)) * time.Second), StoryPoints: []float64{1, 2, 3, 5, 8}[rng.IntN(5)]})
		}
	}
	slices.SortStableFunc(withQuick, func(a, b HistoryItem) int { return a.Created.Compare(b.Created) })
	for i := range withQuick {
		withQuick[i].Number = int64(i + 1)
	}
	c := items[250].Created
	wantCal, _ := calibrateAt(items, c, CalibrationOptions{})
	gotCal, _ := calibrateAt(withQuick, c, CalibrationOptions{})
	if r := gotCal.GlobalMultiplier / wantCal.GlobalMultiplier; r < 1/1.5 || r > 1.5 || gotCal.Implausible < 3*wantCal.N {
		t.Errorf("history: multiplier %.3f with the quick closes (%d left out), %.3f without", gotCal.GlobalMultiplier, gotCal.Implausible, wantCal.GlobalMultiplier)
	}
	t.Logf("samples: %.3f vs %.3f; history: %.3f vs %.3f (n %d, %d left out)", got.GlobalMultiplier, want.GlobalMultiplier, gotCal.GlobalMultiplier, wantCal.GlobalMultiplier, gotCal.N, gotCal.Implausible)
}

// The multiplier moves from the prior by at most MultiplierBound(n),
// which widens with the evidence.
func TestCalibrateBoundsTheMultiplier(t *testing.T) {
	fast := Calibrate(lognormalSamples(20, math.Log(1e-3*64), 0.1, 4), CalibrationOptions{MinEffortShare: 1e-9, MinEffortMinutes: 1e-9})
	if want := priorGlobalMultiplier / MultiplierBound(20); math.Abs(fast.GlobalMultiplier-want) > 1e-9 {
		t.Errorf("20 samples at 0.064: multiplier %.4f, want the bound %.4f", fast.GlobalMultiplier, want)
	}
	if !(MultiplierBound(10) == 4 && MultiplierBound(1000) > MultiplierBound(40) && MultiplierBound(40) == 8) {
		t.Errorf("bounds %v %v %v", MultiplierBound(10), MultiplierBound(40), MultiplierBound(1000))
	}
}
