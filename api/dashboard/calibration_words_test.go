package dashboard

import (
	"strings"
	"testing"

	"github.com/commitea/commitea/scheduler"
)

// TestBacktestWords: coverage against the target decides first, the
// baseline's sharper but broken ranges do not win, and between two kept
// promises the lower pinball loss does.
func TestBacktestWords(t *testing.T) {
	// The demo's table: CommiTea near its targets and wide; the baseline
	// narrow, with a lower loss, and its p80 true for 41%.
	commitea := scheduler.BacktestScore{P50Coverage: 0.60, P80Coverage: 0.79, P90Coverage: 0.86, MedianRelWidth: 3.05, PinballLoss: 17.3}
	baseline := scheduler.BacktestScore{P50Coverage: 0.38, P80Coverage: 0.41, P90Coverage: 0.44, MedianRelWidth: 0.47, PinballLoss: 12.0}
	early := scheduler.BacktestScore{P50Coverage: 0.45, P80Coverage: 0.70, P90Coverage: 0.78, MedianRelWidth: 1.2, PinballLoss: 14}
	cases := []struct {
		name     string
		f, base  scheduler.BacktestScore
		verdict  string
		readings [2]string
	}{
		{"demo: CommiTea kept, baseline early", commitea, baseline, "CommiTea is the better forecast on single issues", [2]string{"about as often as they say. Its p50 dates lean late: 60% of the work was done by them", "too early"}},
		{"baseline kept, CommiTea early", baseline, commitea, "The baseline is the better forecast", [2]string{"too early", "about as often"}},
		{"both kept, CommiTea sharper", commitea, scheduler.BacktestScore{P50Coverage: 0.5, P80Coverage: 0.82, P90Coverage: 0.9, PinballLoss: 20}, "CommiTea is sharper", [2]string{"about as often", "about as often"}},
		{"both kept, baseline sharper", commitea, scheduler.BacktestScore{P50Coverage: 0.5, P80Coverage: 0.82, P90Coverage: 0.9, PinballLoss: 9}, "the baseline is sharper", [2]string{"about as often", "about as often"}},
		{"neither, CommiTea closer", early, baseline, "Neither keeps its promise on single issues, CommiTea less badly", [2]string{"too early", "too early"}},
		{"CommiTea cautious", scheduler.BacktestScore{P50Coverage: 0.8, P80Coverage: 0.97, P90Coverage: 0.99}, baseline, "Neither keeps its promise", [2]string{"wider than they need", "too early"}},
	}
	for _, c := range cases {
		w := backtestWords("single issues", c.f, c.base)
		if len(w) != 3 || !strings.Contains(w[2], c.verdict) || !strings.Contains(w[0], c.readings[0]) || !strings.Contains(w[1], c.readings[1]) {
			t.Errorf("%s: %q", c.name, w)
		}
	}
	// The demo's case also says why the baseline's lower loss does not win.
	if w := backtestWords("single issues", commitea, baseline); !strings.Contains(w[2], "only look better") || !strings.Contains(w[2], "59% of the time") {
		t.Errorf("the verdict does not say why the sharper baseline loses: %q", w[2])
	}
}
