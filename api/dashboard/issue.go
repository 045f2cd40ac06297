package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/tools"
)

// The issue page is the query_project issue view as a page: what people
// wrote in Gitea (intent) beside what CommiTea derived from it (lifecycle
// timeline, forecast range, dependencies both ways, and the events and
// labels each derived value came from), with a link to the issue in Gitea.
// It reads the view itself, so it shows what an agent is told.

type issueData struct {
	V         tools.IssueView
	GiteaLink string
	State     string // the lifecycle state in the board's words
	Timeline  []timelineRow
	// Provenance lists, per derived value, what it came from.
	Provenance []provenanceRow
	Comments   []commentRow
	Notes      []string
	Milestone  string
	Range      string
}

type timelineRow struct{ From, To, At, Cause string }

type provenanceRow struct {
	What    string
	Reasons []string
}

type commentRow struct{ Author, At, Body string }

// stateWords are the five lifecycle states as the board names them.
var stateWords = map[string]string{
	"diagnosis": "Diagnosis", "triage": "Triage", "steeping": "Steeping", "in_review": "In review", "done": "Done",
}

func (d *Dashboard) issue(ctx context.Context, p store.Project, s *snapshot, r *http.Request) (string, any, error) {
	n, err := strconv.ParseInt(chi.URLParam(r, "n"), 10, 64)
	if err != nil || n < 1 {
		return "", nil, fmt.Errorf("issue %q: %w", chi.URLParam(r, "n"), errNotFound)
	}
	a, err := d.cfg.Query(ctx, tools.QueryProjectInput{Project: p.FullName(), View: "issue", Filters: &tools.Filters{IssueID: &n}})
	var te *tools.Error
	if errors.As(err, &te) && te.Code == tools.CodeNotFound {
		return "", nil, fmt.Errorf("issue #%d: %w", n, errNotFound)
	}
	if err != nil {
		return "", nil, fmt.Errorf("issue view: %w", err)
	}
	v, ok := a.Data.(tools.IssueView)
	if !ok {
		return "", nil, fmt.Errorf("issue view: unexpected %T", a.Data)
	}
	data := issueData{V: v, State: stateWords[v.Derived.State], Notes: v.Notes}
	if data.State == "" {
		data.State = v.Derived.State
	}
	if d.cfg.GiteaURL != "" {
		data.GiteaLink = d.cfg.GiteaURL + "/" + p.FullName() + "/issues/" + strconv.FormatInt(n, 10)
	}
	if m := v.Intent.Milestone; m != nil {
		data.Milestone = m.Title
	}
	if f := v.Derived.Forecast; f != nil {
		data.Range = "p50 " + dayText(f.P50) + " – p80 " + dayText(f.P80)
		if f.P10 != "" {
			data.Range = "p10 " + dayText(f.P10) + " · " + data.Range
		}
	}
	for _, st := range v.Derived.Timeline {
		row := timelineRow{From: stateWords[st.From], To: stateWords[st.To], At: minute(st.At), Cause: st.Cause}
		if row.From == "" {
			row.From = "—"
		}
		data.Timeline = append(data.Timeline, row)
	}
	if pv := v.Derived.Provenance; pv != nil {
		for _, e := range []struct {
			what string
			why  []string
		}{{"state", pv.State}, {"discarded", pv.Discarded}, {"blocked", pv.Blocked}, {"stale", pv.Stale},
			{"no estimate", pv.MissingEstimate}, {"aging", pv.Aging}, {"unschedulable", pv.Unschedulable}} {
			if len(e.why) > 0 {
				data.Provenance = append(data.Provenance, provenanceRow{What: e.what, Reasons: e.why})
			}
		}
	}
	for _, c := range v.Intent.Comments {
		data.Comments = append(data.Comments, commentRow{Author: c.Author, At: minute(c.At), Body: c.Body})
	}
	return "#" + strconv.FormatInt(n, 10) + " " + v.Intent.Title, data, nil
}

// minute writes the tools' "2006-01-02T15:04Z" moments as people read
// them.
func minute(s string) string {
	t, err := time.Parse("2006-01-02T15:04Z", s)
	if err != nil {
		return s
	}
	return t.Format("Mon 2 Jan 2006, 15:04 UTC")
}

// flagWords are the issue view's flags in words.
func flagWords(f string) string {
	switch f {
	case "missingEstimate":
		return "no estimate"
	}
	return strings.ToLower(f)
}
