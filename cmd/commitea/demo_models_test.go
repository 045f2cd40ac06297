package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/metrics"
	"github.com/commitea/commitea/worker/models/modeltest"
	"github.com/commitea/commitea/worker/standup/sinktest"
)

// proseCount is commitea_prose_total for the standup with outcome, as
// /metrics shows it.
func proseCount(t *testing.T, outcome string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	var n float64
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if !strings.HasPrefix(line, "commitea_prose_total{") || !strings.Contains(line, `use="standup"`) ||
			!strings.Contains(line, `outcome="`+outcome+`"`) {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		n += v
	}
	return n
}

// The demo with a small model that says nothing ("All work is on track.")
// and a standup webhook in its environment: the banner names the model,
// the standup of record is the template, a metric counts the rejected
// prose, and the webhook gets nothing.
func TestDemoWithAModelThatSaysNothing(t *testing.T) {
	small := modeltest.NewOpenAI(t)
	small.Handle(func(modeltest.Request) modeltest.Reply { return modeltest.Text("All work is on track.", 800, 6) })
	hook := sinktest.NewEndpoint(t)
	rejected := proseCount(t, "rejected")
	d := startDemoWith(t, map[string]string{
		"COMMITEA_SMALL_MODEL": "openai:gemma-3-4b-it", "COMMITEA_SMALL_BASE_URL": small.BaseURL(),
		"COMMITEA_STANDUP_WEBHOOK_URL": hook.URL, "COMMITEA_STANDUP_WEBHOOK_SECRET": "0123456789abcdef0123",
		// Every day a working day, so the demo makes today's standup.
		"COMMITEA_CALENDAR_WORKING_DAYS": "mon,tue,wed,thu,fri,sat,sun",
	})
	for _, want := range []string{"small  openai:gemma-3-4b-it", "big    none", "standups are delivered nowhere"} {
		if !strings.Contains(d.banner, want) {
			t.Errorf("banner lacks %q:\n%s", want, d.banner)
		}
	}
	if strings.Contains(d.banner, "capture_work answers MODEL_UNAVAILABLE until") {
		t.Errorf("banner still has the old capture_work line")
	}
	ctx := context.Background()
	pool, p := d.project(t)
	st, err := store.LatestStandup(ctx, pool, p.ID)
	if err != nil {
		t.Fatalf("no standup of record: %v", err)
	}
	if !strings.HasPrefix(st.Text, "Standup for acme/teapot, ") || strings.Contains(st.Text, "All work is on track") {
		t.Errorf("the standup of record is not the template:\n%s", st.Text)
	}
	if len(small.Requests()) == 0 {
		t.Error("the model was never asked")
	}
	if got := proseCount(t, "rejected"); got <= rejected {
		t.Errorf("commitea_prose_total{use=standup,outcome=rejected} = %v, was %v", got, rejected)
	}
	// No delivery is recorded, queued or sent.
	time.Sleep(500 * time.Millisecond)
	var deliveries, jobs int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM standup_deliveries`).Scan(&deliveries); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'standup_delivery'`).Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if deliveries != 0 || jobs != 0 || len(hook.Received()) != 0 {
		t.Errorf("the demo delivered: %d delivery rows, %d jobs, %d requests at the webhook", deliveries, jobs, len(hook.Received()))
	}
}
