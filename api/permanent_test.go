package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/commitea/commitea/worker/gitea/giteafake"
)

// invalidUTF8 marks where sendSignedRaw puts bytes that are not UTF-8:
// encoding/json would replace them before they were sent.
const invalidUTF8 = "INVALID-UTF8-HERE"

// sendSignedRaw is sendSigned with the invalidUTF8 marker replaced by raw
// 0xff 0xfe bytes in the signed body.
func (s ingestStack) sendSignedRaw(t *testing.T, id string, payload map[string]any) *httptest.ResponseRecorder {
	t.Helper()
	body, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	body = bytes.ReplaceAll(body, []byte(invalidUTF8), []byte("\xff\xfe"))
	req := httptest.NewRequest(http.MethodPost, "/webhooks/gitea", bytes.NewReader(body))
	req.Header.Set("X-Gitea-Event", "issues")
	req.Header.Set("X-Gitea-Delivery", id)
	req.Header.Set("X-Gitea-Signature", sign(giteafake.RecordedSecret, body))
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	return rec
}

// TestOddDeliveriesAreNeverRedeliveryBait: every delivery that can never be
// stored as sent must be stored anyway or refused with a 4xx; a 503 would
// have Gitea redeliver it forever. Each case is sent twice (a redelivery
// must get the same answer) and nothing may be answered 5xx.
func TestOddDeliveriesAreNeverRedeliveryBait(t *testing.T) {
	t.Parallel()
	s := newIngestStack(t)
	huge := strings.Repeat("x", 200<<10)
	cases := []struct {
		name   string
		change func(p, issue map[string]any)
	}{
		{"label name of 200 KB", func(_, i map[string]any) {
			i["labels"] = []any{map[string]any{"id": 9, "name": huge, "color": "ffffff"}}
		}},
		{"milestone title of 200 KB", func(_, i map[string]any) {
			i["milestone"] = map[string]any{"id": 4, "title": huge, "description": huge, "state": "open"}
		}},
		{"1,000 assignees", func(_, i map[string]any) {
			as := make([]any, 1000)
			for k := range as {
				as[k] = map[string]any{"id": k + 1, "login": strings.Repeat("a", 100) + strings.Repeat("b", k%7)}
			}
			i["assignees"] = as
		}},
		{"issue number 2^62", func(_, i map[string]any) { i["number"] = int64(1) << 62 }},
		{"issue number beyond int64", func(_, i map[string]any) { i["number"] = 1e30 }},
		{"created in year 1", func(_, i map[string]any) { i["created_at"] = "0001-01-01T00:00:00Z" }},
		{"closed in year 9999", func(_, i map[string]any) { i["closed_at"] = "9999-12-31T23:59:59Z"; i["state"] = "closed" }},
		{"a date that is no date", func(_, i map[string]any) { i["updated_at"] = "yesterday" }},
		{"title of the wrong type", func(_, i map[string]any) { i["title"] = map[string]any{"a": 1} }},
		{"negative milestone id", func(_, i map[string]any) { i["milestone"] = map[string]any{"id": -3, "title": "m", "state": "open"} }},
		{"repository of another project", func(p, _ map[string]any) {
			p["repository"].(map[string]any)["full_name"] = "someone/else"
			p["repository"].(map[string]any)["name"] = "else"
		}},
		{"no issue at all", func(p, _ map[string]any) { delete(p, "issue") }},
		{"invalid UTF-8 in the body", func(_, i map[string]any) { i["body"] = "bad " + invalidUTF8 + " bytes" }},
		{"invalid UTF-8 in a label name", func(_, i map[string]any) {
			i["labels"] = []any{map[string]any{"id": 9, "name": "kind/" + invalidUTF8, "color": "ffffff"}}
		}},
	}
	for k, c := range cases {
		p := recordedOpened(t)
		c.change(p, p["issue"].(map[string]any))
		for try := range 2 {
			rec := s.sendSignedRaw(t, "odd-"+string(rune('a'+k)), p)
			if rec.Code >= 500 || (rec.Code != http.StatusAccepted && (rec.Code < 400 || rec.Code > 499)) {
				t.Errorf("%s (delivery %d): status %d %s; want 202 or a 4xx", c.name, try+1, rec.Code, rec.Body)
			}
			if try == 0 {
				t.Logf("%s: %d %s", c.name, rec.Code, strings.TrimSpace(rec.Body.String()))
			}
		}
	}
}
