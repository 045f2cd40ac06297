package api

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
)

// FuzzWebhook: the webhook handler end to end with the real decoder, for
// signed bodies under any event and delivery id. A signed delivery is
// either taken (202, one submission, a possible issue) or refused for
// good (400, 413): never a 5xx, which would have Gitea redeliver a
// delivery that can never succeed.
func FuzzWebhook(f *testing.F) {
	ds, err := giteafake.Deliveries()
	if err != nil {
		f.Fatal(err)
	}
	for _, d := range ds {
		f.Add(d.Event, d.Headers["X-Gitea-Delivery"], d.RawBody)
	}
	f.Add("issues", "nul", []byte(`{"action":"opened","issue":{"number":1,"title":"\u0000"},"repository":{"full_name":"ceo/demo"}}`))
	f.Add("issues", "", []byte(`{}`))
	f.Add("issues\x00", "id\xff", []byte(`[]`))
	f.Fuzz(func(t *testing.T, event, id string, body []byte) {
		sink := &recordingSink{}
		h := NewRouter(Config{WebhookSecret: testSecret, MaxBodyBytes: 1 << 20, Sink: sink, Decode: gitea.DecodeDelivery, Log: quietLog()})
		req := httptest.NewRequest(http.MethodPost, "/webhooks/gitea", bytes.NewReader(body))
		req.Header["X-Gitea-Event"] = []string{event}
		req.Header["X-Gitea-Delivery"] = []string{id}
		req.Header.Set("X-Gitea-Signature", sign(testSecret, body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusAccepted:
			if len(sink.got) != 1 || sink.got[0].DeliveryID != id || !bytes.Equal(sink.got[0].Payload, body) {
				t.Fatalf("202 without the delivery submitted as sent: %+v", sink.got)
			}
			if c := sink.got[0].Change; !c.Ignored && c.Issue != nil && c.Issue.Number < 1 {
				t.Fatalf("202 for issue number %d", c.Issue.Number)
			}
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			if len(sink.got) != 0 {
				t.Fatalf("%d after submitting", rec.Code)
			}
		default:
			t.Fatalf("signed delivery answered %d: %s", rec.Code, rec.Body)
		}
	})
}
