package scheduler

// Real-data reports: they read ../shared/data (COMMITEA_SHARED_DATA) and
// skip when it is absent, so a fresh clone's test suite does not need it.
//
//	go test ./scheduler -run RealDataPriors -v
//	go test ./scheduler -run '^$' -bench RealDataBacktest -benchtime=1x

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

func sharedDataDir(t testing.TB) string {
	dir := os.Getenv("COMMITEA_SHARED_DATA")
	if dir == "" {
		// ../../shared/data from the main checkout's package directory;
		// one level further up from a worktree under /work/wt.
		dir = filepath.Join("..", "..", "shared", "data")
		if _, err := os.Stat(dir); err != nil {
			dir = filepath.Join("..", "..", "..", "shared", "data")
		}
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("real data not present at %s", dir)
	}
	return dir
}

func readHistoryFile(t testing.TB, path string) []HistoryItem {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	items, err := ReadHistoryCSV(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return items
}

// RealDataBacktestTable runs the backtest on every jira-history file and
// returns the per-dataset results and the pooled one.
func realDataBacktests(t testing.TB, opts BacktestOptions) ([]string, []BacktestResult, BacktestResult) {
	dir := sharedDataDir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "jira-history", "*.csv"))
	if len(files) == 0 {
		t.Skip("no jira-history files")
	}
	sort.Strings(files)
	if only := os.Getenv("COMMITEA_BACKTEST_ONLY"); only != "" {
		files = slices.DeleteFunc(files, func(f string) bool { return !strings.Contains(filepath.Base(f), only) })
	}
	var names []string
	var results []BacktestResult
	for _, f := range files {
		r, err := Backtest(readHistoryFile(t, f), opts)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".csv"))
		results = append(results, r)
	}
	return names, results, PoolBacktests(results)
}

// BenchmarkRealDataBacktest is the real-data backtest report (one
// iteration is the whole replay, so run it with -benchtime=1x; env
// COMMITEA_BACKTEST_TRIALS, _SEED and _ONLY (a file name part) vary it):
//
//	go test ./scheduler -run '^$' -bench RealDataBacktest -benchtime=1x
func BenchmarkRealDataBacktest(t *testing.B) {
	var names []string
	var results []BacktestResult
	var pooled BacktestResult
	opts := BacktestOptions{Trials: 400}
	if v, err := strconv.Atoi(os.Getenv("COMMITEA_BACKTEST_TRIALS")); err == nil {
		opts.Trials = v
	}
	if v, err := strconv.ParseUint(os.Getenv("COMMITEA_BACKTEST_SEED"), 10, 64); err == nil {
		opts.Seed = v
	}
	for t.Loop() {
		names, results, pooled = realDataBacktests(t, opts)
	}
	var b strings.Builder
	writeBacktestTable(&b, append(names, "pooled"), append(results, pooled))
	// Printed, not logged: benchmark logs are cut after ten lines.
	fmt.Print(b.String())
	if pooled.P80Coverage < 0.75 || pooled.P80Coverage > 0.90 {
		t.Errorf("pooled p80 coverage %.3f outside [0.75, 0.90]", pooled.P80Coverage)
	}
	if pooled.P50Coverage < 0.40 || pooled.P50Coverage > 0.60 {
		t.Errorf("pooled p50 coverage %.3f outside [0.40, 0.60]", pooled.P50Coverage)
	}
	if math.Abs(pooled.P80Coverage-0.8) >= math.Abs(pooled.Baseline.P80Coverage-0.8) {
		t.Errorf("p80 coverage %.3f not closer to 0.8 than the baseline's %.3f", pooled.P80Coverage, pooled.Baseline.P80Coverage)
	}
	if pooled.PinballLoss >= pooled.Baseline.PinballLoss {
		t.Errorf("pinball loss %.1f not below the baseline's %.1f", pooled.PinballLoss, pooled.Baseline.PinballLoss)
	}
}

// TestRealDataPriors derives the cold-start priors hard-coded in calibrate.go.
func TestRealDataPriors(t *testing.T) {
	dir := sharedDataDir(t)
	f, err := os.Open(filepath.Join(dir, "jira-estimates", "clean_data_v2.csv"))
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	var logs []float64
	byProject := map[string][]float64{}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		spent, _ := strconv.ParseFloat(rec[col["timespent"]], 64)
		est, _ := strconv.ParseFloat(rec[col["timeestimate"]], 64)
		if spent > 0 && est > 0 {
			l := math.Log(spent / est)
			logs = append(logs, l)
			p := rec[col["project_name"]]
			byProject[p] = append(byProject[p], l)
		}
	}
	var projMedians []float64
	for _, ls := range byProject {
		if len(ls) >= 5 {
			projMedians = append(projMedians, median(ls))
		}
	}
	t.Logf("jira-estimates: n=%d median ln(spent/estimate)=%.3f (x%.2f) MAD-sigma=%.2f; %d projects with >=5: median of medians %.3f",
		len(logs), median(logs), math.Exp(median(logs)), 1.4826*mad(logs), len(projMedians), median(projMedians))

	files, _ := filepath.Glob(filepath.Join(dir, "jira-history", "*.csv"))
	var perPoint []float64
	for _, fn := range files {
		for _, it := range readHistoryFile(t, fn) {
			if it.StoryPoints > 0 && !it.Started.IsZero() {
				h := calendarWorkingHours(Calendar{}, it.Started, it.Resolved)
				if h > 0 {
					perPoint = append(perPoint, math.Log(h/it.StoryPoints))
				}
			}
		}
	}
	t.Logf("jira-history: n=%d median in-progress working hours per story point=%.2f, MAD-sigma of ln=%.2f",
		len(perPoint), math.Exp(median(perPoint)), 1.4826*mad(perPoint))
}

// writeBacktestTable prints one row per history, items then sets.
func writeBacktestTable(w io.Writer, names []string, rs []BacktestResult) {
	for _, kind := range []string{"items", "sets"} {
		fmt.Fprintf(w, "%-10s %7s %6s | %5s %5s %5s %6s %8s | %5s %5s %5s %6s %8s\n", kind, "cutoffs", kind, "p50", "p80", "p90", "width", "pinball", "b.p50", "b.p80", "b.p90", "b.wid", "b.pinb")
		for i, r := range rs {
			s, b := r.BacktestScore, r.Baseline
			if kind == "sets" {
				s, b = r.Sets.BacktestScore, r.Sets.Baseline
			}
			fmt.Fprintf(w, "%-10s %7d %6d | %5.3f %5.3f %5.3f %6.2f %8.1f | %5.3f %5.3f %5.3f %6.2f %8.1f\n", names[i], s.Cutoffs, s.Items,
				s.P50Coverage, s.P80Coverage, s.P90Coverage, s.MedianRelWidth, s.PinballLoss,
				b.P50Coverage, b.P80Coverage, b.P90Coverage, b.MedianRelWidth, b.PinballLoss)
		}
	}
}
