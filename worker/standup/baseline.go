package standup

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/commitea/commitea/scheduler"
)

// A baseline is stored with every standup and holds every open issue of
// every milestone, so its encoding is compact: issue numbers as one array
// and their estimates as one string, a letter per issue.

// sizeLetters maps estimates to the letter stored for them; '-' is none.
var sizeLetters = map[scheduler.Size]byte{"": '-', scheduler.SizeXS: 'x', scheduler.SizeS: 's',
	scheduler.SizeM: 'm', scheduler.SizeL: 'l', scheduler.SizeXL: 'X'}

func sizeOfLetter(b byte) scheduler.Size {
	for s, l := range sizeLetters {
		if l == b {
			return s
		}
	}
	return ""
}

type baselineMilestoneJSON struct {
	ID    int64     `json:"id"`
	P50   time.Time `json:"p50"`
	P80   time.Time `json:"p80"`
	Open  []int64   `json:"open"`
	Sizes string    `json:"sizes"`
}

// MarshalJSON writes the compact form.
func (m BaselineMilestone) MarshalJSON() ([]byte, error) {
	out := baselineMilestoneJSON{ID: m.ID, P50: m.P50, P80: m.P80, Open: make([]int64, len(m.Open))}
	sizes := make([]byte, len(m.Open))
	for i, is := range m.Open {
		out.Open[i] = is.N
		l, ok := sizeLetters[is.S]
		if !ok {
			l = '-'
		}
		sizes[i] = l
	}
	out.Sizes = string(sizes)
	return json.Marshal(out)
}

// UnmarshalJSON reads the compact form.
func (m *BaselineMilestone) UnmarshalJSON(b []byte) error {
	var in baselineMilestoneJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	if len(in.Sizes) != len(in.Open) {
		return fmt.Errorf("baseline of milestone %d: %d issues but %d sizes", in.ID, len(in.Open), len(in.Sizes))
	}
	*m = BaselineMilestone{ID: in.ID, P50: in.P50, P80: in.P80, Open: make([]BaselineIssue, len(in.Open))}
	for i, n := range in.Open {
		m.Open[i] = BaselineIssue{N: n, S: sizeOfLetter(in.Sizes[i])}
	}
	return nil
}
