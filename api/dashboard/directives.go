package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/tools"
)

// The directives page is the ledger as a table a PM reads: when, who, what
// kind, their words, the target by name, the change asked for, what the
// forecast said it would do to each milestone it moves (and, once the
// what-if records it, what it did), and whether it is pending, applied or
// superseded by a later directive of the same kind on the same target. It
// reads the query_project directives view, so the page and an agent see the
// same ledger; a pending directive's proposed apply_changes batch is shown
// ready to copy.

// directiveRow is one ledger entry as the page shows it.
type directiveRow struct {
	ID      int64
	When    string
	Who     string
	Kind    string
	Quote   string
	Target  targetRef
	Change  string
	Moves   []milestoneMove
	Summary string
	// Status is pending, applied or superseded; Superseder the later
	// directive's id.
	Status     string
	Superseder int64
	AppliedAt  string
	// Batch is the apply_changes body of a pending directive, to copy.
	Batch string
	// NegotiatedBy names the model that read the params from the quote.
	NegotiatedBy string
}

// targetRef is what a directive is about, by name, with a link when it has
// a page.
type targetRef struct {
	Text string
	Link string
}

// milestoneMove is one milestone's forecast before and after a directive:
// what was predicted, and what was realized once recorded.
type milestoneMove struct {
	Milestone int64
	Title     string
	Before    string
	After     string
	Realized  string
}

type directivesData struct {
	Rows    []directiveRow
	Pending int
	Notes   []string
}

// band is the ledger's p50/p80/chance triple, as tools.Band writes it.
type band struct {
	P50  string  `json:"p50"`
	P80  string  `json:"p80"`
	PDue float64 `json:"pDue"`
}

func (b band) String(hasDue bool) string {
	if b.P50 == "" && b.P80 == "" {
		return "nothing left to schedule"
	}
	s := "p50 " + dayText(b.P50) + ", p80 " + dayText(b.P80)
	if hasDue {
		s += ", " + chance(b.PDue) + " on time"
	}
	return s
}

// dayText writes a YYYY-MM-DD day as people read it.
func dayText(d string) string {
	t, err := time.Parse(time.DateOnly, d)
	if err != nil {
		return d
	}
	return t.Format("Mon 2 Jan")
}

func (d *Dashboard) directives(ctx context.Context, p store.Project, s *snapshot, _ *http.Request) (string, any, error) {
	limit := tools.MaxLimit
	a, err := d.cfg.Query(ctx, tools.QueryProjectInput{Project: p.FullName(), View: "directives", Filters: &tools.Filters{Limit: &limit}})
	if err != nil {
		return "", nil, fmt.Errorf("directives view: %w", err)
	}
	view, ok := a.Data.(tools.DirectivesView)
	if !ok {
		return "", nil, fmt.Errorf("directives view: unexpected %T", a.Data)
	}
	heads, err := store.IssueHeads(ctx, d.cfg.Pool, p.ID)
	if err != nil {
		return "", nil, err
	}
	titles := make(map[int64]string, len(heads))
	for _, h := range heads {
		titles[h.Number] = h.Title
	}
	milestones := milestoneTitles(s)
	hasDue := map[int64]bool{}
	for _, m := range s.Forecast.Milestones {
		hasDue[m.ID] = !m.Due.IsZero()
	}
	ops := map[int64][]tools.Op{}
	for _, e := range view.Pending {
		ops[e.ID] = e.ProposedOps
	}
	data := directivesData{Pending: view.PendingTotal}
	for _, n := range view.Notes {
		if strings.HasPrefix(n, "recent:") && strings.Contains(n, "empty") {
			continue
		}
		data.Notes = append(data.Notes, n)
	}
	for _, e := range view.Recent {
		row := directiveRow{ID: e.ID, When: stamp(e.CreatedAt), Who: e.Caller, Kind: e.Kind, Quote: e.Quote,
			Summary: e.Summary, Status: e.Status, NegotiatedBy: e.NegotiatedBy}
		row.Target = d.target(p, e.Target, titles, milestones)
		row.Change = change(e.Kind, e.Params, titles)
		if e.AppliedAt != nil {
			row.AppliedAt = stamp(*e.AppliedAt)
		}
		if e.SupersededBy != 0 {
			row.Status, row.Superseder = "superseded", e.SupersededBy
		}
		if e.Status == store.DirectivePending && e.SupersededBy == 0 && len(ops[e.ID]) > 0 {
			body, err := json.Marshal(struct {
				Ops         []tools.Op `json:"ops"`
				DirectiveID int64      `json:"directiveId"`
			}{ops[e.ID], e.ID})
			if err == nil {
				row.Batch = string(body)
			}
		}
		row.Moves = moves(e, hasDue)
		data.Rows = append(data.Rows, row)
	}
	return "Directives", data, nil
}

// stamp is a moment as the pages write one: day and minute, in UTC.
func stamp(t time.Time) string { return t.UTC().Format("Mon 2 Jan 2006, 15:04 UTC") }

// chance writes a probability as a whole percentage that never claims a
// certainty the trials do not: 99.6% is ">99%", not "100%"; 0.3% is "<1%".
func chance(p float64) string {
	switch {
	case p >= 1:
		return "100%"
	case p <= 0:
		return "0%"
	case p > 0.99:
		return ">99%"
	case p < 0.01:
		return "<1%"
	}
	return strconv.Itoa(int(p*100+0.5)) + "%"
}

func (d *Dashboard) target(p store.Project, raw json.RawMessage, titles, milestones map[int64]string) targetRef {
	var t tools.Target
	if len(raw) == 0 || json.Unmarshal(raw, &t) != nil {
		return targetRef{Text: "—"}
	}
	base := d.cfg.Prefix + "/" + p.FullName()
	switch {
	case t.Issue != nil:
		text := "#" + strconv.FormatInt(*t.Issue, 10)
		if title := titles[*t.Issue]; title != "" {
			text += " " + title
		}
		return targetRef{Text: text, Link: base + "/issues/" + strconv.FormatInt(*t.Issue, 10)}
	case t.Milestone != nil:
		title := milestones[*t.Milestone]
		if title == "" {
			title = "milestone " + strconv.FormatInt(*t.Milestone, 10)
		}
		return targetRef{Text: title, Link: base + "/milestones/" + strconv.FormatInt(*t.Milestone, 10)}
	case t.Member != "":
		return targetRef{Text: t.Member, Link: base + "/people#" + t.Member}
	}
	return targetRef{Text: "the project"}
}

// change writes a directive's params in words.
func change(kind string, raw json.RawMessage, titles map[int64]string) string {
	if len(raw) == 0 || string(raw) == "null" {
		if kind == "note" {
			return "none: a note is kept for the record"
		}
		return "—"
	}
	var prm struct {
		Priority    json.RawMessage `json:"priority"`
		Estimate    string          `json:"estimate"`
		Due         string          `json:"due"`
		Hard        *bool           `json:"hard"`
		Add         []int64         `json:"add"`
		Drop        []int64         `json:"drop"`
		HoursPerDay *float64        `json:"hoursPerDay"`
		TimeOff     []struct {
			From string `json:"from"`
			To   string `json:"to"`
		} `json:"timeOff"`
	}
	if json.Unmarshal(raw, &prm) != nil {
		return "—"
	}
	issues := func(ns []int64) string {
		var out []string
		for _, n := range ns {
			out = append(out, "#"+strconv.FormatInt(n, 10))
		}
		return strings.Join(out, ", ")
	}
	var parts []string
	if len(prm.Priority) > 0 {
		v := strings.Trim(string(prm.Priority), `"`)
		if !strings.HasPrefix(v, "p/") {
			v = "p/" + v
		}
		parts = append(parts, "priority "+v)
	}
	if prm.Estimate != "" {
		v := prm.Estimate
		if !strings.HasPrefix(v, "est/") {
			v = "est/" + v
		}
		parts = append(parts, "estimate "+v)
	}
	if prm.Due != "" {
		parts = append(parts, "due "+dayText(prm.Due))
	}
	if prm.Hard != nil {
		if *prm.Hard {
			parts = append(parts, "hard deadline")
		} else {
			parts = append(parts, "soft deadline")
		}
	}
	if len(prm.Add) > 0 {
		parts = append(parts, "add "+issues(prm.Add))
	}
	if len(prm.Drop) > 0 {
		parts = append(parts, "drop "+issues(prm.Drop))
	}
	if prm.HoursPerDay != nil {
		parts = append(parts, strconv.FormatFloat(*prm.HoursPerDay, 'f', -1, 64)+" h a day")
	}
	for _, span := range prm.TimeOff {
		if span.From == span.To || span.To == "" {
			parts = append(parts, "off "+dayText(span.From))
		} else {
			parts = append(parts, "off "+dayText(span.From)+" – "+dayText(span.To))
		}
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, "; ")
}

// moves are the milestones a directive moves: the consequence quoted when
// it was recorded (or, once applied, the quote at apply time), with the
// realized band beside it once the ledger has one.
func moves(e tools.DirectiveEntry, hasDue map[int64]bool) []milestoneMove {
	type beforeAfter struct {
		Milestone int64  `json:"milestone"`
		Title     string `json:"title"`
		Before    band   `json:"before"`
		After     band   `json:"after"`
		Band      band   `json:"band"`
	}
	var quoted, realized []beforeAfter
	src := e.Consequence
	if len(e.Predicted) > 0 && string(e.Predicted) != "null" {
		src = e.Predicted
	}
	_ = json.Unmarshal(src, &quoted)
	if len(e.Realized) > 0 {
		_ = json.Unmarshal(e.Realized, &realized)
	}
	real := map[int64]band{}
	for _, r := range realized {
		b := r.Band
		if b == (band{}) {
			b = r.After
		}
		real[r.Milestone] = b
	}
	var out []milestoneMove
	for _, q := range quoted {
		if q.Before == q.After {
			continue
		}
		m := milestoneMove{Milestone: q.Milestone, Title: q.Title, Before: q.Before.String(hasDue[q.Milestone]), After: q.After.String(hasDue[q.Milestone])}
		if b, ok := real[q.Milestone]; ok {
			m.Realized = b.String(hasDue[q.Milestone])
		}
		out = append(out, m)
	}
	return out
}
