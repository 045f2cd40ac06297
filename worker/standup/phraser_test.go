package standup

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/worker/models"
	"github.com/commitea/commitea/worker/models/modeltest"
)

// TestModelPhraser drives the real client library against a scripted
// OpenAI-compatible server through the router's small role: grounded prose
// is kept, prose with an invented date and a failing server fall back to
// the template, and usage is recorded under "standup".
func TestModelPhraser(t *testing.T) {
	r := Build(twoDays())
	tmpl := Template(r)
	good := "v1.0 slipped 2 working days to 2026-12-15: #20 joined and #11 grew to est/l. ann did #10 and is on #11; #20 waits for #40. " +
		"bob has #21 and #30 next; cid is on #40, idle 6 working days."
	srv := modeltest.NewOpenAI(t,
		modeltest.Text(good, 900, 40),
		modeltest.Text(good+" It ships on 2026-12-24.", 900, 45),
		modeltest.Status(500, "overloaded"),
	)
	router, ledger, _ := modeltest.Router(t, srv, nil)
	p := ModelPhraser{Model: router.For(models.Small)}
	ctx := context.Background()
	want := []struct{ text, src string }{{good, SourceModel}, {tmpl, SourceTemplate}, {tmpl, SourceTemplate}}
	for i, w := range want {
		text, src := Text(ctx, r, Phrasing{Phraser: p, Location: time.UTC, Log: quiet})
		if text != w.text || src != w.src {
			t.Errorf("call %d: %s %q, want %s", i+1, src, text, w.src)
		}
	}
	reqs := srv.Requests()
	if len(reqs) < 3 || !strings.Contains(reqs[0].LastUser(), "Standup for acme/app") {
		t.Fatalf("requests = %+v", reqs)
	}
	for _, row := range ledger.Rows() {
		if row.Tool != "standup" {
			t.Errorf("usage recorded under %q", row.Tool)
		}
	}
}
