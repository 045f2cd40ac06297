package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/commitea/commitea/worker/gitea/giteafake"
)

// recordedOpened is the recorded "issues opened" delivery, decoded so a
// test can change one field and re-sign it.
func recordedOpened(t *testing.T) map[string]any {
	t.Helper()
	ds, err := giteafake.Deliveries()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Name == "002-issues-opened" {
			var v map[string]any
			if err := json.Unmarshal(d.RawBody, &v); err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatal("recorded delivery 002-issues-opened missing")
	return nil
}

func (s ingestStack) sendSigned(t *testing.T, id string, payload map[string]any) *httptest.ResponseRecorder {
	t.Helper()
	body, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/webhooks/gitea", bytes.NewReader(body))
	req.Header.Set("X-Gitea-Event", "issues")
	req.Header.Set("X-Gitea-Delivery", id)
	req.Header.Set("X-Gitea-Signature", sign(giteafake.RecordedSecret, body))
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	return rec
}

func (s ingestStack) rows(t *testing.T, table string) int {
	t.Helper()
	var n int
	if err := s.pool.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPoisonDeliveryIsStored: a signed delivery with NUL in its title and
// body was answered 503 "redeliver it" on every delivery, forever (Postgres
// text refuses NUL). It is permanent, so it is stored: NUL replaced in the
// mirror, the raw payload kept byte for byte.
func TestPoisonDeliveryIsStored(t *testing.T) {
	t.Parallel()
	s := newIngestStack(t)
	p := recordedOpened(t)
	issue := p["issue"].(map[string]any)
	issue["title"] = "Widget\x00breaks"
	issue["body"] = "nul \x00 here"
	issue["labels"] = []any{map[string]any{"id": 7, "name": "kind/\x00bug", "color": "ee0701", "description": "\x00"}}
	issue["milestone"] = map[string]any{"id": 3, "title": "v1\x00", "description": "", "state": "open"}
	for i := range 3 { // redelivered: the same answer each time
		rec := s.sendSigned(t, "nul-delivery", p)
		if rec.Code != http.StatusAccepted {
			t.Fatalf("delivery %d: status %d %s, want 202", i+1, rec.Code, rec.Body)
		}
	}
	got := s.issue(t, 1)
	if got.Title != "Widget\uFFFDbreaks" || got.Body != "nul \uFFFD here" {
		t.Fatalf("stored title %q body %q; want NUL replaced by U+FFFD", got.Title, got.Body)
	}
	m := s.mirror(t)
	if len(m.Labels) != 1 || m.Labels[0].Name != "kind/\uFFFDbug" || len(m.Milestones) != 1 || m.Milestones[0].Title != "v1\uFFFD" {
		t.Fatalf("labels %+v milestones %+v; want the NUL replaced", m.Labels, m.Milestones)
	}
	var raw []byte
	if err := s.pool.QueryRow(context.Background(), `SELECT payload FROM deliveries WHERE id = 'nul-delivery'`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(`Widget\u0000breaks`)) {
		t.Fatalf("raw payload lost its NUL: %.200s", raw)
	}
}

// TestImpossibleDeliveriesRefused: issue numbers below 1 landed in the
// mirror and one payload with 50,000 labels made 50,000 label rows. Each is
// a 400 now, and nothing is written; long text Gitea accepted is stored as
// it is.
func TestImpossibleDeliveriesRefused(t *testing.T) {
	t.Parallel()
	s := newIngestStack(t)
	many := make([]any, 1001)
	for i := range many {
		many[i] = map[string]any{"id": i + 1, "name": fmt.Sprint("l", i), "color": "ffffff"}
	}
	cases := []struct {
		name   string
		id     string
		change func(issue map[string]any)
		want   string
	}{
		{"number 0", "zero", func(i map[string]any) { i["number"] = 0 }, "issue number 0"},
		{"number -5", "minus", func(i map[string]any) { i["number"] = -5 }, "issue number -5"},
		{"1,001 labels", "labels", func(i map[string]any) { i["labels"] = many }, "1001 labels"},
		{"delivery id of 201 bytes", strings.Repeat("x", 201), func(map[string]any) {}, "longer than 200"},
		{"delivery id with a control character", "a\tb", func(map[string]any) {}, "control characters"},
	}
	for _, c := range cases {
		p := recordedOpened(t)
		c.change(p["issue"].(map[string]any))
		rec := s.sendSigned(t, c.id, p)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), c.want) {
			t.Errorf("%s: status %d %s; want 400 naming %q", c.name, rec.Code, rec.Body, c.want)
		}
	}
	for _, table := range []string{"deliveries", "issues", "labels", "milestones", "river_job"} {
		if n := s.rows(t, table); n != 0 {
			t.Errorf("%s has %d rows after refused deliveries; want none", table, n)
		}
	}

	// At the bounds, and long text, everything is stored as sent.
	p := recordedOpened(t)
	issue := p["issue"].(map[string]any)
	issue["labels"] = many[:1000]
	long := strings.Repeat("Ünïcödé text Gitea accepted. ", 20000) // ~600 KB
	issue["body"] = long
	issue["title"] = strings.Repeat("t", 255)
	if rec := s.sendSigned(t, strings.Repeat("y", 200), p); rec.Code != http.StatusAccepted {
		t.Fatalf("delivery at the bounds: status %d %s", rec.Code, rec.Body)
	}
	if got := s.issue(t, 1); got.Body != long || len(got.Labels) != 1000 {
		t.Fatalf("long body stored as %d bytes (want %d), %d labels (want 1000)", len(got.Body), len(long), len(got.Labels))
	}
}

// TestHugeBodyIsStoredAsIs: an issue body of 2.7 MB of distinct words made
// the search vector exceed Postgres' 1 MB, so the upsert failed and the
// delivery was answered 503 on every redelivery. It is stored as it is, and
// found by its first words.
func TestHugeBodyIsStoredAsIs(t *testing.T) {
	t.Parallel()
	s := newIngestStack(t)
	var b strings.Builder
	b.WriteString("zebrafinch ")
	for i := range 300000 {
		fmt.Fprintf(&b, "w%07x ", i*2654435761%(1<<28))
	}
	p := recordedOpened(t)
	p["issue"].(map[string]any)["body"] = b.String()
	if rec := s.sendSigned(t, "huge", p); rec.Code != http.StatusAccepted {
		t.Fatalf("huge body: status %d %s, want 202", rec.Code, rec.Body)
	}
	if got := s.issue(t, 1); got.Body != b.String() {
		t.Fatalf("body stored as %d bytes, want %d as sent", len(got.Body), b.Len())
	}
	var n int
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM issues WHERE search @@ plainto_tsquery('english', 'zebrafinch')`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("search for the first word: %d, %v", n, err)
	}
}
