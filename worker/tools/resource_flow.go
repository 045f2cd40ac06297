package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/flow"
)

// The flow resource, commitea://{owner}/{repo}/flow: the flow figures the
// recompute stored with the latest snapshot (cycle-time percentiles and
// the points behind them, the service level expectation and the age of
// work in progress, weekly throughput and its predictability, WIP and the
// cumulative flow per day, "how many by when" at 50/80/90% beside the
// throughput-only answer), with the curves read on each open milestone's
// due date. It is a resource and not a query_project view: the tools'
// contract stays as it is. Definitions: the scheduler's package doc
// ("Flow") and README's "Flow metrics".

// flowDocument is what the flow resource reads as.
type flowDocument struct {
	Project  string      `json:"project"`
	Snapshot SnapshotRef `json:"snapshot"`
	*flow.Figures
	// ByMilestone is "how many by when" on each open milestone's due date
	// within the horizon.
	ByMilestone []milestoneDoneBy `json:"byMilestone"`
}

// milestoneDoneBy reads the curves on a milestone's due date: how many of
// all open issues (not only the milestone's) are done by then.
type milestoneDoneBy struct {
	Milestone int64  `json:"milestone"`
	Title     string `json:"title"`
	Due       string `json:"due"`
	AtLeast50 int    `json:"atLeast50"`
	AtLeast80 int    `json:"atLeast80"`
	AtLeast90 int    `json:"atLeast90"`
	// Baseline80 and Baseline50 are the throughput-only answer, absent
	// without one.
	Baseline80 *int `json:"baseline80,omitempty"`
	Baseline50 *int `json:"baseline50,omitempty"`
}

func (s *Service) flowResource() Resource {
	return Resource{Path: "flow", Name: "flow", Title: "Flow metrics", MIMEType: "application/json",
		Description: "Cycle time percentiles, SLE and aging work, weekly throughput and predictability, WIP and cumulative flow per day, and open issues done by each date at 50/80/90% (how many by when), from the latest snapshot.",
		list: s.perProject(func(ctx context.Context, p store.Project) ([]ResourceRef, error) {
			v, err := s.view(ctx, p)
			var te *Error
			if errors.As(err, &te) && te.Code == CodeNotReady {
				return nil, nil // no snapshot yet: nothing to list
			}
			if err != nil {
				return nil, err
			}
			if v.Data.Flow == nil {
				return nil, nil
			}
			f := v.Data.Flow
			return []ResourceRef{{URI: ResourceURI(p, "flow"), Name: "flow", Title: p.FullName() + " flow metrics",
				Description: fmt.Sprintf("%s to %s; SLE %s", f.From, f.To, sleText(f)),
				MIMEType:    "application/json", LastModified: v.Data.ComputedAt}}, nil
		}),
		read: s.inProject(func(ctx context.Context, _ Caller, p store.Project, _ map[string]string) (ResourceContent, error) {
			v, err := s.view(ctx, p)
			if err != nil {
				return ResourceContent{}, err
			}
			f := v.Data.Flow
			if f == nil {
				return ResourceContent{}, Errorf(CodeNotReady, "", "the latest snapshot of %s predates flow metrics; the next recompute adds them", p.FullName())
			}
			doc := flowDocument{Project: p.FullName(), Snapshot: v.snapshotRef(time.Now()),
				Figures: f, ByMilestone: []milestoneDoneBy{}}
			loc, err := time.LoadLocation(f.TimeZone)
			if err != nil {
				loc = time.UTC
			}
			for _, m := range v.Data.Forecast.Milestones {
				if m.Due.IsZero() || m.Open == 0 {
					continue
				}
				due := m.Due.In(loc).Format(time.DateOnly)
				pt, ok := f.DoneBy.On(due)
				if !ok {
					continue
				}
				md := milestoneDoneBy{Milestone: m.ID, Title: m.Title, Due: due, AtLeast50: pt.AtLeast50, AtLeast80: pt.AtLeast80, AtLeast90: pt.AtLeast90}
				if f.Baseline != nil {
					if bp, ok := f.Baseline.On(due); ok {
						md.Baseline80, md.Baseline50 = &bp.AtLeast80, &bp.AtLeast50
					}
				}
				doc.ByMilestone = append(doc.ByMilestone, md)
			}
			b, err := json.Marshal(doc)
			if err != nil {
				return ResourceContent{}, fmt.Errorf("encode flow resource: %w", err)
			}
			return ResourceContent{URI: ResourceURI(p, "flow"), MIMEType: "application/json", Text: string(b)}, nil
		}),
	}
}

func sleText(f *flow.Figures) string {
	if f.SLE.Days == 0 {
		return "not yet known"
	}
	return fmt.Sprintf("%d%% within %d days", f.SLE.Percentile, f.SLE.Days)
}
