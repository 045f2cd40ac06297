package prose_test

import (
	"testing"

	"github.com/commitea/commitea/worker/prose"
	"github.com/commitea/commitea/worker/prose/prosetest"
)

// corpusFacts are the facts the checker gets for a corpus project: the
// report-shaped data, the standup's day.
func corpusFacts(p *cProject) (*prose.Facts, error) {
	f, err := prose.FactsOf(p.loc, p.data())
	if err != nil {
		return nil, err
	}
	f.SetToday(p.today)
	f.AddNames(p.names())
	return f, nil
}

// facts are the regression case's data as the checker gets them.
func (rc regressionCase) facts(t *testing.T) *prose.Facts {
	t.Helper()
	f, err := prose.FactsOf(rc.loc, rc.data)
	if err != nil {
		t.Fatal(err)
	}
	f.SetToday(rc.today)
	f.AddNames(prose.Names{Milestones: rc.names})
	return f
}

// TestCorpus runs the checker over every sentence of the corpus, the
// regression cases included, and reports how many true ones it accepts and
// false ones it refuses.
func TestCorpus(t *testing.T) {
	ps, ss := corpus()
	var tally prosetest.Tally
	for i, p := range ps {
		f, err := corpusFacts(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss[i] {
			tally.Add(t, s.form+"; "+s.why, s.truth, s.text, prose.Check(s.text, f))
		}
	}
	for _, rc := range regressionCases() {
		f := rc.facts(t)
		for _, s := range rc.texts {
			tally.Add(t, "regression: "+rc.name, s.truth, s.text, prose.Check(s.text, f))
		}
	}
	tally.Report(t, "corpus")
}

// TestRegressionCases are the failures issue #18 named, each as it was
// found.
func TestRegressionCases(t *testing.T) {
	for _, rc := range regressionCases() {
		f := rc.facts(t)
		for _, s := range rc.texts {
			err := prose.Check(s.text, f)
			if s.truth && err != nil {
				t.Errorf("%s: %q refused: %v", rc.name, s.text, err)
			}
			if !s.truth && err == nil {
				t.Errorf("%s: %q accepted (%s)", rc.name, s.text, s.why)
			}
		}
	}
}
