package tools

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/commitea/commitea/scheduler"
)

// The calibration view: the fitted effort model, biases furthest from 1
// first.

// CalibrationView is the calibration payload.
type CalibrationView struct {
	N                int              `json:"n"`
	ColdStart        bool             `json:"coldStart"`
	GlobalMultiplier float64          `json:"globalMultiplier"`
	Sigma            float64          `json:"sigma"`
	ByLabelBias      []scheduler.Bias `json:"byLabelBias"`
	ByPersonBias     []scheduler.Bias `json:"byPersonBias"`
	// Backtest is how often this project's own past forecasts came true,
	// against a throughput-only baseline; absent until the first backtest.
	Backtest *BacktestCoverage `json:"backtest,omitempty"`
	Meta
}

// BacktestCoverage is the calibration view's summary of the backtest.
type BacktestCoverage struct {
	ComputedAt      string  `json:"computedAt"`
	Current         bool    `json:"current"`
	Cutoffs         int     `json:"cutoffs"`
	Items           int     `json:"items"`
	P50Coverage     float64 `json:"p50Coverage"`
	P80Coverage     float64 `json:"p80Coverage"`
	P90Coverage     float64 `json:"p90Coverage"`
	PinballLoss     float64 `json:"pinballLoss"`
	BaselineP80     float64 `json:"baselineP80Coverage"`
	BaselinePinball float64 `json:"baselinePinballLoss"`
	// Replay is "live" when the figures replay the forecast users see
	// (people, calendars, priorities, dependencies) on the project as it
	// stood at each cut-off, "people-less" for a backtest older than that.
	Replay string `json:"replay"`
	// Milestones is the track record of the milestones closed since the
	// first cut-off; absent when none has.
	Milestones *MilestoneTrackRecord `json:"milestones,omitempty"`
}

// MilestoneTrackRecord is how the milestone forecasts fared: each closed
// milestone judged once, on the forecast made at least two weeks before
// its work was done, and the coverage over every cut-off.
type MilestoneTrackRecord struct {
	Judged          int     `json:"judged"`
	P80Kept         int     `json:"p80Kept"`
	P90Kept         int     `json:"p90Kept"`
	P80Coverage     float64 `json:"p80Coverage"`
	PinballLoss     float64 `json:"pinballLoss"`
	BaselineP80     float64 `json:"baselineP80Coverage"`
	BaselinePinball float64 `json:"baselinePinballLoss"`
}

func (q *query) calibration() (Answer[any], error) {
	c := q.v.Data.Calibration
	byFar := func(bs []scheduler.Bias, keep func(string) bool) []scheduler.Bias {
		var out []scheduler.Bias
		for _, b := range bs {
			if keep(b.Key) {
				out = append(out, b)
			}
		}
		slices.SortFunc(out, func(a, b scheduler.Bias) int {
			return cmp.Or(-cmp.Compare(math.Abs(math.Log(a.Multiplier)), math.Abs(math.Log(b.Multiplier))), strings.Compare(a.Key, b.Key))
		})
		return out
	}
	labels := byFar(c.ByLabelBias, func(k string) bool { return q.f.Label == "" || strings.EqualFold(k, q.f.Label) })
	people := byFar(c.ByPersonBias, func(k string) bool { return q.f.Assignee == "" || strings.EqualFold(k, q.f.Assignee) })
	out := CalibrationView{N: c.N, ColdStart: c.ColdStart, GlobalMultiplier: round2(c.GlobalMultiplier), Sigma: round2(c.Sigma),
		ByLabelBias:  List(q.caps, labels, "byLabelBias", "byLabelBias: no label has enough finished samples for a bias"+q.filterWords()),
		ByPersonBias: List(q.caps, people, "byPersonBias", "byPersonBias: no person has enough finished samples for a bias"+q.filterWords()),
	}
	if b := q.v.Data.Backtest; b != nil {
		out.Backtest = &BacktestCoverage{
			ComputedAt: b.ComputedAt.UTC().Format(time.RFC3339), Current: b.Current, Cutoffs: b.Cutoffs, Items: b.Items,
			P50Coverage: round2(b.P50Coverage), P80Coverage: round2(b.P80Coverage), P90Coverage: round2(b.P90Coverage),
			PinballLoss: round2(b.PinballLoss), BaselineP80: round2(b.Baseline.P80Coverage), BaselinePinball: round2(b.Baseline.PinballLoss),
			Replay: "people-less",
		}
		if l := b.Live; l != nil && l.Items.Items > 0 {
			f, base := l.Items.BacktestScore, l.Items.Baseline
			out.Backtest.Replay, out.Backtest.Cutoffs, out.Backtest.Items = "live", f.Cutoffs, f.Items
			out.Backtest.P50Coverage, out.Backtest.P80Coverage, out.Backtest.P90Coverage = round2(f.P50Coverage), round2(f.P80Coverage), round2(f.P90Coverage)
			out.Backtest.PinballLoss, out.Backtest.BaselineP80, out.Backtest.BaselinePinball = round2(f.PinballLoss), round2(base.P80Coverage), round2(base.PinballLoss)
			if len(l.Record) > 0 {
				m := l.Milestones
				out.Backtest.Milestones = &MilestoneTrackRecord{Judged: len(l.Record), P80Kept: l.P80Kept, P90Kept: l.P90Kept,
					P80Coverage: round2(m.P80Coverage), PinballLoss: round2(m.PinballLoss),
					BaselineP80: round2(m.Baseline.P80Coverage), BaselinePinball: round2(m.Baseline.PinballLoss)}
			}
		}
	}
	out.Meta = q.meta()
	instr := fmt.Sprintf("Explain that work takes %.2f× its nominal estimate overall, from %d finished issues; a multiplier above 1 means slower than estimated.", out.GlobalMultiplier, out.N)
	if c.ColdStart {
		instr = fmt.Sprintf("Say the model is in cold start (%d finished samples): estimates use defaults, so ranges are wide.", c.N)
	}
	if m := out.Backtest; m != nil && m.Milestones != nil {
		instr += fmt.Sprintf(" On the project's own closed milestones, p80 came true on %d of the last %d.", m.Milestones.P80Kept, m.Milestones.Judged)
	}
	return Answer[any]{Data: out, Instruction: instr}, nil
}
