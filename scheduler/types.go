package scheduler

import (
	"math"
	"strings"
	"time"
)

// State is an issue's lifecycle state, inferred and never stored in Gitea.
type State string

// The five lifecycle states, in the order an issue normally moves through them.
const (
	Diagnosis State = "diagnosis"
	Triage    State = "triage"
	Steeping  State = "steeping"
	InReview  State = "in_review"
	Done      State = "done"
)

// Size is an estimate label's size: the part after "est/".
type Size string

// The estimate sizes CommiTea knows, smallest first.
const (
	SizeXS Size = "xs"
	SizeS  Size = "s"
	SizeM  Size = "m"
	SizeL  Size = "l"
	SizeXL Size = "xl"
)

// NominalHours is the focused effort each size stands for.
func (s Size) NominalHours() float64 {
	switch s {
	case SizeXS:
		return 1
	case SizeS:
		return 3
	case SizeM:
		return 8
	case SizeL:
		return 20
	case SizeXL:
		return 40
	}
	return 0
}

// Valid reports whether s is one of the five known sizes.
func (s Size) Valid() bool { return s.NominalHours() > 0 }

// DefaultPriority applies when an issue carries no p/* label ("normal").
const DefaultPriority = 2

// ParseLabels reads CommiTea's label namespaces, case-insensitively: the
// estimate (est/*), the priority (p/0..p/3, DefaultPriority when absent) and
// whether deadline/hard is present. Unknown labels are ignored.
func ParseLabels(labels []string) (size Size, priority int, hard bool) {
	priority = DefaultPriority
	for _, l := range labels {
		l = strings.ToLower(strings.TrimSpace(l))
		switch {
		case strings.HasPrefix(l, "est/"):
			if s := Size(strings.TrimPrefix(l, "est/")); s.Valid() {
				size = s
			}
		case len(l) == 3 && strings.HasPrefix(l, "p/") && l[2] >= '0' && l[2] <= '3':
			priority = int(l[2] - '0')
		case l == "deadline/hard":
			hard = true
		}
	}
	return size, priority, hard
}

// Calendar says when one person works. The zero Calendar means the default:
// 6 hours of focused work on Monday to Friday, UTC, no holidays.
type Calendar struct {
	HoursPerDay float64
	// WorkingDays marks the weekdays worked, indexed by time.Weekday.
	WorkingDays [7]bool
	Location    *time.Location
	// Holidays and TimeOff are local dates (year, month, day) not worked.
	Holidays []time.Time
	TimeOff  []DateRange
}

// DateRange is an inclusive range of local dates.
type DateRange struct{ From, To time.Time }

// Person is someone who can take work.
type Person struct {
	Login    string
	Calendar Calendar
}

// Milestone is the engine's view of a milestone.
type Milestone struct {
	ID     int64
	Title  string
	Due    time.Time // zero when the milestone has no due date
	Hard   bool      // the description holds the line "deadline: hard"
	Closed bool
}

// Issue is the engine's view of one issue: what the forecast needs, already
// read out of labels and the lifecycle.
type Issue struct {
	Number       int64
	Title        string
	State        State
	Discarded    bool // done through a discard label: left out of calibration
	Estimate     Size // empty when missing
	Priority     int  // 0 (urgent) .. 3 (low)
	HardDeadline bool // carries deadline/hard
	Milestone    int64
	Assignee     string // first assignee, empty when unassigned
	Labels       []string
	DependsOn    []int64
	// SpentHours is effort already spent on a steeping or in-review issue;
	// the forecast conditions its remaining effort on it.
	SpentHours float64
	// DrawKey keys the issue's random draws when set; 0 keys them by
	// Number. A proposed issue carries its ProposalDrawKey, and keeps it
	// once filed, so filing it does not give it fresh draws.
	DrawKey int64
}

// Bias is a calibrated multiplier for one label or person, with the number
// of samples behind it.
type Bias struct {
	Key        string  `json:"key"`
	Multiplier float64 `json:"multiplier"`
	N          int     `json:"n"`
}

// Calibration is the fitted effort model: ln(actual/nominal) =
// ln(GlobalMultiplier) + ln(label bias) + ln(person bias) + e, e ~ N(0, Sigma²).
type Calibration struct {
	N int `json:"n"`
	// Implausible counts the done issues left out as closed too fast to
	// have been work (PlausibleSample).
	Implausible      int     `json:"implausible,omitempty"`
	ColdStart        bool    `json:"coldStart"`
	GlobalMultiplier float64 `json:"globalMultiplier"`
	Sigma            float64 `json:"sigma"`
	// SharedSigma is the part of Sigma that every issue of a trial shares
	// (SharedSpread): the trial's draws are correlated by
	// (SharedSigma/Sigma)² through their normal scores (see copula), so a
	// milestone's issues run slow or fast together as a team's do, while
	// every issue keeps its own distribution; 0 draws them independently.
	SharedSigma  float64 `json:"sharedSigma,omitempty"`
	ByLabelBias  []Bias  `json:"byLabelBias"`
	ByPersonBias []Bias  `json:"byPersonBias"`
}

// EffortParams returns the lognormal parameters (mu, sigma of ln hours) of
// an issue's total effort.
func (c Calibration) EffortParams(nominalHours float64, labels []string, person string) (mu, sigma float64) {
	g := c.GlobalMultiplier
	if g <= 0 {
		g = 1
	}
	mu = math.Log(nominalHours * g)
	for _, b := range c.ByLabelBias {
		for _, l := range labels {
			if strings.EqualFold(l, b.Key) {
				mu += math.Log(b.Multiplier)
			}
		}
	}
	for _, b := range c.ByPersonBias {
		if person != "" && b.Key == person {
			mu += math.Log(b.Multiplier)
		}
	}
	sigma = c.Sigma
	if sigma <= 0 {
		sigma = 0.6
	}
	return mu, sigma
}
