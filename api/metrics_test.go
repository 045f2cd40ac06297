package api

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/metrics"
	"github.com/commitea/commitea/worker/tools"
)

// scrape reads /metrics and returns each sample line's value by its name
// and labels as printed ("name{label=\"v\"}").
func scrape(t *testing.T, h http.Handler) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad sample %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

// TestMetricsMoveWithTraffic sends accepted and refused deliveries and
// checks that the counters and the ingest histogram move by as much; the
// hooks other parts call show up under their labels.
func TestMetricsMoveWithTraffic(t *testing.T) {
	h := newTestRouter(&recordingSink{})
	before := scrape(t, h)
	body := []byte(`{"action":"opened"}`)
	good := map[string]string{"X-Gitea-Signature": sign(testSecret, body), "X-Gitea-Delivery": "m1", "X-Gitea-Event": "issues"}
	for range 3 {
		if rec := post(t, h, body, good); rec.Code != http.StatusAccepted {
			t.Fatal(rec.Code)
		}
	}
	bad := map[string]string{"X-Gitea-Signature": sign("wrong", body), "X-Gitea-Delivery": "m2", "X-Gitea-Event": "issues"}
	for range 2 {
		post(t, h, body, bad)
	}
	post(t, h, []byte(`{"action":`), map[string]string{"X-Gitea-Signature": sign(testSecret, []byte(`{"action":`)), "X-Gitea-Delivery": "m3", "X-Gitea-Event": "issues"})
	metrics.ToolCall("query_project", "ok")
	metrics.ModelRequest("small", "ok", 120, 30)
	metrics.StandupDelivery("webhook", "error")
	metrics.Recomputed("ceo/demo", 250*time.Millisecond)
	after := scrape(t, h)

	delta := func(k string) float64 { return after[k] - before[k] }
	for k, want := range map[string]float64{
		"commitea_deliveries_received_total":                                6,
		`commitea_deliveries_refused_total{reason="bad_signature"}`:         2,
		`commitea_deliveries_refused_total{reason="malformed"}`:             1,
		"commitea_ingest_seconds_count":                                     3,
		`commitea_tool_calls_total{outcome="ok",tool="query_project"}`:      1,
		`commitea_model_requests_total{outcome="ok",role="small"}`:          1,
		`commitea_model_tokens_total{kind="prompt",role="small"}`:           120,
		`commitea_standup_deliveries_total{outcome="error",sink="webhook"}`: 1,
		`commitea_recompute_seconds_count{project="ceo/demo"}`:              1,
	} {
		if got := delta(k); got != want {
			t.Errorf("%s moved by %v, want %v", k, got, want)
		}
	}
	if _, ok := after["go_goroutines"]; !ok {
		t.Error("runtime metrics missing")
	}
}

func TestSnapshotAge(t *testing.T) {
	at := time.Now().Add(-90 * time.Second)
	metrics.SetSnapshotFreshness(func(ctx context.Context) ([]store.Freshness, error) {
		return []store.Freshness{{Project: "ceo/demo", SnapshotVersion: 3, SnapshotAt: at}, {Project: "ceo/new"}}, nil
	})
	defer metrics.SetSnapshotFreshness(nil)
	m := scrape(t, newTestRouter(&recordingSink{}))
	if got := m[`commitea_snapshot_age_seconds{project="ceo/demo"}`]; got < 90 || got > 120 {
		t.Fatalf("snapshot age = %v, want about 90s", got)
	}
	// A project without a snapshot has no age, but its lag is exported.
	if got, ok := m[`commitea_snapshot_age_seconds{project="ceo/new"}`]; ok {
		t.Errorf("a project without a snapshot has an age of %v", got)
	}
	if _, ok := m[`commitea_snapshot_changes_behind{project="ceo/new"}`]; !ok {
		t.Error("a project without a snapshot exports no changes behind")
	}
}

func TestDashboardAndRiverUIAuth(t *testing.T) {
	t.Parallel()
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "page "+r.URL.Path) })
	h := NewRouter(Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Dashboard: ok, RiverUI: ok, TokenLinks: true, Tokens: []Token{
		{Name: "reader", Scopes: []string{tools.ScopeRead}, Secret: "reader-secret-0123456789"},
		{Name: "ops", Scopes: []string{tools.ScopeRead, tools.ScopeApprove}, Secret: "ops-secret-0123456789"},
	}})
	do := func(path string, set func(*http.Request)) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if set != nil {
			set(req)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	if rec := do("/dashboard/ceo/demo/", nil); rec.Code != http.StatusUnauthorized {
		t.Fatalf("no token: %d", rec.Code)
	}
	rec := do("/dashboard/ceo/demo/runway?token=reader-secret-0123456789", nil)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/dashboard/ceo/demo/runway" {
		t.Fatalf("token in query: %d to %q", rec.Code, rec.Header().Get("Location"))
	}
	cookies := rec.Result().Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly {
		t.Fatalf("cookie = %+v", cookies)
	}
	rec = do("/dashboard/ceo/demo/runway", func(r *http.Request) { r.AddCookie(cookies[0]) })
	if rec.Code != http.StatusOK || rec.Body.String() != "page /ceo/demo/runway" {
		t.Fatalf("with cookie: %d %q", rec.Code, rec.Body)
	}
	bearer := func(s string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+s) }
	}
	if rec := do("/riverui/", bearer("reader-secret-0123456789")); rec.Code != http.StatusForbidden {
		t.Fatalf("river UI with a read token: %d", rec.Code)
	}
	if rec := do("/riverui/jobs", bearer("ops-secret-0123456789")); rec.Code != http.StatusOK {
		t.Fatalf("river UI with an approve token: %d", rec.Code)
	}
	if rec := do("/dashboard/", bearer("not-a-token-at-all")); rec.Code != http.StatusUnauthorized {
		t.Fatalf("unknown token: %d", rec.Code)
	}

	// With token links off (serve's default) neither the link nor its
	// cookie opens a page; the bearer header still does.
	off := NewRouter(Config{Dashboard: ok, RiverUI: ok, Tokens: []Token{{Name: "reader", Scopes: []string{tools.ScopeRead}, Secret: "reader-secret-0123456789"}}})
	for _, set := range []func(*http.Request){
		func(r *http.Request) { r.URL.RawQuery = "token=reader-secret-0123456789" },
		func(r *http.Request) { r.AddCookie(cookies[0]) },
	} {
		req := httptest.NewRequest(http.MethodGet, "/dashboard/ceo/demo/", nil)
		set(req)
		rec := httptest.NewRecorder()
		off.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "dashboard.token_links") {
			t.Fatalf("token links off: %d %s", rec.Code, rec.Body)
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/dashboard/ceo/demo/", nil)
	bearer("reader-secret-0123456789")(req)
	rec = httptest.NewRecorder()
	off.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("bearer header with token links off: %d", rec.Code)
	}
}

// With a metrics token set, /metrics answers 401 without it or with another
// token, and the metrics with it; without one it stays open.
func TestMetricsToken(t *testing.T) {
	const token = "metrics-token-0123456789"
	h := NewRouter(Config{MetricsToken: token, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	for _, c := range []struct {
		header string
		want   int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer wrong-token-0123456789", http.StatusUnauthorized},
		{"Basic " + token, http.StatusUnauthorized},
		{"Bearer " + token, http.StatusOK},
	} {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if c.header != "" {
			req.Header.Set("Authorization", c.header)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("Authorization %q: %d, want %d", c.header, rec.Code, c.want)
		}
		if c.want == http.StatusOK && !strings.Contains(rec.Body.String(), "commitea_") {
			t.Errorf("metrics body lacks commitea_ metrics")
		}
	}
	open := NewRouter(Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	scrape(t, open)
}
