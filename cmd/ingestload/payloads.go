package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/commitea/commitea/worker/gitea/giteafake"
)

// delivery is one signed-to-be webhook: its event header and body.
type delivery struct {
	event string
	body  []byte
}

// shapes are the recorded deliveries the load is made of, with the share
// of the load each takes, roughly as a busy tracker sends them.
var shapes = []struct {
	name  string
	share int
}{
	{"002-issues-opened", 15},
	{"003-issues-edited", 15},
	{"005-issues-label_updated", 25},
	{"011-issues-milestoned", 15},
	{"018-issue_comment-created", 20},
	{"022-issues-closed", 10},
}

// loadLabels are the label definitions the deliveries draw from: every
// delivery carries its issue's own labels (1 to 6 of them, in the order the
// issue has them) and milestone, so concurrent deliveries upsert
// overlapping label and milestone rows in different orders, as Gitea's do.
var loadLabels = func() []map[string]any {
	names := []string{"kind/bug", "kind/feature", "kind/chore", "kind/docs", "est/XS", "est/S", "est/M", "est/L", "est/XL",
		"prio/low", "prio/high", "prio/urgent", "area/api", "area/ui", "area/db", "area/ci", "area/auth", "area/sync",
		"deadline/hard", "deadline/soft", "status/blocked", "status/review", "good first issue", "help wanted"}
	out := make([]map[string]any, len(names))
	for i, n := range names {
		out[i] = map[string]any{"id": i + 1, "name": n, "exclusive": false, "is_archived": false, "color": fmt.Sprintf("%06x", (i+1)*0x0a0b0c),
			"description": "label " + n, "url": fmt.Sprintf("http://127.0.0.1:3000/api/v1/repos/ceo/demo/labels/%d", i+1)}
	}
	return out
}()

// realisticDeliveries builds n deliveries touching issues first..first+issues-1
// from the recorded fixtures, each with its own labels, milestone, title and
// update time. Seeded, so every round and run sends the same load.
func realisticDeliveries(n, issues, first int) ([]delivery, error) {
	recorded, err := giteafake.Deliveries()
	if err != nil {
		return nil, err
	}
	templates := map[string]giteafake.Delivery{}
	for _, d := range recorded {
		templates[d.Name] = d
	}
	var pick []string
	for _, s := range shapes {
		if _, ok := templates[s.name]; !ok {
			return nil, fmt.Errorf("recorded delivery %s missing", s.name)
		}
		for range s.share {
			pick = append(pick, s.name)
		}
	}
	base := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	out := make([]delivery, n)
	for i := range n {
		rng := rand.New(rand.NewPCG(42, uint64(i)))
		t := templates[pick[rng.IntN(len(pick))]]
		var p map[string]any
		if err := json.Unmarshal(t.RawBody, &p); err != nil {
			return nil, fmt.Errorf("decode %s: %w", t.Name, err)
		}
		num := first + i%issues
		issue, _ := p["issue"].(map[string]any)
		if issue == nil {
			return nil, fmt.Errorf("%s carries no issue", t.Name)
		}
		at := base.Add(time.Duration(i) * time.Second).Format(time.RFC3339)
		if _, ok := p["number"]; ok {
			p["number"] = num
		}
		issue["number"], issue["id"] = num, 10000+num
		issue["title"] = fmt.Sprintf("Widget breaks on Tuesdays, case %d", num)
		issue["updated_at"] = at
		labels := make([]any, 1+rng.IntN(6))
		for j, k := range rng.Perm(len(loadLabels))[:len(labels)] {
			labels[j] = loadLabels[k]
		}
		issue["labels"] = labels
		if ms := rng.IntN(5); ms == 0 {
			issue["milestone"] = nil
		} else {
			issue["milestone"] = map[string]any{"id": ms, "title": fmt.Sprintf("v1.%d", ms), "description": "release", "state": "open",
				"open_issues": 10, "closed_issues": 3, "created_at": "2026-11-29T21:21:34Z", "updated_at": at, "closed_at": nil,
				"due_on": fmt.Sprintf("2027-0%d-28T23:59:59Z", ms)}
		}
		if c, ok := p["comment"].(map[string]any); ok {
			c["id"] = 100000 + i
			c["issue_url"] = fmt.Sprintf("http://127.0.0.1:3000/ceo/demo/issues/%d", num)
			c["body"] = fmt.Sprintf("Seen again on case %d; attaching logs.", num)
			c["created_at"], c["updated_at"] = at, at
		}
		body, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			return nil, err
		}
		out[i] = delivery{event: t.Event, body: body}
	}
	return out, nil
}
