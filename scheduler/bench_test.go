package scheduler

import (
	"fmt"
	"testing"
)

// benchProject is the issue's benchmark project: open issues, 20 people on
// real calendars (hours, time zones, holidays, time off), 30% of issues with
// dependencies (acyclic), 3 milestones, a quarter unassigned.
func benchProject(issues int) Input {
	return genProject(2026, genSpec{issues: issues, people: 20, milestones: 3, depFrac: 0.3, unassignedFrac: 0.25, missingEstFrac: 0.05, steepingFrac: 0.1})
}

func benchRun(b *testing.B, issues, trials int) {
	benchForecast(b, issues, trials, Run)
}

// benchForecast measures run on the benchmark project.
func benchForecast(b *testing.B, issues, trials int, run func(Input, Options) (Forecast, error)) {
	in := benchProject(issues)
	opts := Options{Trials: trials, Seed: 1}
	if _, err := run(in, opts); err != nil { // warm
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for b.Loop() {
		f, err := run(in, opts)
		if err != nil || len(f.Issues) != issues {
			b.Fatal(err, len(f.Issues))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(issues*trials), "ns/issue-trial")
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkRun10k is the acceptance benchmark: 2,000 issues, 10,000 trials.
func BenchmarkRun10k(b *testing.B) { benchRun(b, 2000, 10000) }

// BenchmarkRunGrowth shows how time grows when issues and trials double.
func BenchmarkRunGrowth(b *testing.B) {
	for _, c := range []struct{ issues, trials int }{{2000, 10000}, {4000, 10000}, {2000, 20000}, {4000, 20000}} {
		b.Run(fmt.Sprintf("issues=%d/trials=%d", c.issues, c.trials), func(b *testing.B) { benchRun(b, c.issues, c.trials) })
	}
}

// BenchmarkRunDoneBy10k is BenchmarkRun10k counting "how many by when"
// over a year of days, as the recompute does.
func BenchmarkRunDoneBy10k(b *testing.B) { benchForecast(b, 2000, 10000, runDoneByYear(b)) }

// BenchmarkDoneByCost compares Run and RunDoneBy at the default 2,000
// trials, where the curve counts every trial.
func BenchmarkDoneByCost(b *testing.B) {
	b.Run("run", func(b *testing.B) { benchForecast(b, 2000, 2000, Run) })
	b.Run("doneBy", func(b *testing.B) { benchForecast(b, 2000, 2000, runDoneByYear(b)) })
}

func runDoneByYear(b *testing.B) func(Input, Options) (Forecast, error) {
	return func(in Input, opts Options) (Forecast, error) {
		f, d, err := RunDoneBy(in, opts, DoneByOptions{Days: 365})
		if err == nil && len(d.AtLeast80) != 365 {
			b.Fatalf("%d days", len(d.AtLeast80))
		}
		return f, err
	}
}

// BenchmarkCountDoneBy is the per-block cost of "how many by when" alone
// (one block of the benchmark project's trials, a year of days), beside
// BenchmarkRunBlock, the schedule of that block.
func BenchmarkCountDoneBy(b *testing.B) {
	p, s := benchBlock(b)
	p.doneBy = newDoneByDays(p.origin, DoneByOptions{Days: 365})
	a := p.newDoneByAcc()
	for b.Loop() {
		p.countDoneBy(0, blockTrials, s, a)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(p.items)*blockTrials), "ns/issue-trial")
}

// BenchmarkRunBlock schedules one block of the benchmark project.
func BenchmarkRunBlock(b *testing.B) {
	p, s := benchBlock(b)
	for b.Loop() {
		p.runBlock(0, s, nil, nil)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(p.items)*blockTrials), "ns/issue-trial")
}

func benchBlock(b *testing.B) (*plan, *blockState) {
	p, err := newPlan(benchProject(2000), Options{Trials: 10000, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	s := p.newBlockState()
	p.runBlock(0, s, nil, nil)
	return p, s
}
