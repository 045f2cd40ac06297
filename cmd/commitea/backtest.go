package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/commitea/commitea/scheduler"
)

const backtestUsage = `--csv FILE [--json] [--trials N] [--every 14d] [--seed N]

Replays a history of issues with rolling cut-off dates: at each cut-off it
forecasts the work open then from what was known then, and scores the ranges
against what happened: coverage of p50/p80/p90 (share of issues resolved by
that date), the median relative width (p90-p10)/(p50-cutoff), and the pinball
loss (mean quantile loss over p50/p80/p90, in days). The same figures are
printed for a throughput-only Monte Carlo baseline on the same cut-offs.

Sets (JSON "sets", the same fields; "items" counts sets): at each cut-off,
the open issues created in the 28 days before it, when there are at least
two, scored like a milestone by the date the last of them was done. The
baseline answers the same question from throughput alone: how long until
the team completes that many issues.

Conditioned on the export (JSON "conditioned": {"items": {...}, "sets":
{...}}, the same fields; table rows "export-cond"): a history holds only the
issues resolved by its export, taken to be its newest resolution, so at a
cut-off no scored outcome lies later than L = export - cutoff. The plain
figures charge a forecast for mass beyond L that the data could never
contain, which flatters coverage. The conditioned figures score the same
forecasts against the same outcomes as if they had to finish within L:
quantile p is read at p*F(L), F the forecast's own distribution (an issue's
lognormal read through p10/p50/p80, a set's 21-point CDF, the baseline's
trials within L); a forecast giving no chance by L is scored as is.

CSV layouts (chosen by the header row):

  CommiTea's own, columns by name in any order:
    id        required  unique text
    created   required  when the issue was opened
    started   optional  when work started
    resolved  required  when it was done (empty: still open)
    estimate  optional  est/xs..est/xl, hours ("6h") or story points ("5")
    assignee  optional  login
    labels    optional  labels separated by ';'
    spent     optional  tracked hours
  Times: RFC 3339, "YYYY-MM-DD HH:MM:SS" or "YYYY-MM-DD" (UTC).

  Jira history (as published by Tawosi et al.): ID, Issue_Key, Type, Status,
  Resolution, Creation_Date, Resolution_Date, Story_Point, Timespent,
  In_Progress_Minutes, Total_Effort_Minutes, Resolution_Time_Minutes; NULL
  marks a missing value; story points are the estimate.`

// parseDays reads a duration that may be given in days ("14d").
func parseDays(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(d, 64)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		return time.Duration(n * float64(24*time.Hour)), nil
	}
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	return v, nil
}

// runBacktestCSV is the backtest command: it owns its flags.
func (m *Main) runBacktestCSV(args []string) error {
	fs := flag.NewFlagSet("commitea backtest", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(m.Stderr, "Usage: commitea backtest %s\n\nFlags:\n", backtestUsage)
		fs.PrintDefaults()
	}
	path := fs.String("csv", "", "history CSV `file` (required)")
	asJSON := fs.Bool("json", false, "print the scores as JSON")
	trials := fs.Int("trials", 1000, "Monte Carlo trials per forecast")
	every := fs.String("every", "14d", "time between cut-offs (\"14d\", \"336h\")")
	seed := fs.Uint64("seed", 1, "random seed")
	fs.String("config", "", "ignored: backtest needs no configuration")
	if done, err := parseFlags(fs, args); done || err != nil {
		return err
	}
	if *path == "" {
		return usageError{"backtest: --csv FILE is required"}
	}
	if *trials <= 0 || *trials > scheduler.MaxTrials {
		return usageError{fmt.Sprintf("backtest: --trials must be between 1 and %d", scheduler.MaxTrials)}
	}
	step, err := parseDays(*every)
	if err != nil {
		return usageError{"backtest: --every: " + err.Error()}
	}
	f, err := os.Open(*path)
	if err != nil {
		return fmt.Errorf("backtest: %w", err)
	}
	defer f.Close()
	items, err := scheduler.ReadHistoryCSV(f)
	if err != nil {
		return fmt.Errorf("backtest %s: %w", *path, err)
	}
	res, err := scheduler.Backtest(items, scheduler.BacktestOptions{Every: step, Trials: *trials, Seed: *seed})
	if err != nil {
		return fmt.Errorf("backtest %s: %w", *path, err)
	}
	if *asJSON {
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	writeBacktestTable(m.Stdout, res)
	return nil
}

func writeBacktestTable(w io.Writer, res scheduler.BacktestResult) {
	fmt.Fprintf(w, "%-24s %8s %8s %8s %10s %12s %8s %8s\n", "forecast", "p50", "p80", "p90", "rel width", "pinball (d)", "cutoffs", "items")
	row := func(name string, s scheduler.BacktestScore) {
		fmt.Fprintf(w, "%-24s %7.1f%% %7.1f%% %7.1f%% %10.2f %12.1f %8d %8d\n", name,
			100*s.P50Coverage, 100*s.P80Coverage, 100*s.P90Coverage, s.MedianRelWidth, s.PinballLoss, s.Cutoffs, s.Items)
	}
	row("calibrated schedule", res.BacktestScore)
	row("throughput baseline", res.Baseline)
	if res.Sets.Items > 0 {
		row("sets: calibrated", res.Sets.BacktestScore)
		row("sets: baseline", res.Sets.Baseline)
	}
	c := res.Conditioned
	if c.Items.Items == 0 {
		return
	}
	fmt.Fprintln(w, "conditioned on the export (each forecast as if it had to finish by the newest resolution):")
	row("export-cond: calibrated", c.Items.BacktestScore)
	row("export-cond: baseline", c.Items.Baseline)
	if c.Sets.Items > 0 {
		row("export-cond sets: calib.", c.Sets.BacktestScore)
		row("export-cond sets: base.", c.Sets.Baseline)
	}
}
