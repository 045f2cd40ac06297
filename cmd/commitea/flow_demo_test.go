package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/commitea/commitea/store"
)

// demoFlowDate pins the demo's clock, so its project and figures are the
// same on every run.
const demoFlowDate = "2026-12-01"

// flowSQL recomputes the flow figures straight from the transitions table,
// as the definitions in README (Flow metrics) read: $1 the project, $2 the
// snapshot's now, $3 the time zone, $4 the window in days. It knows nothing
// of the Go code that computes them.
const flowSQL = `WITH params AS (SELECT $2::timestamptz AS now, $3::text AS tz, $4::int AS win),
t AS (
	SELECT tr.issue, tr.to_state, tr.at, tr.id, (tr.at AT TIME ZONE params.tz)::date AS day
	FROM transitions tr, params
	WHERE tr.project_id = $1 AND tr.at <= params.now
	AND NOT EXISTS (SELECT 1 FROM issue_states s WHERE s.project_id = tr.project_id AND s.number = tr.issue
		AND coalesce((s.flags->>'discarded')::boolean, false))
),
win AS (
	SELECT greatest((params.now AT TIME ZONE params.tz)::date - (params.win - 1), (SELECT min(day) FROM t)) AS from_day,
		(params.now AT TIME ZONE params.tz)::date AS today
	FROM params
),
final AS (SELECT DISTINCT ON (issue) issue, to_state, day FROM t ORDER BY issue, at DESC, id DESC),
started AS (
	SELECT issue, (min(at) AT TIME ZONE (SELECT tz FROM params))::date AS day
	FROM t WHERE to_state IN ('steeping', 'in_review') GROUP BY issue
),
done AS (
	SELECT f.issue, f.day AS done_day, f.day - s.day + 1 AS days
	FROM final f LEFT JOIN started s USING (issue), win
	WHERE f.to_state = 'done' AND f.day BETWEEN win.from_day AND win.today
)
`

// TestDemoFlowAgreesWithSQL: on the seeded demo at its pinned date, every
// figure the flow page shows from the transitions (cycle-time percentiles,
// weekly throughput, the cumulative flow and work in progress of every day,
// each issue's age and aging flag) is what SQL over the transitions table
// gives.
func TestDemoFlowAgreesWithSQL(t *testing.T) {
	d := startDemo(t, "--date", demoFlowDate)
	ctx := context.Background()
	pool, p := d.project(t)

	// The page and the snapshot it was drawn from (a recompute may land in
	// between: then ask again).
	var (
		doc     *html.Node
		now     time.Time
		tz      string
		window  int
		version int64
	)
	for attempt := 0; ; attempt++ {
		err := pool.QueryRow(ctx, `SELECT version, (data->'flow'->>'now')::timestamptz, data->'flow'->>'timeZone', (data->'flow'->>'windowDays')::int
			FROM snapshots WHERE project_id = $1 ORDER BY version DESC LIMIT 1`, p.ID).Scan(&version, &now, &tz, &window)
		if err != nil {
			t.Fatal(err)
		}
		var body string
		doc, body = flowPage(t, d)
		if strings.Contains(body, fmt.Sprintf("snapshot v%d ", version)) {
			break
		}
		if attempt == 5 {
			t.Fatalf("the page never showed snapshot v%d", version)
		}
	}
	if !strings.Contains(pageText(doc), "in calendar days of "+tz) {
		t.Fatalf("the page does not say it counts days of %s", tz)
	}

	// Cycle time.
	var n, unstarted int
	var p50, p70, p85, p95 *int
	err := pool.QueryRow(ctx, flowSQL+`SELECT count(days), count(*) - count(days),
		percentile_disc(0.5) WITHIN GROUP (ORDER BY days), percentile_disc(0.7) WITHIN GROUP (ORDER BY days),
		percentile_disc(0.85) WITHIN GROUP (ORDER BY days), percentile_disc(0.95) WITHIN GROUP (ORDER BY days)
		FROM done`, p.ID, now, tz, window).Scan(&n, &unstarted, &p50, &p70, &p85, &p95)
	if err != nil {
		t.Fatal(err)
	}
	if n < 20 {
		t.Fatalf("%d cycle times in the demo: too few to test anything", n)
	}
	table := rows(doc, "percentiles")
	for k, want := range map[string]int{"n": n, "unstarted": unstarted, "p50": *p50, "p70": *p70, "p85": *p85, "p95": *p95} {
		if got := cellByFigure(table, k); got != strconv.Itoa(want) {
			t.Errorf("cycle time %s: page %q, SQL %d", k, got, want)
		}
	}

	// Weekly throughput, Monday weeks.
	weekly := map[string]int{}
	collectRows(t, pool, flowSQL+`SELECT to_char(date_trunc('week', done_day), 'YYYY-MM-DD'), count(*) FROM done GROUP BY 1`,
		[]any{p.ID, now, tz, window}, func(vals []any) { weekly[vals[0].(string)] = int(vals[1].(int64)) })
	weeks := 0
	for _, r := range rows(doc, "weeks") {
		week := attr(r, "data-week")
		if week == "" {
			continue
		}
		weeks++
		if got := cells(r)[1]; got != strconv.Itoa(weekly[week]) {
			t.Errorf("week of %s: page %s done, SQL %d", week, got, weekly[week])
		}
		delete(weekly, week)
	}
	if len(weekly) > 0 || weeks < 12 {
		t.Errorf("%d weeks on the page; SQL has more: %v", weeks, weekly)
	}

	// The cumulative flow and WIP of every day of the window.
	type day struct{ diagnosis, triage, steeping, inReview, done int }
	byDay := map[string]*day{}
	collectRows(t, pool, flowSQL+`SELECT to_char(d, 'YYYY-MM-DD'), s.to_state, count(*)
		FROM win, generate_series(win.from_day, win.today, interval '1 day') AS d
		CROSS JOIN LATERAL (SELECT DISTINCT ON (issue) issue, to_state FROM t WHERE t.day <= d::date ORDER BY issue, at DESC, id DESC) s
		GROUP BY 1, 2`, []any{p.ID, now, tz, window}, func(vals []any) {
		k := vals[0].(string)
		if byDay[k] == nil {
			byDay[k] = &day{}
		}
		c := int(vals[2].(int64))
		switch vals[1].(string) {
		case "diagnosis":
			byDay[k].diagnosis = c
		case "triage":
			byDay[k].triage = c
		case "steeping":
			byDay[k].steeping = c
		case "in_review":
			byDay[k].inReview = c
		case "done":
			byDay[k].done = c
		}
	})
	days := 0
	for _, r := range rows(doc, "days") {
		k := attr(r, "data-day")
		if k == "" {
			continue
		}
		days++
		w := byDay[k]
		if w == nil {
			t.Errorf("%s is on the page, not in SQL", k)
			continue
		}
		want := []string{k, strconv.Itoa(w.diagnosis), strconv.Itoa(w.triage), strconv.Itoa(w.steeping), strconv.Itoa(w.inReview),
			strconv.Itoa(w.done), strconv.Itoa(w.steeping + w.inReview)}
		if got := cells(r); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("day %s: page %v, SQL %v", k, got, want)
		}
	}
	if days != len(byDay) || days < 60 {
		t.Errorf("%d days on the page, %d in SQL", days, len(byDay))
	}

	// Work item age and the aging flag: older than the 85th percentile.
	ages := map[int64]int{}
	collectRows(t, pool, flowSQL+`SELECT f.issue, win.today - s.day + 1 FROM final f JOIN started s USING (issue), win
		WHERE f.to_state IN ('steeping', 'in_review')`, []any{p.ID, now, tz, window}, func(vals []any) {
		ages[vals[0].(int64)] = int(vals[1].(int32))
	})
	aging := 0
	sqlAging := map[int64]int{}
	for num, days := range ages {
		if days > *p85 {
			sqlAging[num] = days
		}
	}
	for _, r := range rows(doc, "ages") {
		num, err := strconv.ParseInt(attr(r, "data-number"), 10, 64)
		if err != nil {
			continue
		}
		c := cells(r)
		want, ok := ages[num]
		if !ok || c[5] != strconv.Itoa(want) {
			t.Errorf("#%d: page age %s, SQL %d (%v)", num, c[5], want, ok)
		}
		if isAging := c[7] == "aging"; isAging != (want > *p85) {
			t.Errorf("#%d: %d days, aging %v, SLE %d", num, want, isAging, *p85)
		} else if isAging {
			aging++
		}
		delete(ages, num)
	}
	if len(ages) > 0 {
		t.Errorf("in progress per SQL but not on the page: %v", ages)
	}
	// The board's aging filter shows those issues, each with its age.
	board, _ := demoPage(t, d, "/dashboard/acme/teapot/?flag=aging")
	onBoard := map[int64]int{}
	walkHTML(board, func(c *html.Node) {
		if c.Data != "div" || attr(c, "class") != "card" {
			return
		}
		num, err := strconv.ParseInt(attr(c, "data-number"), 10, 64)
		if err != nil {
			t.Fatalf("card %v", c.Attr)
		}
		var age int
		walkHTML(c, func(a *html.Node) {
			if a.Data == "span" && attr(a, "class") == "age" {
				_, _ = fmt.Sscanf(pageText(a), "%d days in progress", &age)
			}
		})
		onBoard[num] = age
	})
	if !maps.Equal(onBoard, sqlAging) {
		t.Errorf("the board's aging filter shows %v (issue: age), SQL says %v", onBoard, sqlAging)
	}
	if !strings.HasPrefix(now.UTC().Format(time.DateOnly), demoFlowDate) {
		t.Errorf("the snapshot's now is %s, not on the demo's pinned %s", now, demoFlowDate)
	}
	t.Logf("snapshot v%d at %s (%s): %d cycle times, p50/p70/p85/p95 %d/%d/%d/%d, %d weeks, %d days, %d aging",
		version, now.Format(time.RFC3339), tz, n, *p50, *p70, *p85, *p95, weeks, days, aging)
}

func flowPage(t *testing.T, d *runningDemo) (*html.Node, string) {
	t.Helper()
	return demoPage(t, d, "/dashboard/acme/teapot/flow")
}

// demoPage is a dashboard page of the demo, parsed.
func demoPage(t *testing.T, d *runningDemo, path string) (*html.Node, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, d.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %.300s", path, resp.StatusCode, raw)
	}
	doc, err := html.Parse(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return doc, string(raw)
}

// collectRows runs a query and hands every row's values to each.
func collectRows(t *testing.T, pool *store.Pool, sql string, args []any, each func([]any)) {
	t.Helper()
	rs, err := pool.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	for rs.Next() {
		vals, err := rs.Values()
		if err != nil {
			t.Fatal(err)
		}
		each(vals)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
}

// rows are the tr elements of the table with id, or under the element with
// that id.
func rows(doc *html.Node, id string) []*html.Node {
	var root *html.Node
	walkHTML(doc, func(n *html.Node) {
		if root == nil && attr(n, "id") == id {
			root = n
		}
	})
	var out []*html.Node
	if root != nil {
		walkHTML(root, func(n *html.Node) {
			if n.Data == "tr" {
				out = append(out, n)
			}
		})
	}
	return out
}

func cells(tr *html.Node) []string {
	var out []string
	for c := tr.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && (c.Data == "td" || c.Data == "th") {
			out = append(out, pageText(c))
		}
	}
	return out
}

func cellByFigure(trs []*html.Node, figure string) string {
	for _, tr := range trs {
		for c := tr.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && attr(c, "data-figure") == figure {
				return pageText(c)
			}
		}
	}
	return ""
}

func walkHTML(n *html.Node, visit func(*html.Node)) {
	if n.Type == html.ElementNode {
		visit(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walkHTML(c, visit)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

var spaces = regexp.MustCompile(`\s+`)

func pageText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.TrimSpace(spaces.ReplaceAllString(b.String(), " "))
}
