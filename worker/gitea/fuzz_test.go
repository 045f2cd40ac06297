package gitea_test

import (
	"errors"
	"testing"

	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
)

// FuzzDecodeDelivery: any body under any event header decodes to a
// change or to ErrMalformedDelivery (the handler's 400), never a panic or
// another error (which would be a 503, and Gitea would redeliver it
// forever); a change to store has a possible issue number and label count.
func FuzzDecodeDelivery(f *testing.F) {
	ds, err := giteafake.Deliveries()
	if err != nil {
		f.Fatal(err)
	}
	for _, d := range ds {
		f.Add(d.Event, d.RawBody)
	}
	f.Add("issues", []byte(`{"action":"opened","issue":{"number":0},"repository":{"full_name":"a/b"}}`))
	f.Add("issue_comment", []byte(`{"action":"created","issue":{"number":1,"title":"\u0000"},"comment":{"id":1},"repository":{}}`))
	f.Add("pull_request_review", []byte(`{"action":"reviewed","pull_request":{"number":2,"labels":[{"id":1}]},"repository":{"full_name":"a/b"}}`))
	f.Fuzz(func(t *testing.T, event string, body []byte) {
		ch, err := gitea.DecodeDelivery(event, body)
		if err != nil {
			if !errors.Is(err, gitea.ErrMalformedDelivery) {
				t.Fatalf("error that is not ErrMalformedDelivery: %v", err)
			}
			return
		}
		if ch.Ignored || ch.Issue == nil {
			return
		}
		if ch.Issue.Number < 1 {
			t.Fatalf("issue number %d accepted", ch.Issue.Number)
		}
		if len(ch.Labels) > gitea.MaxLabelsPerIssue || len(ch.Issue.Labels) > gitea.MaxLabelsPerIssue {
			t.Fatalf("%d labels accepted", len(ch.Labels))
		}
	})
}
