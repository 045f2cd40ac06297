package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeHistory writes a small generated history in CommiTea's own layout:
// two issues a week for a year, each resolved 3 to 20 days after creation.
func writeHistory(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("id,created,started,resolved,estimate,assignee,labels\n")
	start := time.Date(2025, 1, 6, 9, 0, 0, 0, time.UTC)
	sizes := []string{"est/s", "est/m", "3", "5h", ""}
	for i := range 104 {
		created := start.Add(time.Duration(i) * 84 * time.Hour)
		days := 3 + (i*7)%18
		resolved := created.Add(time.Duration(days) * 24 * time.Hour)
		startedAt := created.Add(time.Duration(days/2) * 24 * time.Hour)
		fmt.Fprintf(&b, "T-%d,%s,%s,%s,%s,%s,%s\n", i, created.Format(time.RFC3339), startedAt.Format("2006-01-02 15:04:05"),
			resolved.Format(time.RFC3339), sizes[i%len(sizes)], []string{"ann", "bob", ""}[i%3], "area/ui;p/1")
	}
	path := filepath.Join(t.TempDir(), "history.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestBacktestCommandJSON(t *testing.T) {
	path := writeHistory(t)
	out, _, err := run(t, map[string]string{}, "backtest", "--csv", path, "--json", "--trials", "200", "--every", "21d")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	for _, k := range []string{"cutoffs", "p50Coverage", "p80Coverage", "p90Coverage", "medianRelWidth", "pinballLoss", "baseline"} {
		if _, ok := got[k]; !ok {
			t.Errorf("JSON lacks %q:\n%s", k, out)
		}
	}
	base, _ := got["baseline"].(map[string]any)
	if _, ok := base["p80Coverage"]; !ok {
		t.Errorf("baseline lacks p80Coverage:\n%s", out)
	}
	if got["cutoffs"].(float64) < 5 {
		t.Errorf("only %v cut-offs", got["cutoffs"])
	}
	// Sets carry the same fields as items; items counts sets.
	sets, _ := got["sets"].(map[string]any)
	for _, k := range []string{"cutoffs", "items", "p50Coverage", "p80Coverage", "p90Coverage", "medianRelWidth", "pinballLoss", "baseline"} {
		if _, ok := sets[k]; !ok {
			t.Errorf("sets lack %q:\n%s", k, out)
		}
	}
	if n, _ := sets["items"].(float64); n < 3 || n > got["cutoffs"].(float64) {
		t.Errorf("%v sets over %v cut-offs", sets["items"], got["cutoffs"])
	}
	setBase, _ := sets["baseline"].(map[string]any)
	if _, ok := setBase["pinballLoss"]; !ok {
		t.Errorf("sets' baseline lacks pinballLoss:\n%s", out)
	}
	// Conditioned on the export: items and sets, the same fields, on the
	// same cut-offs and outcomes.
	cond, _ := got["conditioned"].(map[string]any)
	for _, part := range []string{"items", "sets"} {
		score, _ := cond[part].(map[string]any)
		for _, k := range []string{"cutoffs", "items", "p50Coverage", "p80Coverage", "p90Coverage", "medianRelWidth", "pinballLoss", "baseline"} {
			if _, ok := score[k]; !ok {
				t.Errorf("conditioned %s lack %q:\n%s", part, k, out)
			}
		}
		if b, _ := score["baseline"].(map[string]any); b["p80Coverage"] == nil {
			t.Errorf("conditioned %s' baseline lacks p80Coverage:\n%s", part, out)
		}
	}
	if ci, _ := cond["items"].(map[string]any); ci["items"] != got["items"] || ci["cutoffs"] != got["cutoffs"] {
		t.Errorf("conditioned items score %v pairs over %v cut-offs, the plain score %v over %v", ci["items"], ci["cutoffs"], got["items"], got["cutoffs"])
	}
	if cs, _ := cond["sets"].(map[string]any); cs["items"] != sets["items"] {
		t.Errorf("conditioned sets score %v sets, the plain score %v", cs["items"], sets["items"])
	}
}

func TestBacktestCommandTable(t *testing.T) {
	path := writeHistory(t)
	out, _, err := run(t, map[string]string{}, "backtest", "--csv", path, "--trials", "100")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"calibrated schedule", "throughput baseline", "p80", "sets: calibrated", "sets: baseline",
		"conditioned on the export", "export-cond: calibrated", "export-cond: baseline", "export-cond sets: calib.", "export-cond sets: base."} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestBacktestCommandErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"backtest"}, "--csv FILE is required"},
		{[]string{"backtest", "--csv", "x.csv", "--every", "soon"}, "invalid duration"},
		{[]string{"backtest", "--csv", filepath.Join(t.TempDir(), "missing.csv")}, "no such file"},
	} {
		_, _, err := run(t, map[string]string{}, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestBacktestHelpDocumentsColumns(t *testing.T) {
	_, stderr, err := run(t, map[string]string{}, "backtest", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"created", "resolved", "estimate", "assignee", "labels", "Creation_Date", "Story_Point", "\"conditioned\"", "newest resolution"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}
