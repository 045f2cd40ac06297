package prose_test

import (
	"testing"

	"github.com/commitea/commitea/worker/prose"
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

// TestCorpus runs the checker over every sentence of the corpus and
// reports how many true ones it accepts and false ones it refuses.
func TestCorpus(t *testing.T) {
	ps, ss := corpus()
	var trueOK, trueRefused, falseRefused, falseAccepted int
	for i, p := range ps {
		f, err := corpusFacts(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss[i] {
			err := prose.Check(s.text, f)
			switch {
			case s.truth && err == nil:
				trueOK++
			case s.truth:
				trueRefused++
				if trueRefused <= 10 {
					t.Logf("true sentence refused (%s): %q: %v", s.form, s.text, err)
				}
			case err != nil:
				falseRefused++
			default:
				falseAccepted++
				if falseAccepted <= 10 {
					t.Logf("false sentence accepted (%s; %s): %q", s.form, s.why, s.text)
				}
			}
		}
	}
	for _, rc := range regressionCases() {
		f, err := prose.FactsOf(rc.loc, rc.data)
		if err != nil {
			t.Fatal(err)
		}
		f.SetToday(rc.today)
		f.AddNames(prose.Names{Milestones: rc.names})
		for _, s := range rc.texts {
			err := prose.Check(s.text, f)
			switch {
			case s.truth && err == nil:
				trueOK++
			case s.truth:
				trueRefused++
				t.Logf("regression (%s): true sentence refused: %q: %v", rc.name, s.text, err)
			case err != nil:
				falseRefused++
			default:
				falseAccepted++
				t.Logf("regression (%s): false sentence accepted (%s): %q", rc.name, s.why, s.text)
			}
		}
	}
	accepted := trueOK + falseAccepted
	precision := float64(trueOK) / float64(max(accepted, 1))
	recall := float64(trueOK) / float64(max(trueOK+trueRefused, 1))
	t.Logf("corpus: %d true (%d accepted, %d refused), %d false (%d refused, %d accepted); precision %.4f, recall %.4f",
		trueOK+trueRefused, trueOK, trueRefused, falseRefused+falseAccepted, falseRefused, falseAccepted, precision, recall)
	// The bar: no false sentence accepted, at most 2% of true ones
	// refused.
	if falseAccepted > 0 {
		t.Errorf("%d false sentences accepted, want none", falseAccepted)
	}
	if float64(trueRefused) > 0.02*float64(trueOK+trueRefused) {
		t.Errorf("%d of %d true sentences refused, want at most 2%%", trueRefused, trueOK+trueRefused)
	}
}

// TestRegressionCases are the failures issue #18 named, each as it was
// found.
func TestRegressionCases(t *testing.T) {
	for _, rc := range regressionCases() {
		f, err := prose.FactsOf(rc.loc, rc.data)
		if err != nil {
			t.Fatal(err)
		}
		f.SetToday(rc.today)
		f.AddNames(prose.Names{Milestones: rc.names})
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
