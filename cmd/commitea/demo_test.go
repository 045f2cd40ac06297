package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/commitea/commitea/cmd/commitea/config/configtest"
	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker"
)

// syncBuffer is a bytes.Buffer safe to read while demo writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runningDemo is a `commitea demo` started in-process on a free port and a
// database of its own, dropped when the test ends.
type runningDemo struct {
	banner string
	dash   string // the dashboard link as printed, with its token
	token  string
	base   string // http://127.0.0.1:port
	forge  string
	db     string
	out    *syncBuffer
	errOut *syncBuffer
	ctx    context.Context
}

// startDemo runs demo with args after --addr and --database, waits for its
// banner, and stops it when the test ends.
func startDemo(t *testing.T, args ...string) *runningDemo {
	t.Helper()
	return startDemoWith(t, nil, args...)
}

// startDemoWith is startDemo with more environment variables.
func startDemoWith(t *testing.T, extra map[string]string, args ...string) *runningDemo {
	t.Helper()
	d := &runningDemo{db: fmt.Sprintf("commitea_demo_test_%d", time.Now().UnixNano()%1_000_000), out: &syncBuffer{}, errOut: &syncBuffer{}}
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), storetest.URL())
		if err != nil {
			return
		}
		defer conn.Close(context.Background())
		_, _ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{d.db}.Sanitize()+" WITH (FORCE)")
	})
	env := map[string]string{"DATABASE_URL": storetest.URL(), "COMMITEA_LOG_LEVEL": "warn"}
	maps.Copy(env, extra)
	m := &Main{Stdout: d.out, Stderr: d.errOut, Getenv: configtest.Getenv(env)}
	ctx, cancel := context.WithCancel(context.Background())
	d.ctx = ctx
	done := make(chan error, 1)
	go func() {
		done <- m.Run(ctx, append([]string{"demo", "--addr", "127.0.0.1:0", "--database", d.db}, args...))
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("demo returned %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("demo did not stop within 30s")
		}
		_ = m.Close()
	})
	waitFor(t, "the demo banner", 3*time.Minute, func() bool {
		select {
		case err := <-done:
			t.Fatalf("demo stopped: %v\n%s", err, d.errOut)
		default:
		}
		return strings.Contains(d.out.String(), "Press Ctrl-C")
	})
	d.banner = d.out.String()
	d.dash = d.find(t, `(http://\S+/dashboard/\?token=\S+)`)
	d.token = d.find(t, `(?m)^Token.*\n\s+(\S+)`)
	d.forge = d.find(t, `forge\s+(http://\S+)`)
	d.base = strings.Split(d.dash, "/dashboard/")[0]
	return d
}

// admin is a connection to the PostgreSQL server the demo runs on.
func (d *runningDemo) admin(t *testing.T) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), storetest.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// find returns the first group of re in the banner.
func (d *runningDemo) find(t *testing.T, re string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(d.banner)
	if m == nil {
		t.Fatalf("banner lacks %s:\n%s", re, d.banner)
	}
	return m[1]
}

// TestDemo runs `commitea demo` as a newcomer would, on a database of its
// own: it must come up, print working links, and a change made in the forge
// (an estimate, as apply_changes makes it) must reach the service as a
// webhook and move the milestone's forecast on the dashboard.
func TestDemo(t *testing.T) {
	d := startDemo(t)
	ctx := d.ctx
	banner, dash, token, forge, base := d.banner, d.dash, d.token, d.forge, d.base
	find := func(re string) string { return d.find(t, re) }
	// The demo turns token links on, and start-up says so.
	if !strings.Contains(d.errOut.String(), "dashboard.token_links is on") {
		t.Errorf("no start-up note about token links:\n%s", d.errOut)
	}
	for _, tool := range []string{"query_project", "apply_changes", "record_directive", "capture_work"} {
		if !strings.Contains(banner, "/v1/tools/"+tool) {
			t.Errorf("banner has no curl for %s", tool)
		}
	}
	if !strings.Contains(banner, `"mcpServers"`) {
		t.Error("banner has no MCP configuration")
	}

	// The dashboard link works as printed: it sets the cookie and lands on
	// the board.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, err := browser.Get(dash)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `data-state="steeping"`) {
		t.Fatalf("dashboard link: %d %.300s", resp.StatusCode, body)
	}

	// Sign-in with Gitea works as printed: the guest signs in on the
	// forge's login page, grants CommiTea access, and lands on an index
	// that shows nothing of the private project.
	password := find(`password (\S+) for each`)
	jar, _ = cookiejar.New(nil)
	person := &http.Client{Jar: jar}
	resp, err = person.Get(base + "/auth/login?next=/dashboard/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Request.URL.Path != "/user/login" {
		t.Fatalf("sign-in did not reach the forge's login page: %s", resp.Request.URL)
	}
	resp, err = person.PostForm(forge+"/user/login", url.Values{"user_name": {"guest"}, "password": {password},
		"redirect_to": {resp.Request.URL.Query().Get("redirect_to")}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	grant := url.Values{"granted": {"true"}}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`).FindAllStringSubmatch(string(body), -1) {
		grant.Set(m[1], strings.ReplaceAll(m[2], "&amp;", "&"))
	}
	resp, err = person.PostForm(forge+"/login/oauth/grant", grant)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "No project here is yours") || !strings.Contains(string(body), ">guest<") {
		t.Fatalf("guest after signing in: %d %s %.400s", resp.StatusCode, resp.Request.URL, body)
	}
	for path, want := range map[string]int{"/dashboard/acme/teapot/": http.StatusNotFound, "/riverui/": http.StatusForbidden} {
		resp, err := person.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("guest: %s answers %d, want %d", path, resp.StatusCode, want)
		}
	}

	// The printed query_project curl answers from the snapshot.
	_ = find(`(curl -s .*query_project -d '\{"view":"runway"\}')`)
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/tools/query_project", strings.NewReader(`{"view":"runway"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "v1.0 Launch") {
		t.Fatalf("query_project runway: %d %.300s", resp.StatusCode, body)
	}

	// The banner's export lines are what the CLI reads.
	if got := find(`export COMMITEA_URL=(\S+)`); got != base {
		t.Errorf("export COMMITEA_URL=%s, want %s", got, base)
	}
	if got := find(`export DATABASE_URL='(\S+)'`); !strings.Contains(got, "/"+d.db+"?") {
		t.Errorf("export DATABASE_URL=%s names another database than %s", got, d.db)
	}
	var toolOut, toolErr bytes.Buffer
	cli := &Main{Stdout: &toolOut, Stderr: &toolErr, Getenv: configtest.Getenv(map[string]string{
		"COMMITEA_URL": find(`export COMMITEA_URL=(\S+)`), "COMMITEA_TOKEN": find(`export COMMITEA_TOKEN=(\S+)`)})}
	if err := cli.Run(ctx, []string{"tool", "query_project", `{"view":"runway"}`}); err != nil || !strings.Contains(toolOut.String(), "v1.0 Launch") {
		t.Errorf("commitea tool with the exported variables: %v\n%s%s", err, toolOut.String(), toolErr.String())
	}
	_ = cli.Close()

	// A second demo on the same database is refused and leaves the first
	// one serving its data; one on the same address is refused before it
	// touches any database.
	second := func(args ...string) error {
		m := &Main{Stdout: io.Discard, Stderr: io.Discard, Getenv: configtest.Getenv(map[string]string{"DATABASE_URL": storetest.URL(), "COMMITEA_LOG_LEVEL": "warn"})}
		defer m.Close()
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		return m.Run(ctx, append([]string{"demo"}, args...))
	}
	var oidBefore, oidAfter uint32
	if err := d.admin(t).QueryRow(ctx, `SELECT oid FROM pg_database WHERE datname = $1`, d.db).Scan(&oidBefore); err != nil {
		t.Fatal(err)
	}
	if err := second("--addr", "127.0.0.1:0", "--database", d.db); err == nil || !strings.Contains(err.Error(), "is in use") {
		t.Errorf("a second demo on %s: %v, want refused as in use", d.db, err)
	}
	// Untouched: the same database (not dropped and made again).
	if err := d.admin(t).QueryRow(ctx, `SELECT oid FROM pg_database WHERE datname = $1`, d.db).Scan(&oidAfter); err != nil || oidAfter != oidBefore {
		t.Errorf("the refused demo replaced %s (oid %d, now %d, %v)", d.db, oidBefore, oidAfter, err)
	}
	fresh := d.db + "_second"
	if err := second("--addr", strings.TrimPrefix(base, "http://"), "--database", fresh); err == nil || !strings.Contains(err.Error(), "cannot listen") {
		t.Errorf("a second demo on %s: %v, want refused for the address", base, err)
	}
	var freshExists bool
	if err := d.admin(t).QueryRow(ctx, `SELECT exists (SELECT FROM pg_database WHERE datname = $1)`, fresh).Scan(&freshExists); err != nil || freshExists {
		t.Errorf("the refused demo created its database %s (%v)", fresh, err)
	}

	// The imported project: 400+ issues, four milestones, one hard.
	pool, p := d.project(t)
	snap := latest(t, pool, p.ID)
	if snap.Counts.Issues < 400 || len(snap.Forecast.Milestones) != 4 || !snap.Forecast.Milestones[0].Hard {
		t.Fatalf("demo project: %+v, milestones %+v", snap.Counts, snap.Forecast.Milestones)
	}
	before := snap.Forecast.Milestones[0]

	// The demo's standup is a report with a drift (its first standup
	// compares with the history's previous working day) that names every
	// milestone at risk.
	req, _ = http.NewRequest(http.MethodGet, base+"/dashboard/acme/teapot/standup", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(body)
	if resp.StatusCode != http.StatusOK || strings.Contains(page, "nothing to compare against") || !strings.Contains(page, "read back from the history") {
		t.Errorf("the demo's standup page has no drift: %d\n%.3000s", resp.StatusCode, page)
	}
	for _, m := range snap.Forecast.Milestones {
		if !m.Due.IsZero() && m.Open > 0 && m.P80.After(m.Due) && !strings.Contains(page, m.Title) {
			t.Errorf("the standup page does not name %s, at risk (p80 %s, due %s)", m.Title, m.P80.Format(time.DateOnly), m.Due.Format(time.DateOnly))
		}
	}

	// The printed apply_changes works as printed: it writes the estimate
	// through the forge and answers with the consequence.
	applyBody := find(`/v1/tools/apply_changes -d '(\{.*\})'`)
	req, _ = http.NewRequest(http.MethodPost, base+"/v1/tools/apply_changes", strings.NewReader(applyBody))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"applied":1`) {
		t.Fatalf("apply_changes as printed: %d %.300s", resp.StatusCode, body)
	}

	// The printed forge curl changes another issue than apply_changes did,
	// and its webhook reaches the mirror.
	forgeIssue := find(`issues/(\d+)/labels -d '\{"labels":\["est/xl"\]\}'`)
	if applied := find(`"set_estimate","issue":(\d+)`); applied == forgeIssue {
		t.Errorf("the forge curl re-estimates #%s, which the apply_changes curl already made est/xl", forgeIssue)
	}
	req, _ = http.NewRequest(http.MethodPost, forge+"/api/v1/repos/acme/teapot/issues/"+forgeIssue+"/labels", strings.NewReader(`{"labels":["est/xl"]}`))
	req.Header.Set("Authorization", "token "+find(`token (\S+)\)`))
	req.Header.Set("Content-Type", "application/json")
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the printed forge curl: %v %v", err, resp)
	}
	resp.Body.Close()
	waitFor(t, "the forge curl's webhook to reach the mirror", 30*time.Second, func() bool {
		var labels []string
		err := pool.QueryRow(ctx, `SELECT labels FROM issues WHERE project_id = $1 AND number = $2`, p.ID, forgeIssue).Scan(&labels)
		return err == nil && slices.Contains(labels, "est/xl")
	})

	// Make every open est/s issue of the launch est/xl in the forge, the way
	// apply_changes writes an estimate; the webhooks must move the cone.
	cards, err := store.IssueCards(ctx, pool, p.ID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	changed := 0
	for _, c := range cards {
		if c.State == "open" && c.Milestone != nil && *c.Milestone == 1 && !strings.Contains(strings.Join(c.Labels, ","), "est/x") {
			req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/api/v1/repos/acme/teapot/issues/%d/labels", forge, c.Number), strings.NewReader(`{"labels":["est/xl"]}`))
			req.Header.Set("Authorization", "token fake-token")
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("label #%d: %v %v", c.Number, err, resp)
			}
			resp.Body.Close()
			changed++
		}
	}
	if changed == 0 {
		t.Fatal("no launch issue to re-estimate")
	}
	var after scheduler.MilestoneForecast
	waitFor(t, "the re-estimate to reach the forecast", 60*time.Second, func() bool {
		after = latest(t, pool, p.ID).Forecast.Milestones[0]
		return after.P80.After(before.P80)
	})
	t.Logf("launch p50/p80 moved from %s/%s to %s/%s", before.P50.Format(time.DateOnly), before.P80.Format(time.DateOnly), after.P50.Format(time.DateOnly), after.P80.Format(time.DateOnly))

	req, _ = http.NewRequest(http.MethodGet, base+"/dashboard/acme/teapot/milestones/1", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "p80 "+after.P80.Format("2 Jan")) {
		t.Fatalf("the cone does not show the new p80 %s", after.P80.Format("2 Jan"))
	}
	resp, err = http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `commitea_snapshot_age_seconds{project="acme/teapot"}`) {
		t.Fatal("metrics lack the demo project's snapshot age")
	}
}

func mustDatabaseURL(t *testing.T, name string) string {
	t.Helper()
	u, err := withDatabase(storetest.URL(), name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// project opens the demo's database and finds its project, acme/teapot;
// the pool closes when the test ends.
func (d *runningDemo) project(t *testing.T) (*store.Pool, store.Project) {
	t.Helper()
	pool, err := store.Open(context.Background(), mustDatabaseURL(t, d.db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	p, err := store.ProjectByName(context.Background(), pool, "acme/teapot")
	if err != nil {
		t.Fatal(err)
	}
	return pool, p
}

func latest(t *testing.T, pool *store.Pool, projectID int64) worker.SnapshotData {
	t.Helper()
	s, err := store.LatestSnapshot(context.Background(), pool, projectID)
	if err != nil {
		t.Fatal(err)
	}
	var d worker.SnapshotData
	if err := json.Unmarshal(s.Data, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// The demo drops only databases it made: not the one DATABASE_URL names,
// and not one that holds anything but a demo's project; it refuses before
// touching them.
func TestDemoKeepsOtherDatabases(t *testing.T) {
	ctx := context.Background()
	foreign := fmt.Sprintf("commitea_demo_test_foreign_%d", time.Now().UnixNano()%1_000_000)
	admin, err := pgx.Connect(ctx, storetest.URL())
	if err != nil {
		t.Fatal(err)
	}
	// Closed by a cleanup, not a defer: the drop below runs as a cleanup
	// too, after the function returns, and needs the connection open.
	t.Cleanup(func() { _ = admin.Close(context.Background()) })
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+foreign); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+foreign+" WITH (FORCE)") })
	conn, err := pgx.Connect(ctx, mustDatabaseURL(t, foreign))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE invoices (id int); INSERT INTO invoices VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	run := func(db string) error {
		m := &Main{Stdout: io.Discard, Stderr: io.Discard, Getenv: configtest.Getenv(map[string]string{"DATABASE_URL": storetest.URL(), "COMMITEA_LOG_LEVEL": "warn"})}
		defer m.Close()
		return m.Run(ctx, []string{"demo", "--addr", "127.0.0.1:0", "--database", db})
	}
	if err := run(foreign); err == nil || !strings.Contains(err.Error(), "was not made by commitea demo") {
		t.Errorf("demo on a foreign database: %v", err)
	}
	conn, err = pgx.Connect(ctx, mustDatabaseURL(t, foreign))
	if err != nil {
		t.Fatalf("the foreign database is gone: %v", err)
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM invoices").Scan(&n); err != nil || n != 1 {
		t.Errorf("the foreign database was touched: %d rows, %v", n, err)
	}
	conn.Close(ctx)
	if err := run(admin.Config().Database); err == nil || !strings.Contains(err.Error(), "the database DATABASE_URL connects to") {
		t.Errorf("demo on DATABASE_URL's own database: %v", err)
	}
}

func TestDemoOrigin(t *testing.T) {
	now := time.Date(2026, 12, 5, 22, 30, 0, 0, time.FixedZone("x", 5*3600))
	cases := []struct {
		date string
		want time.Time
		err  bool
	}{
		{"", time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC), false},
		{"2026-12-01", time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), false},
		{"1 Dec", time.Time{}, true},
	}
	for _, c := range cases {
		got, err := demoOrigin(c.date, now)
		if (err != nil) != c.err || !got.Equal(c.want) {
			t.Errorf("demoOrigin(%q) = %v, %v; want %v (error %v)", c.date, got, err, c.want, c.err)
		}
		if err != nil && !errors.As(err, new(usageError)) {
			t.Errorf("demoOrigin(%q): %v is not a usage error", c.date, err)
		}
	}
}

// The same --seed and --date give the same project, byte for byte: two
// demos, one after the other and each on a database of its own, import the
// same mirror and issue history and make the same first forecast.
func TestDemoIsDeterministicForASeedAndADate(t *testing.T) {
	digest := func(d *runningDemo) (mirror, history, forecast string) {
		ctx := d.ctx
		pool, err := store.Open(ctx, mustDatabaseURL(t, d.db))
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		p, err := store.ProjectByName(ctx, pool, "acme/teapot")
		if err != nil {
			t.Fatal(err)
		}
		if err := waitForSnapshot(ctx, pool, p.ID); err != nil {
			t.Fatal(err)
		}
		var m store.Mirror
		var versions []store.IssueVersion
		err = store.InSnapshotTx(ctx, pool, func(tx store.Tx) error {
			var err error
			if m, err = store.LoadMirror(ctx, tx, p.ID); err != nil {
				return err
			}
			versions, err = store.IssueHistory(ctx, tx, p.ID)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		var first struct {
			InputsHash string
			Milestones json.RawMessage
		}
		if err := pool.QueryRow(ctx, `SELECT inputs_hash, data->'forecast'->'milestones' FROM snapshots WHERE project_id = $1 ORDER BY version LIMIT 1`,
			p.ID).Scan(&first.InputsHash, &first.Milestones); err != nil {
			t.Fatal(err)
		}
		hash := func(v any) string {
			raw, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(raw)
			return fmt.Sprintf("%x (%d bytes)", sum[:8], len(raw))
		}
		return hash(m), hash(versions), first.InputsHash + " " + hash(first.Milestones)
	}
	a := startDemo(t, "--seed", "3", "--date", "2026-06-01")
	m1, h1, f1 := digest(a)
	b := startDemo(t, "--seed", "3", "--date", "2026-06-01")
	m2, h2, f2 := digest(b)
	t.Logf("mirror %s, history %s, first forecast %s", m1, h1, f1)
	if m1 != m2 {
		t.Errorf("the mirror differs between two demos of one seed and date: %s and %s", m1, m2)
	}
	if h1 != h2 {
		t.Errorf("the issue history differs: %s and %s", h1, h2)
	}
	if f1 != f2 {
		t.Errorf("the first forecast differs: %s and %s", f1, f2)
	}
	if !strings.Contains(a.banner, "clock     2026-06-01 09:") {
		t.Errorf("the banner does not show the pinned clock:\n%s", a.banner)
	}
}
