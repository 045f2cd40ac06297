package standup

import "github.com/commitea/commitea/worker/prose"

// Known is what a project has beyond one report: every milestone's
// forecast, every issue's title, every login. Prose may speak of any of it
// (a milestone that is not at risk, an issue the report leaves out) as
// long as what it says is true; the report's own subjects are the ones it
// must mention.
type Known struct {
	Milestones []KnownMilestone `json:"milestones"`
	Names      prose.Names      `json:"-"`
}

// KnownMilestone is one milestone's forecast, dates local to the standup.
type KnownMilestone struct {
	Milestone int64   `json:"milestone"`
	Title     string  `json:"title"`
	Due       string  `json:"due,omitempty"`
	P50       string  `json:"p50,omitempty"`
	P80       string  `json:"p80,omitempty"`
	PDue      float64 `json:"pDue,omitempty"`
	SlackDays float64 `json:"slackDays,omitempty"`
	Open      int     `json:"open"`
}

// KnownOf collects what the project has from a standup's input.
func KnownOf(in Input) Known {
	_, date := localDates(in.Location)
	k := Known{Names: prose.Names{Issues: make(map[int64]string, len(in.Issues))}}
	for _, m := range in.Snapshot.Forecast.Milestones {
		km := KnownMilestone{Milestone: m.ID, Title: m.Title, Due: date(m.Due), P50: date(m.P50), P80: date(m.P80), Open: m.Open}
		if !m.Due.IsZero() {
			// Chance and slack mean something only against a due date.
			km.PDue, km.SlackDays = m.PDue, m.SlackDays
		}
		k.Milestones = append(k.Milestones, km)
		k.Names.Milestones = append(k.Names.Milestones, m.Title)
	}
	people := map[string]bool{}
	for _, is := range in.Issues {
		k.Names.Issues[is.Number] = is.Title
		if is.Assignee != "" && !people[is.Assignee] {
			people[is.Assignee] = true
			k.Names.People = append(k.Names.People, is.Assignee)
		}
	}
	return k
}
