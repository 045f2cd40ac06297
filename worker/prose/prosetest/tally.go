// Package prosetest scores the prose checker on a corpus of sentences
// labelled true or false by how they were made, and holds it to the bar
// issue #18 set: no false sentence accepted, at most 2% of true ones
// refused.
package prosetest

import "testing"

// Tally counts the checker's verdicts on labelled sentences.
type Tally struct {
	TrueAccepted, TrueRefused, FalseRefused, FalseAccepted int
}

// logFirst is how many misjudged sentences of each kind are logged.
const logFirst = 10

// Add counts one sentence: truth is its label, err the checker's verdict
// (nil: accepted). label says where it comes from, for the log.
func (c *Tally) Add(tb testing.TB, label string, truth bool, text string, err error) {
	tb.Helper()
	switch {
	case truth && err == nil:
		c.TrueAccepted++
	case truth:
		c.TrueRefused++
		if c.TrueRefused <= logFirst {
			tb.Logf("true sentence refused (%s): %q: %v", label, text, err)
		}
	case err != nil:
		c.FalseRefused++
	default:
		c.FalseAccepted++
		if c.FalseAccepted <= logFirst {
			tb.Logf("false sentence accepted (%s): %q", label, text)
		}
	}
}

// Report logs the figures under name and fails tb when the checker misses
// the bar.
func (c *Tally) Report(tb testing.TB, name string) {
	tb.Helper()
	trues := c.TrueAccepted + c.TrueRefused
	precision := float64(c.TrueAccepted) / float64(max(c.TrueAccepted+c.FalseAccepted, 1))
	recall := float64(c.TrueAccepted) / float64(max(trues, 1))
	tb.Logf("%s: %d true (%d accepted, %d refused), %d false (%d refused, %d accepted); precision %.4f, recall %.4f",
		name, trues, c.TrueAccepted, c.TrueRefused, c.FalseRefused+c.FalseAccepted, c.FalseRefused, c.FalseAccepted, precision, recall)
	if c.FalseAccepted > 0 {
		tb.Errorf("%d false sentences accepted, want none", c.FalseAccepted)
	}
	if float64(c.TrueRefused) > 0.02*float64(trues) {
		tb.Errorf("%d of %d true sentences refused, want at most 2%%", c.TrueRefused, trues)
	}
}
