package standup

// The corpus's third batch, at the standup's own level: sentences a model
// might write about generated reports (Build over randomInput, the facts
// exactly as Text checks them: the report and Known), true and made false
// the same ways as the first two batches. Written after the checker, run
// once before any change for its first figures.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/commitea/commitea/worker/prose"
	"github.com/commitea/commitea/worker/prose/prosetest"
)

type reportSentence struct {
	text  string
	truth bool
	form  string
}

func reportSentences(r Report, known Known, seed uint64) []reportSentence {
	rng := rand.New(rand.NewPCG(seed, 333))
	var out []reportSentence
	add := func(form string, truth bool, text string) { out = append(out, reportSentence{text, truth, form}) }
	day, _ := time.Parse(time.DateOnly, r.Day)
	dateText := func(iso string) string {
		d, err := time.Parse(time.DateOnly, iso)
		if err != nil {
			return iso
		}
		switch n := int(d.Sub(day).Hours() / 24); {
		case n == 1 && rng.IntN(3) == 0:
			return "tomorrow"
		case n > 1 && n <= 6 && rng.IntN(3) == 0:
			return "on " + d.Weekday().String()
		}
		switch rng.IntN(3) {
		case 0:
			return "on " + iso
		case 1:
			return "on " + d.Format("Jan 2")
		}
		return "on " + d.Format("2 January")
	}
	shift := func(iso string, days int) string {
		d, err := time.Parse(time.DateOnly, iso)
		if err != nil {
			return iso
		}
		return d.AddDate(0, 0, days).Format(time.DateOnly)
	}
	pc := func(x float64) string { return fmt.Sprintf("%d%%", int(math.Round(x*100))) }
	// Every dated item of the plan, to take a wrong date from.
	var dated []Item
	for _, p := range r.Plan {
		for _, it := range append(append([]Item{}, p.Now...), p.Next...) {
			if it.P50 != "" {
				dated = append(dated, it)
			}
		}
	}
	for i, m := range r.AtRisk {
		add("at risk: chance of making due", true, fmt.Sprintf("%s is at risk: %s chance of making %s.", m.Title, pc(m.Chance), m.Due))
		wrong := m.Chance + 0.1
		if i+1 < len(r.AtRisk) && math.Round(r.AtRisk[i+1].Chance*100) != math.Round(m.Chance*100) {
			wrong = r.AtRisk[i+1].Chance
		}
		if wrong < 1 {
			add("at risk: chance of making due", false, fmt.Sprintf("%s is at risk: %s chance of making %s.", m.Title, pc(wrong), m.Due))
		}
		if m.P50 != m.P80 {
			add("lands p50 and p80", true, fmt.Sprintf("%s now lands on %s at p50 and on %s at p80.", m.Title, m.P50, m.P80))
			add("lands p50 and p80", false, fmt.Sprintf("%s now lands on %s at p50 and on %s at p80.", m.Title, m.P80, m.P50))
		}
		add("open issues", true, fmt.Sprintf("There are %d open issues in %s.", m.Open, m.Title))
		add("open issues", false, fmt.Sprintf("There are %d open issues in %s.", m.Open+2, m.Title))
		add("status of an at-risk milestone", true, fmt.Sprintf("%s is at risk.", m.Title))
		add("status of an at-risk milestone", false, fmt.Sprintf("%s is on track.", m.Title))
		for _, c := range m.Chain {
			add("critical chain share", true, fmt.Sprintf("#%d (%s) is on the critical chain of %s in %s of trials.", c.Number, c.Title, m.Title, pc(c.Share)))
			add("critical chain share", false, fmt.Sprintf("#%d (%s) is on the critical chain of %s in %s of trials.", c.Number, c.Title, m.Title, pc(math.Min(c.Share+0.1, 0.99))))
		}
	}
	atRisk := map[int64]bool{}
	for _, m := range r.AtRisk {
		atRisk[m.Milestone] = true
	}
	for _, k := range known.Milestones {
		if atRisk[k.Milestone] || k.Due == "" {
			continue
		}
		onTrack := k.SlackDays >= 0 && k.PDue >= 0.8
		add("status of another milestone", onTrack, fmt.Sprintf("%s is on track, with a %s chance.", k.Title, pc(k.PDue)))
	}
	for _, p := range r.Plan {
		for _, it := range p.Now {
			if it.P50 == "" {
				continue
			}
			add("person on issue, expected", true, fmt.Sprintf("%s is on #%d (%s), expected %s.", p.Login, it.Number, it.Title, dateText(it.P50)))
			wrong := shift(it.P50, []int{-2, 1, 3}[rng.IntN(3)])
			for _, o := range dated {
				if o.Number != it.Number && o.P50 != it.P50 && rng.IntN(2) == 0 {
					wrong = o.P50
					break
				}
			}
			add("person on issue, expected", false, fmt.Sprintf("%s is on #%d (%s), expected on %s.", p.Login, it.Number, it.Title, wrong))
		}
		for _, it := range p.Next {
			if it.P50 == "" {
				continue
			}
			add("next for person, p50", true, fmt.Sprintf("Next for %s: #%d, p50 %s.", p.Login, it.Number, it.P50))
			add("next for person, p50", false, fmt.Sprintf("Next for %s: #%d, p50 %s.", p.Login, it.Number, shift(it.P50, 2)))
		}
		if p.HoursPerWeek > 0 {
			add("capacity", true, fmt.Sprintf("%s works %s h a week and has %s weeks of work.", p.Login, num(p.HoursPerWeek), num(p.LoadWeeks)))
			add("capacity", false, fmt.Sprintf("%s works %s h a week and has %s weeks of work.", p.Login, num(p.HoursPerWeek+5), num(p.LoadWeeks)))
		}
	}
	for _, s := range r.StaleBlockers {
		add("stale blocker", true, fmt.Sprintf("#%d (%s) has been idle %s working days; it blocks %d issues.", s.Number, s.Title, num(s.IdleDays), s.BlocksCount))
		add("stale blocker", false, fmt.Sprintf("#%d (%s) has been idle %s working days; it blocks %d issues.", s.Number, s.Title, num(s.IdleDays+2), s.BlocksCount))
	}
	for _, d := range r.Drift {
		if d.P50Days == 0 {
			continue
		}
		verb := "slipped"
		if d.P50Days < 0 {
			verb = "moved earlier by"
		}
		add("drift", true, fmt.Sprintf("%s %s %s working days to %s.", d.Title, verb, num(math.Abs(d.P50Days)), d.P50After))
		add("drift", false, fmt.Sprintf("%s %s %s working days to %s.", d.Title, verb, num(math.Abs(d.P50Days)+1), d.P50After))
	}
	add("weekday", true, fmt.Sprintf("Good morning, it's %s.", r.Weekday))
	everythingOK := len(r.AtRisk) == 0
	for _, k := range known.Milestones {
		if k.Due != "" && (k.SlackDays < 0 || k.PDue < 0.8) {
			everythingOK = false
		}
	}
	add("all on track", everythingOK, "All work is on track.")
	return out
}

// TestReportCorpus runs the third batch: sentences about generated
// reports, checked as Text checks a standup's prose (without completeness).
func TestReportCorpus(t *testing.T) {
	var tally prosetest.Tally
	for seed := uint64(1); seed <= 40; seed++ {
		in := randomInput(seed)
		r := Build(in)
		known := KnownOf(in)
		f, err := Facts(r, known, in.Location)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range reportSentences(r, known, seed) {
			tally.Add(t, s.form, s.truth, s.text, prose.Check(s.text, f))
		}
	}
	tally.Report(t, "report corpus (40 generated reports)")
}
