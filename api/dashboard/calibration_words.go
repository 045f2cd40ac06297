package dashboard

import (
	"fmt"
	"math"

	"github.com/commitea/commitea/scheduler"
)

// The calibration page says what its backtest table means, in the words a
// project manager would use. The order of judgement is coverage first: a
// range is a promise ("80% of the work finishes by p80"), and one that is
// not kept at its stated rate cannot be planned on, however narrow it is.
// Only between two ranges that keep their promise does sharpness (width,
// pinball loss) decide.

// calibratedWithin is how far, in points of coverage, a p80 or p90 may
// miss its target and still count as kept: with a few hundred scored
// items the sampling error alone is a few points.
const calibratedWithin = 0.07

// coverageMiss is how far a score's p80 and p90 coverage (the dates plans
// are made on) sit from their targets: the mean of the absolute misses,
// the mean signed miss (negative: work finishes later than the dates
// say), and whether both are within calibratedWithin.
func coverageMiss(s scheduler.BacktestScore) (abs, signed float64, kept bool) {
	kept = true
	for _, c := range []struct{ got, want float64 }{{s.P80Coverage, 0.8}, {s.P90Coverage, 0.9}} {
		d := c.got - c.want
		abs += math.Abs(d) / 2
		signed += d / 2
		if math.Abs(d) > calibratedWithin {
			kept = false
		}
	}
	return abs, signed, kept
}

// reading says in a sentence or two how a score's ranges behave.
func reading(name string, s scheduler.BacktestScore) string {
	_, signed, kept := coverageMiss(s)
	p80, p90 := percentText(s.P80Coverage), percentText(s.P90Coverage)
	var out string
	switch {
	case kept:
		out = fmt.Sprintf("%s's p80 came true for %s of the work and its p90 for %s (targets 80%% and 90%%): its ranges come true about as often as they say.", name, p80, p90)
	case signed < 0:
		out = fmt.Sprintf("%s's p80 came true for only %s of the work and its p90 for %s (targets 80%% and 90%%): its dates are too early, more work finishes after them than its ranges admit.", name, p80, p90)
	default:
		out = fmt.Sprintf("%s's p80 came true for %s of the work and its p90 for %s (targets 80%% and 90%%): its ranges are wider than they need to be, cautious rather than wrong.", name, p80, p90)
	}
	if d := s.P50Coverage - 0.5; kept && math.Abs(d) > calibratedWithin {
		lean := "early: only"
		if d > 0 {
			lean = "late:"
		}
		out += fmt.Sprintf(" Its p50 dates lean %s %s of the work was done by them (target 50%%).", lean, percentText(s.P50Coverage))
	}
	return out
}

// backtestWords explains a backtest table: how each side keeps its
// promise, which is better, and why.
func backtestWords(what string, f, base scheduler.BacktestScore) []string {
	fa, _, fk := coverageMiss(f)
	ba, _, bk := coverageMiss(base)
	out := []string{reading("CommiTea", f), reading("The throughput baseline", base)}
	sharper := func(a, b scheduler.BacktestScore) bool { return a.PinballLoss < b.PinballLoss }
	var verdict string
	switch {
	case fk && bk && sharper(base, f):
		verdict = fmt.Sprintf("Both keep their promise on %s, and the baseline is sharper (pinball loss %.1f days against %.1f): here it is the better forecast, and CommiTea's people and dependencies buy nothing yet.", what, base.PinballLoss, f.PinballLoss)
	case fk && bk:
		verdict = fmt.Sprintf("Both keep their promise on %s, and CommiTea is sharper (pinball loss %.1f days against %.1f): CommiTea is the better forecast.", what, f.PinballLoss, base.PinballLoss)
	case fk:
		verdict = fmt.Sprintf("CommiTea is the better forecast on %s: its ranges come true as often as they say and the baseline's do not.", what)
		if sharper(base, f) || base.MedianRelWidth < f.MedianRelWidth {
			verdict += fmt.Sprintf(" The baseline's narrower ranges and lower pinball loss (%.1f days against %.1f) only look better: a narrow range that misses %s of the time cannot be planned on.", base.PinballLoss, f.PinballLoss, percentText(1-base.P80Coverage))
		}
	case bk:
		verdict = fmt.Sprintf("The baseline is the better forecast on %s: its ranges come true as often as they say and CommiTea's do not, which is worth raising (the calibration above, or the team's calendars, are off).", what)
	case fa <= ba:
		verdict = fmt.Sprintf("Neither keeps its promise on %s, CommiTea less badly (its coverage misses the targets by %.0f points on average, the baseline's by %.0f): read its dates as rough.", what, fa*100, ba*100)
	default:
		verdict = fmt.Sprintf("Neither keeps its promise on %s, the baseline less badly (its coverage misses the targets by %.0f points on average, CommiTea's by %.0f): read CommiTea's dates as rough.", what, ba*100, fa*100)
	}
	return append(out, verdict)
}

func percentText(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }
