package dashboard

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/flow"
)

// The flow page: the snapshot's flow figures (see the scheduler's package
// doc, "Flow") as flow tools draw them, and "how many by when" for a date
// the reader asks (?by=YYYY-MM-DD), read off the stored curves.

// flowData is what flow.html shows.
type flowData struct {
	F *flow.Figures
	// Asked is the date in the form; Answer and Baseline the curves read on
	// it (nil when it is outside the horizon); AskError says why not.
	Asked    string
	Answer   *scheduler.DoneByPoint
	Baseline *scheduler.DoneByPoint
	AskError string
	Last     string // the horizon's last day
	// Dates are quick questions: the due dates of open milestones within
	// the horizon.
	Dates      []flowDate
	Age        []ageRow
	AgingCount int
	WIPNow     int
	Throughput []weekRow
	Days       []dayRow

	HowManySVG, CycleSVG, AgeSVG, ThroughputSVG, WIPSVG, CFDSVG string
}

type flowDate struct{ Title, Day string }

// ageRow is one open, started issue on the aging chart.
type ageRow struct {
	scheduler.WorkItemAge
	Title, Assignee string
}

type weekRow struct {
	scheduler.WeekCount
	Complete bool
}

// dayRow is one day of the window: the cumulative flow and the WIP.
type dayRow struct {
	scheduler.CFDDay
	WIP int
}

func (d *Dashboard) flow(ctx context.Context, p store.Project, s *snapshot, r *http.Request) (string, any, error) {
	const title = "Flow"
	data := flowData{F: s.Flow}
	if s.Flow == nil {
		return title, data, nil
	}
	f := s.Flow
	data.Last = f.DoneBy.Last()
	if n := len(f.WIP); n > 0 {
		data.WIPNow = f.WIP[n-1].Count
	}
	cards, _, _, err := d.cards(ctx, p, s)
	if err != nil {
		return "", nil, err
	}
	byNumber := make(map[int64]card, len(cards))
	for _, c := range cards {
		byNumber[c.Number] = c
	}
	for _, a := range f.Age {
		c := byNumber[a.Number]
		data.Age = append(data.Age, ageRow{WorkItemAge: a, Title: c.Title, Assignee: c.Assignee})
		if a.Aging {
			data.AgingCount++
		}
	}
	for _, w := range f.Throughput.Weeks {
		data.Throughput = append(data.Throughput, weekRow{WeekCount: w, Complete: w.Complete()})
	}
	for k, c := range f.CFD {
		row := dayRow{CFDDay: c}
		if k < len(f.WIP) {
			row.WIP = f.WIP[k].Count
		}
		data.Days = append(data.Days, row)
	}

	for _, m := range s.Forecast.Milestones {
		if m.Due.IsZero() || m.Open == 0 {
			continue
		}
		day := m.Due.In(location(f.TimeZone)).Format(time.DateOnly)
		if day >= f.DoneBy.From && day <= data.Last {
			data.Dates = append(data.Dates, flowDate{Title: m.Title, Day: day})
		}
	}
	slices.SortStableFunc(data.Dates, func(a, b flowDate) int { return cmp.Compare(a.Day, b.Day) })

	data.Asked = r.URL.Query().Get("by")
	if data.Asked == "" {
		data.Asked = defaultAsk(f, data.Dates)
	}
	if _, err := time.Parse(time.DateOnly, data.Asked); err != nil {
		data.AskError = fmt.Sprintf("%q is not a date (YYYY-MM-DD).", data.Asked)
	} else if pt, ok := f.DoneBy.On(data.Asked); ok {
		data.Answer = &pt
		if f.Baseline != nil {
			if bp, ok := f.Baseline.On(data.Asked); ok {
				data.Baseline = &bp
			}
		}
	} else {
		data.AskError = fmt.Sprintf("%s is outside the forecast horizon, %s to %s.", data.Asked, f.DoneBy.From, data.Last)
	}

	data.HowManySVG = howManySVG(f.DoneBy, f.Baseline, data.Answer)
	data.CycleSVG = cycleTimeSVG(f.FlowMetrics)
	data.AgeSVG = ageSVG(f.FlowMetrics, data.Age)
	data.ThroughputSVG = throughputSVG(f.Throughput)
	data.WIPSVG = wipSVG(f.WIP)
	data.CFDSVG = cfdSVG(f.CFD)
	return title, data, nil
}

// defaultAsk is the date the form starts with: the first due date within
// the horizon, else four weeks from today.
func defaultAsk(f *flow.Figures, dates []flowDate) string {
	if len(dates) > 0 {
		return dates[0].Day
	}
	from, err := time.Parse(time.DateOnly, f.DoneBy.From)
	if err != nil {
		return f.DoneBy.From
	}
	ask := from.AddDate(0, 0, 28).Format(time.DateOnly)
	if last := f.DoneBy.Last(); ask > last {
		return last
	}
	return ask
}

func location(name string) *time.Location {
	if loc, err := time.LoadLocation(name); err == nil {
		return loc
	}
	return time.UTC
}
