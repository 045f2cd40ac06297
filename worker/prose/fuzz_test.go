package prose

import (
	"errors"
	"testing"
	"time"
)

// FuzzCheck: the checker reads model-written text, which anyone who can
// put words in an issue can steer; no text may panic it, and a refusal is
// always an *UngroundedError naming at least one problem.
func FuzzCheck(f *testing.F) {
	data := map[string]any{
		"day": "2026-12-01", "name": "v1.0", "at": time.Date(2026, 12, 14, 23, 30, 0, 0, time.UTC),
		"moved": 2.46, "share": 0.853, "refs": []int64{12, 1500}, "label": "dev03", "clock": "09:00",
		"issues": []map[string]any{{"number": 12, "title": "Flaky login", "p85": "2026-12-18", "assignee": "ann"}},
	}
	facts, err := FactsOf(time.UTC, data)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"#12 (Flaky login) lands by 18 Dec at 85%; ann has it.",
		"v1.0 slipped 2.5 working days to 2026-12-14.",
		"85.3% of trials finish by 15 Dec; #1500 moved 2.46 days.",
		"Nothing is late. 09:00 standup as usual.",
		"#99999999999999999999 on 31/02/2026 at 25:61 — 1e308% ½ ⅞",
		"\x00\xff\xfe", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		err := Check(text, facts)
		if err == nil {
			return
		}
		var ue *UngroundedError
		if !errors.As(err, &ue) || len(ue.Problems) == 0 {
			t.Fatalf("Check(%q) = %v, want an *UngroundedError with problems", text, err)
		}
		_ = facts.Missing(text, []Ref{{Kind: KindIssue, Number: 12}})
	})
}
