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
	in := benchProject(issues)
	opts := Options{Trials: trials, Seed: 1}
	mustRun(b, in, opts) // warm
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for b.Loop() {
		f, err := Run(in, opts)
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
