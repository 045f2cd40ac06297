package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/tools"
)

// The people page is the team as the forecast schedules it: each person's
// calendar (days and hours worked, time off ahead, the capacity calendar
// laid over the configured one), hours a week, scheduled load in hours and
// weeks, the median date they run out of work (the runway's capacity,
// read through the query_project runway view), and their now and next
// issues: now is their work in steeping or in review, next the forecast's
// schedule for them, soonest first.

type personRow struct {
	Login        string
	HoursPerWeek float64
	LoadHours    float64
	LoadWeeks    float64
	Issues       int
	FreeFrom     string
	Days         string
	HoursPerDay  float64
	TimeOff      []string
	Now, Next    []personItem
	MoreNext     int
}

type personItem struct {
	Number int64
	Title  string
	P50    string
	Flags  []flag
}

type peopleData struct {
	Rows  []personRow
	Notes []string
}

// maxPersonNext is how much of a person's schedule the page lists.
const maxPersonNext = 3

func (d *Dashboard) people(ctx context.Context, p store.Project, s *snapshot, _ *http.Request) (string, any, error) {
	limit := tools.MaxLimit
	a, err := d.cfg.Query(ctx, tools.QueryProjectInput{Project: p.FullName(), View: "runway", Filters: &tools.Filters{Limit: &limit}})
	if err != nil {
		return "", nil, fmt.Errorf("runway view: %w", err)
	}
	rw, ok := a.Data.(tools.RunwayView)
	if !ok {
		return "", nil, fmt.Errorf("runway view: unexpected %T", a.Data)
	}
	caps, err := store.CapacityCalendar(ctx, d.cfg.Pool, p.ID)
	if err != nil {
		return "", nil, err
	}
	cals := worker.TeamCalendars(d.cfg.People, d.cfg.DefaultCalendar, caps)
	cards, status, _, err := d.cards(ctx, p, s)
	if err != nil {
		return "", nil, err
	}
	byNumber := map[int64]card{}
	for _, c := range cards {
		byNumber[c.Number] = c
	}
	today := d.cfg.Now()
	data := peopleData{Notes: rw.Notes}
	for _, c := range rw.Capacity {
		row := personRow{Login: c.Login, HoursPerWeek: c.HoursPerWeek, LoadHours: c.LoadHours, LoadWeeks: c.LoadWeeks, Issues: c.Issues, FreeFrom: c.FreeFrom}
		cal := d.cfg.DefaultCalendar
		if k := slices.IndexFunc(cals, func(x scheduler.Person) bool { return strings.EqualFold(x.Login, c.Login) }); k >= 0 && cals[k].Calendar.HoursPerDay > 0 {
			cal = cals[k].Calendar
		}
		row.Days, row.HoursPerDay = weekdays(cal.WorkingDays), cal.HoursPerDay
		if row.HoursPerDay <= 0 {
			row.HoursPerDay = scheduler.DefaultHoursPerDay // the zero calendar's
		}
		for _, r := range cal.TimeOff {
			if r.To.Before(today.Truncate(24 * time.Hour)) {
				continue
			}
			if r.From.Equal(r.To) {
				row.TimeOff = append(row.TimeOff, r.From.Format("Mon 2 Jan 2006"))
			} else {
				row.TimeOff = append(row.TimeOff, r.From.Format("Mon 2 Jan")+" – "+r.To.Format("Mon 2 Jan 2006"))
			}
		}
		// Now: their work in progress; next: the forecast's schedule.
		for _, cd := range cards {
			st := status[cd.Number].State
			if strings.EqualFold(cd.Assignee, c.Login) && (st == scheduler.Steeping || st == scheduler.InReview) {
				row.Now = append(row.Now, personItem{Number: cd.Number, Title: cd.Title, P50: dateOrDash(cd.P50), Flags: cd.Flags})
			}
		}
		var next []scheduler.IssueForecast
		for _, f := range s.Forecast.Issues {
			st := status[f.Number].State
			if strings.EqualFold(f.Assignee, c.Login) && st != scheduler.Steeping && st != scheduler.InReview && st != scheduler.Done && !f.P50.IsZero() {
				next = append(next, f)
			}
		}
		slices.SortStableFunc(next, func(a, b scheduler.IssueForecast) int { return a.P50.Compare(b.P50) })
		for k, f := range next {
			if k == maxPersonNext {
				row.MoreNext = len(next) - k
				break
			}
			cd := byNumber[f.Number]
			row.Next = append(row.Next, personItem{Number: f.Number, Title: cd.Title, P50: dateOrDash(f.P50), Flags: cd.Flags})
		}
		data.Rows = append(data.Rows, row)
	}
	return "People", data, nil
}

func dateOrDash(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("Mon 2 Jan")
}

// weekdays writes a working week: "Mon–Fri", or the days one by one.
func weekdays(days [7]bool) string {
	if days == [7]bool{false, true, true, true, true, true, false} {
		return "Mon–Fri"
	}
	var out []string
	for i, on := range days {
		if on {
			out = append(out, time.Weekday(i).String()[:3])
		}
	}
	if len(out) == 0 {
		return "Mon–Fri"
	}
	return strings.Join(out, ", ")
}
