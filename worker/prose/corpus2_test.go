package prose_test

// The corpus's second batch: sentence forms written after the checker
// learned to bind claims, before running them against it, to see how it
// does on phrasings it was not developed on. Labels follow the same
// meanings as the first batch.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

func (p *cProject) sentences2() []corpusSentence {
	rng := rand.New(rand.NewPCG(p.seed, 2424))
	var out []corpusSentence
	add := func(form string, truth bool, why, text string) {
		out = append(out, corpusSentence{text: text, truth: truth, form: "2/" + form, why: why})
	}
	pick := func(n int) int { return rng.IntN(n) }
	var planned []*cIssue
	for _, n := range slices.Sorted(mapsKeys(p.issues)) {
		if is := p.issues[n]; !is.p50.IsZero() {
			planned = append(planned, is)
		}
	}
	wrongDay := func(truth time.Time) dateForm {
		for {
			d := addDays(truth, []int{-2, -1, 1, 2, 4}[pick(5)])
			if pick(2) == 0 {
				d = planned[pick(len(planned))].p50
			}
			if f := p.dateForms(d, rng); !f.covers(truth) {
				return f
			}
		}
	}
	bare := func(f dateForm) string { return strings.TrimPrefix(f.text, "on ") }
	for _, is := range planned {
		right, wrong := p.dateForms(is.p50, rng), wrongDay(is.p50)
		forms := []struct {
			name string
			f    func(d dateForm) string
		}{
			{"issue (title) is expected date", func(d dateForm) string {
				return fmt.Sprintf("#%d (%s) is expected %s.", is.number, is.title, d.text)
			}},
			{"person should wrap up title date", func(d dateForm) string {
				return fmt.Sprintf("%s should wrap up %s %s.", capitalize(is.owner), strings.ToLower(is.title[:1])+is.title[1:], d.text)
			}},
			{"person's next item lands date", func(d dateForm) string {
				return fmt.Sprintf("%s's item #%d lands %s.", capitalize(is.owner), is.number, d.text)
			}},
			{"expect issue date; person is on it", func(d dateForm) string {
				return fmt.Sprintf("Expect #%d %s; %s is on it.", is.number, d.text, is.owner)
			}},
			{"person picked up issue. It should be done date", func(d dateForm) string {
				return fmt.Sprintf("%s picked up #%d. It should be done %s.", capitalize(is.owner), is.number, d.text)
			}},
			{"bullet with p50", func(d dateForm) string {
				return fmt.Sprintf("- %s: #%d %s, p50 %s", is.owner, is.number, is.title, bare(d))
			}},
		}
		f := forms[pick(len(forms))]
		add(f.name, true, "", f.f(right))
		add(f.name, false, "wrong date", f.f(wrong))
	}
	// Two issues of one person in one sentence.
	for _, pp := range p.people {
		if len(pp.now)+len(pp.next) < 2 {
			continue
		}
		all := append(slices.Clone(pp.now), pp.next...)
		a, b := p.issues[all[0]], p.issues[all[1]]
		if date(a.p50).Equal(date(b.p50)) {
			continue
		}
		fa, fb := p.dateForms(a.p50, rng), p.dateForms(b.p50, rng)
		if fa.covers(b.p50) || fb.covers(a.p50) {
			continue
		}
		s := "%s has #%d (%s) and then #%d (%s)."
		add("one person, two issues, two dates", true, "", fmt.Sprintf(s, capitalize(pp.login), a.number, bare(fa), b.number, bare(fb)))
		add("one person, two issues, two dates", false, "dates swapped", fmt.Sprintf(s, capitalize(pp.login), a.number, bare(fb), b.number, bare(fa)))
	}
	for _, m := range p.milestones {
		p50, p80, due := p.dateForms(m.p50, rng), p.dateForms(m.p80, rng), p.dateForms(m.due, rng)
		add("milestone p50, p80, due line", true, "", fmt.Sprintf("%s: p50 %s, p80 %s, due %s.", m.title, bare(p50), bare(p80), bare(due)))
		add("milestone p50, p80, due line", false, "p50 and p80 swapped", fmt.Sprintf("%s: p50 %s, p80 %s, due %s.", m.title, bare(p80), bare(p50), bare(due)))
		add("milestone needs N more issues closed", true, "", fmt.Sprintf("%s still needs %d issues closed.", m.title, m.open))
		add("milestone needs N more issues closed", false, "shifted count", fmt.Sprintf("%s still needs %d issues closed.", m.title, m.open+2))
		add("the milestone has N open and a chance", true, "", fmt.Sprintf("The %s milestone has %d issues open and a %s chance.", m.title, m.open, pct(m.pDue)))
		wrongChance := math.Min(0.99, m.pDue+0.07)
		if math.Round(wrongChance*100) != math.Round(m.pDue*100) {
			add("the milestone has N open and a chance", false, "shifted chance", fmt.Sprintf("The %s milestone has %d issues open and a %s chance.", m.title, m.open, pct(wrongChance)))
		}
		if m.p50.After(m.due) {
			wd := workingDays(m.due, m.p50)
			add("milestone N working days behind", true, "", fmt.Sprintf("%s is %g working days behind.", m.title, wd))
			add("milestone N working days behind", false, "wrong lateness", fmt.Sprintf("%s is %g working days behind.", m.title, wd+3))
		} else {
			add("milestone N working days behind", false, "behind when it is not", fmt.Sprintf("%s is %d working days behind.", m.title, 2+pick(4)))
		}
		if m.drift {
			add("milestone slipped by N since", m.p50Days > 0, map[bool]string{false: "moved earlier, not later"}[m.p50Days > 0],
				fmt.Sprintf("%s slipped by %g working days since %s.", m.title, math.Abs(m.p50Days), p.since.Format("Monday")))
		}
		status := "is on track"
		if atRisk(m) {
			status = "is at risk"
		}
		add("two sentences, pronoun status", true, "", fmt.Sprintf("%s has a %s chance. It %s.", m.title, pct(m.pDue), strings.TrimPrefix(status, "is ")))
		flipped := map[string]string{"is on track": "is at risk", "is at risk": "is on track"}[status]
		add("two sentences, pronoun status", false, "wrong status", fmt.Sprintf("%s has a %s chance. It %s.", m.title, pct(m.pDue), strings.TrimPrefix(flipped, "is ")))
	}
	if len(p.milestones) >= 2 {
		a, b := p.milestones[1], p.milestones[2%len(p.milestones)]
		both := atRisk(a) && atRisk(b)
		add("two milestones both at risk", both, map[bool]string{false: "one is on track"}[both], fmt.Sprintf("%s and %s are both at risk.", a.title, b.title))
		first := p.milestones[0]
		rest := !slices.ContainsFunc(p.milestones[1:], atRisk)
		add("one at risk, everything else on track", atRisk(first) && rest, map[bool]string{false: "another milestone is at risk"}[atRisk(first) && rest],
			fmt.Sprintf("%s is at risk; everything else is on track.", first.title))
	}
	for _, s := range p.stale {
		is := p.issues[s.number]
		add("stale: has not moved in N days; it blocks K", true, "", fmt.Sprintf("%s (#%d) has not moved in %g working days; it blocks %d issues.", is.title, s.number, s.idle, s.count))
		add("stale: has not moved in N days; it blocks K", false, "shifted idle", fmt.Sprintf("%s (#%d) has not moved in %g working days; it blocks %d issues.", is.title, s.number, s.idle+1, s.count))
	}
	add("count of stale blockers", true, "", fmt.Sprintf("There are %s stale blockers.", count(len(p.stale), rng)))
	add("count of stale blockers", false, "wrong count", fmt.Sprintf("There are %s stale blockers.", count(len(p.stale)+2, rng)))
	add("count of people", true, "", fmt.Sprintf("%s people have work planned.", capitalize(count(len(p.people), rng))))
	add("count of people", false, "wrong count", fmt.Sprintf("%s people have work planned.", capitalize(count(len(p.people)+1, rng))))
	return out
}

func mapsKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
