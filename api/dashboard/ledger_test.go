package dashboard

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/standup"
	"github.com/commitea/commitea/worker/tools"
)

// rawValue is what the ledger's raw form looks like: a JSON object or
// array, or an RFC 3339 timestamp.
var rawValue = regexp.MustCompile(`[{}\[\]]|\d{4}-\d\d-\d\dT\d\d:|\+00:00`)

// TestDirectivesTable: the ledger as a table with a header row, values in
// words, each entry pending, applied or superseded, the moved milestones
// before and after, and a pending directive's batch ready to copy.
func TestDirectivesTable(t *testing.T) {
	t.Parallel()
	d, pool, p := newTestDashboard(t)
	ctx := context.Background()
	heads, err := store.IssueHeads(ctx, pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var issue store.IssueHead
	for _, h := range heads {
		if h.State == "open" && !h.IsPull {
			issue = h
			break
		}
	}
	target := json.RawMessage(`{"issue":` + itoa(issue.Number) + `}`)
	cons := json.RawMessage(`[{"milestone":1,"title":"M1","before":{"p50":"2026-12-20","p80":"2026-12-28","pDue":0.41},"after":{"p50":"2027-01-04","p80":"2027-01-11","pDue":0.04}},
		{"milestone":2,"title":"M2","before":{"p50":"2027-01-10","p80":"2027-01-20","pDue":0.9},"after":{"p50":"2027-01-10","p80":"2027-01-20","pDue":0.9}}]`)
	at := testNow.Add(-3 * time.Hour)
	applied := testNow.Add(-2 * time.Hour)
	for _, e := range []store.Directive{
		{Kind: "reestimate", Quote: "It is bigger than we thought: XL", Target: target, Params: json.RawMessage(`{"estimate":"xl"}`), Consequence: cons, CreatedAt: at},
		{Kind: "reestimate", Quote: "Actually an L", Target: target, Params: json.RawMessage(`{"estimate":"l"}`), Consequence: cons, CreatedAt: at.Add(time.Minute)},
		{Kind: "capacity", Quote: "Dana is off the first week of January", Target: json.RawMessage(`{"member":"dana"}`),
			Params: json.RawMessage(`{"timeOff":[{"from":"2027-01-04","to":"2027-01-08"}]}`), Consequence: json.RawMessage(`[]`),
			Status: store.DirectiveApplied, AppliedAt: &applied, CreatedAt: at.Add(2 * time.Minute)},
	} {
		e.ProjectID, e.Caller = p.ID, "pm"
		if _, err := store.AppendDirective(ctx, pool, e); err != nil {
			t.Fatal(err)
		}
	}
	code, doc, _ := get(t, d.Handler(), "/ceo/demo/directives")
	tb := find(doc, byID("directives"))
	if code != http.StatusOK || len(tb) != 1 || tb[0].Data != "table" {
		t.Fatalf("directives: %d, want one table", code)
	}
	var header []string
	for _, th := range find(tb[0], func(n *html.Node) bool { return n.Data == "th" }) {
		header = append(header, text(th))
	}
	if want := []string{"When", "Who", "Kind", "Quote", "Target", "Change", "Forecast before → after", "Status"}; !slices.Equal(header, want) {
		t.Errorf("header = %q, want %q", header, want)
	}
	rows := find(tb[0], func(n *html.Node) bool { return n.Data == "tr" && attr(n, "data-status") != "" })
	if len(rows) != 3 {
		t.Fatalf("%d ledger rows, want 3", len(rows))
	}
	status := map[string]string{}
	for _, r := range rows {
		cells := find(r, func(n *html.Node) bool { return n.Data == "td" })
		if len(cells) != len(header) {
			t.Errorf("row %s has %d cells, want %d", attr(r, "data-id"), len(cells), len(header))
		}
		for _, c := range cells {
			if v := text(c); rawValue.MatchString(v) {
				t.Errorf("row %s: raw value in %q", attr(r, "data-id"), v)
			}
		}
		status[attr(r, "data-id")] = attr(r, "data-status")
	}
	if want := map[string]string{"1": "superseded", "2": "pending", "3": "applied"}; !mapsEqual(status, want) {
		t.Errorf("statuses = %v, want %v", status, want)
	}
	row := rows[1] // directive 2, newest first after the capacity one
	if got := text(row); !strings.Contains(got, "#"+itoa(issue.Number)+" "+issue.Title) || !strings.Contains(got, "estimate est/l") ||
		!strings.Contains(got, "M1: p50 Sun 20 Dec, p80 Mon 28 Dec, 41% on time → p50 Mon 4 Jan, p80 Mon 11 Jan, 4% on time") || strings.Contains(got, "M2") {
		t.Errorf("pending row = %q: want the target by name, the change in words and only M1, which moves", got)
	}
	if got := text(rows[0]); !strings.Contains(got, "off Mon 4 Jan – Fri 8 Jan") || !strings.Contains(got, "Tue 1 Dec 2026, 08:00 UTC") {
		t.Errorf("capacity row = %q", got)
	}
	batches := find(tb[0], byClass("tr", "batch"))
	if len(batches) != 1 || attr(batches[0], "data-for") != "2" {
		t.Fatalf("%d batches, want one, for the pending directive 2 (1 is superseded)", len(batches))
	}
	var batch struct {
		Ops         []tools.Op `json:"ops"`
		DirectiveID int64      `json:"directiveId"`
	}
	if err := json.Unmarshal([]byte(text(find(batches[0], byClass("pre", "copy"))[0])), &batch); err != nil {
		t.Fatal(err)
	}
	if batch.DirectiveID != 2 || len(batch.Ops) != 1 || batch.Ops[0].Op != "set_estimate" || batch.Ops[0].Issue != issue.Number || batch.Ops[0].Estimate != "est/l" {
		t.Errorf("batch = %+v", batch)
	}
	// The view an agent reads carries the same batch and the supersession.
	limit := 100
	a, err := d.cfg.Query(ctx, tools.QueryProjectInput{Project: p.FullName(), View: "directives", Filters: &tools.Filters{Limit: &limit}})
	if err != nil {
		t.Fatal(err)
	}
	v := a.Data.(tools.DirectivesView)
	if len(v.Pending) != 2 || len(v.Pending[1].ProposedOps) != 1 || v.Recent[2].SupersededBy != 2 {
		t.Errorf("directives view: pending %+v, recent %+v", v.Pending, v.Recent)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestStandupReport: the standup of record, computed by the standup job's
// own code, renders as its sections: every at-risk milestone linked, every
// flagged plan item with its flag, and no raw metadata.
func TestStandupReport(t *testing.T) {
	t.Parallel()
	d, pool, p := newTestDashboard(t)
	ctx := context.Background()
	s := &worker.Standups{Pool: pool, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return testNow }}
	day := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	g, err := s.Generate(ctx, p.ID, day)
	if err != nil {
		t.Fatal(err)
	}
	content, err := json.Marshal(g.Report)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.InsertStandupOnce(ctx, pool, store.DailyStandup{ProjectID: p.ID, Day: day, SnapshotVersion: g.SnapshotVersion, Content: content, Text: g.Text}); err != nil {
		t.Fatal(err)
	}
	_, doc, body := get(t, d.Handler(), "/ceo/demo/standup")
	if strings.Contains(body, "snapshot_version") || strings.Contains(body, "created_at") || rawValue.MatchString(text(find(doc, byID("standup"))[0])) {
		t.Error("standup page shows raw metadata")
	}
	var keys []string
	for _, sec := range find(doc, byClass("section", "part")) {
		keys = append(keys, attr(sec, "data-section"))
	}
	if want := []string{standup.SectionAtRisk, standup.SectionDrift, standup.SectionPlan, standup.SectionStaleBlockers, "aging"}; !slices.Equal(keys, want) {
		t.Errorf("sections = %q, want %q", keys, want)
	}
	if len(g.Report.AtRisk) == 0 {
		t.Fatal("the seeded project has no milestone at risk: the test shows nothing")
	}
	atRisk := find(doc, byID(standup.SectionAtRisk))[0]
	for _, m := range g.Report.AtRisk {
		link := "/ceo/demo/milestones/" + itoa(m.Milestone)
		// Linked once, and once more under it when it has a best rescue
		// (that line names the milestone first, for the prose check).
		want := 1
		if m.Rescue != nil {
			want = 2
		}
		if len(find(atRisk, func(n *html.Node) bool { return n.Data == "a" && attr(n, "href") == link && text(n) == m.Title })) != want {
			t.Errorf("at risk: no link to %s (%s)", m.Title, link)
		}
		if !strings.Contains(text(atRisk), pctText(m.Chance)+" chance to make it") {
			t.Errorf("at risk: %s's chance %v missing", m.Title, m.Chance)
		}
	}
	flagged := 0
	for _, pp := range g.Report.Plan {
		for _, it := range slices.Concat(pp.Now, pp.Next, pp.Blocked) {
			if it.Critical != nil {
				flagged++
			}
		}
	}
	plan := find(doc, byID(standup.SectionPlan))[0]
	if got := len(find(plan, func(n *html.Node) bool { return attr(n, "data-flag") == standup.FlagCriticalChain })); got != flagged || flagged == 0 {
		t.Errorf("plan shows %d critical-chain flags, the report has %d (want some)", got, flagged)
	}
}

func pctText(f float64) string { return itoa(int64(f*100+0.5)) + "%" }
