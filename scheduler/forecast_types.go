package scheduler

import "time"

// Input is everything one forecast needs, already read out of the mirror.
// The forecast never looks at anything else, so a hash of Input identifies
// its output.
type Input struct {
	Now         time.Time
	People      []Person
	Milestones  []Milestone
	Issues      []Issue // open and done; done issues only satisfy dependencies
	Calibration Calibration
	// Planned fixes who picks up unassigned open issues (number → login):
	// the choices of the plan the forecast belongs to. Unassigned issues
	// not in it, or planned for someone no longer on the team, are planned
	// around the rest; nil plans all of them afresh. See "One planning
	// rule" in the package doc.
	Planned map[int64]string
}

// PlanQuantum is how finely the instant a forecast starts from is chosen:
// every forecast computed within one hour (UTC) starts at that hour, so a
// what-if and the recompute after it share their "now" (see "One planning
// rule" in the package doc).
const PlanQuantum = time.Hour

// AsOf is the instant a forecast computed at t starts from: t rounded down
// to PlanQuantum, in UTC.
func AsOf(t time.Time) time.Time { return t.UTC().Truncate(PlanQuantum) }

// Options tunes a forecast run. The zero value means 2,000 trials, a seed
// derived from the input, and every core.
type Options struct {
	Trials  int    // default 2,000; at most 100,000
	Seed    uint64 // 0: derived from the input
	Workers int    // 0: runtime.GOMAXPROCS
}

// Forecast is the Monte Carlo schedule's output. Slices are sorted (issues
// by number, milestones by id, load by login) so equal inputs encode to
// equal bytes.
type Forecast struct {
	Now        time.Time           `json:"now"`
	Trials     int                 `json:"trials"`
	Seed       uint64              `json:"seed"`
	Issues     []IssueForecast     `json:"issues"`
	Milestones []MilestoneForecast `json:"milestones"`
	Load       []PersonLoad        `json:"load"`
	// Finish is each scheduled milestone's trials counted by the week they
	// finish in, by milestone id (the milestones with open work only).
	Finish []MilestoneFinish `json:"finish,omitempty"`
}

// MilestoneFinish is a milestone's finish dates over the trials as a
// weekly histogram. The weeks are laid so that one of them ends exactly at
// the due date (at the forecast's start without one), and a trial counts
// in week k when it finishes after From+7k days and on or before
// From+7(k+1) days: the weeks up to the due date then hold exactly the
// trials PDue counts (OnTime), so a chart of the histogram, a cumulative
// curve drawn through it and the headline chance agree. It lives beside
// MilestoneForecast rather than in it so that a MilestoneForecast stays
// comparable with ==.
type MilestoneFinish struct {
	ID     int64 `json:"id"`
	Trials int   `json:"trials"`
	// OnTime counts the trials finishing on or before the due date
	// (PDue = OnTime/Trials before rounding); 0 without a due date.
	OnTime int       `json:"onTime"`
	From   time.Time `json:"from"`
	Weeks  []int     `json:"weeks"`
	// Later counts the trials finishing after the last week: the weeks
	// stop MaxFinishWeeks after the first trial's, so one extreme draw
	// cannot size the histogram (it is stored with every snapshot and
	// drawn on the milestone page).
	Later int `json:"later,omitempty"`
}

// MaxFinishWeeks bounds MilestoneFinish.Weeks: twenty years of weeks.
const MaxFinishWeeks = 1040

// Week is how long one bin of MilestoneFinish.Weeks is.
const Week = 7 * 24 * time.Hour

// Planned is the plan's choice of person for each unassigned issue (number
// → login), as Input.Planned takes it: what a forecast computed afresh
// decided, for the forecasts of the same plan to keep.
func (f Forecast) Planned() map[int64]string {
	out := map[int64]string{}
	for _, is := range f.Issues {
		if is.Unassigned {
			out[is.Number] = is.Assignee
		}
	}
	return out
}

// IssueForecast is one open issue's finish-date range.
type IssueForecast struct {
	Number int64     `json:"number"`
	P10    time.Time `json:"p10"`
	P50    time.Time `json:"p50"`
	P80    time.Time `json:"p80"`
	// CriticalFreq is the share of trials in which the issue lay on its
	// milestone's critical chain.
	CriticalFreq float64 `json:"criticalFreq"`
	Assignee     string  `json:"assignee,omitempty"` // who the schedule gave it to most often
	Unassigned   bool    `json:"unassigned,omitempty"`
	// Unschedulable is "cycle", "missing_dependency" or "too_large" when the
	// issue could not be scheduled; its dates are then zero.
	Unschedulable string `json:"unschedulable,omitempty"`
}

// MilestoneForecast is one milestone's finish-date range against its due date.
type MilestoneForecast struct {
	ID    int64     `json:"id"`
	Title string    `json:"title"`
	Due   time.Time `json:"due,omitzero"`
	Hard  bool      `json:"hard,omitempty"`
	Open  int       `json:"open"`
	P10   time.Time `json:"p10"`
	P50   time.Time `json:"p50"`
	P80   time.Time `json:"p80"`
	// PDue is the probability of finishing on or before the due date; 0 when
	// there is no due date.
	PDue float64 `json:"pDue"`
	// SlackDays is due − p80 in whole working days between their dates
	// (negative when late).
	SlackDays float64 `json:"slackDays"`
	// Quantiles is the finish-date distribution as a compact CDF: the
	// finish date at probability 0, 5%, 10%, … 100% (21 points), so a
	// reader can draw the whole S-curve. Zero when nothing is left. An
	// array rather than a slice keeps MilestoneForecast comparable with ==.
	Quantiles [MilestoneQuantiles]time.Time `json:"quantiles,omitzero"`
}

// MilestoneQuantiles is the number of points of MilestoneForecast.Quantiles.
const MilestoneQuantiles = 21

// PersonLoad is one person's scheduled work, in focused hours, median over
// trials.
type PersonLoad struct {
	Login       string    `json:"login"`
	Hours       float64   `json:"hours"`
	Issues      int       `json:"issues"`
	FreeFromP50 time.Time `json:"freeFromP50"`
}
