package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/commitea/commitea/cmd/commitea/config"
	"github.com/commitea/commitea/cmd/commitea/config/configtest"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/models/modeltest"
)

func TestStandupSinkConfig(t *testing.T) {
	env := map[string]string{
		"DATABASE_URL":                         "postgres://u@h/db",
		"COMMITEA_PROJECTS":                    "acme/app,acme/web",
		"COMMITEA_STANDUP_WEBHOOK_URL":         "https://hooks.example.org/standup",
		"COMMITEA_STANDUP_WEBHOOK_SECRET":      "0123456789abcdef",
		"COMMITEA_STANDUP_SLACK_URL":           "https://hooks.slack.com/services/T/B/X",
		"COMMITEA_STANDUP_MATRIX_HOMESERVER":   "https://matrix.example.org",
		"COMMITEA_STANDUP_MATRIX_ROOM":         "!room:example.org",
		"COMMITEA_STANDUP_MATRIX_ACCESS_TOKEN": "syt_token",
		"COMMITEA_STANDUP_SMTP_ADDR":           "smtp.example.org:587",
		"COMMITEA_STANDUP_EMAIL_FROM":          "commitea@example.org",
		"COMMITEA_STANDUP_EMAIL_TO":            "team@example.org, pm@example.org",
		"COMMITEA_STANDUP_GITEA_ISSUES":        "acme/app#7",
	}
	cfg, err := config.Load("", configtest.Getenv(env))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.ValidateFor("standup"); err != nil {
		t.Fatal(err)
	}
	sinks := standupSinks(cfg, nil)
	names := func(p store.Project) string {
		var out []string
		for _, s := range sinks(p) {
			out = append(out, s.Name())
		}
		return strings.Join(out, ",")
	}
	if got := names(store.Project{Owner: "acme", Name: "app"}); got != "webhook,slack,matrix,email" {
		t.Errorf("sinks of acme/app without a Gitea client = %s", got)
	}
	if s := cfg.String(); strings.Contains(s, "syt_token") || strings.Contains(s, "services/T/B/X") || strings.Contains(s, "0123456789abcdef") {
		t.Errorf("configuration prints a secret:\n%s", s)
	}

	bad := []struct {
		name   string
		mutate func(*config.Config)
		want   string
	}{
		{"webhook without secret", func(c *config.Config) { c.Standup.Webhook.Secret = "" }, "COMMITEA_STANDUP_WEBHOOK_SECRET (standup.webhook.secret): must be at least 16 characters"},
		{"matrix alias", func(c *config.Config) { c.Standup.Matrix.Room = "#standup:example.org" }, "COMMITEA_STANDUP_MATRIX_ROOM (standup.matrix.room): must be a room id"},
		{"email without recipients", func(c *config.Config) { c.Standup.Email.To = nil }, "COMMITEA_STANDUP_EMAIL_TO (standup.email.to): required"},
		{"gitea issue form", func(c *config.Config) { c.Standup.GiteaIssues = []string{"acme/app"} }, `"acme/app" is not in owner/repo#number form`},
		{"gitea issue project", func(c *config.Config) { c.Standup.GiteaIssues = []string{"other/x#1"} }, "other/x is not a configured project"},
	}
	for _, b := range bad {
		c := cfg
		c.Standup.Email.To = append([]string(nil), cfg.Standup.Email.To...)
		b.mutate(&c)
		err := c.ValidateFor("standup")
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: err = %v, want %q", b.name, err, b.want)
		}
	}
}

// forecastProject is acme/app generated and backfilled in a database of
// its own, with a snapshot computed now.
func forecastProject(t *testing.T, shape storetest.ProjectShape) (string, *store.Pool, store.Project, time.Time) {
	t.Helper()
	dbURL, pool := storetest.NewDB(t)
	ctx := context.Background()
	p, err := store.EnsureProject(ctx, pool, "acme", "app")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if err := storetest.SeedProject(ctx, pool, p.ID, shape, now); err != nil {
		t.Fatal(err)
	}
	if err := store.PutSyncState(ctx, pool, store.SyncState{ProjectID: p.ID, LastSyncedAt: &now, BackfillDoneAt: &now}); err != nil {
		t.Fatal(err)
	}
	f := &worker.Forecaster{Pool: pool, Log: slog.New(slog.DiscardHandler), Trials: 200}
	if err := f.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	return dbURL, pool, p, now
}

// TestStandupCommand prints today's standup of a generated project: a dry
// run writes nothing, a real run stores the standup of record and prints
// the same text on a second run.
func TestStandupCommand(t *testing.T) {
	dbURL, pool, p, now := forecastProject(t, storetest.ProjectShape{Open: 40, Done: 30, People: 3, DepShare: 0.2, Milestones: 2, Seed: 5})
	ctx := context.Background()
	// Every day works, so the test does not depend on the weekday it runs.
	env := map[string]string{"DATABASE_URL": dbURL, "COMMITEA_CALENDAR_WORKING_DAYS": "mon,tue,wed,thu,fri,sat,sun"}
	run := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		m := &Main{Stdout: &out, Stderr: &errOut, Getenv: configtest.Getenv(env)}
		err := m.Run(ctx, args)
		if cerr := m.Close(); cerr != nil {
			t.Error(cerr)
		}
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errOut.String())
		}
		return out.String()
	}
	dry := run("standup", "--project", "acme/app", "--dry-run")
	if !strings.HasPrefix(dry, "Standup for acme/app, ") || !strings.Contains(dry, "first standup") {
		t.Errorf("dry run printed:\n%s", dry)
	}
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	if _, err := store.StandupOn(ctx, pool, p.ID, day); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a dry run stored a standup (%v)", err)
	}
	first := run("standup", "--project", "acme/app")
	again := run("standup", "--project", "acme/app")
	st, err := store.StandupOn(ctx, pool, p.ID, day)
	if err != nil {
		t.Fatal(err)
	}
	if first != st.Text || again != first {
		t.Errorf("printed standups differ from the stored one:\n%s\n---\n%s\n---\n%s", first, again, st.Text)
	}

	var out, errOut bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &errOut, Getenv: configtest.Getenv(env)}
	err = m.Run(ctx, []string{"standup", "--project", "nope"})
	if !errors.As(err, new(usageError)) {
		t.Errorf("bad --project: err = %v, want a usage error", err)
	}
}

// rowCounts counts the rows of every table of the database, River's too.
func rowCounts(t *testing.T, pool *store.Pool) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	rows, err := pool.Query(ctx, `SELECT schemaname, relname FROM pg_stat_user_tables ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var schema, name string
		if err := rows.Scan(&schema, &name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, pgx.Identifier{schema, name}.Sanitize())
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, tb := range tables {
		var n int64
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+tb).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[tb] = n
	}
	return out
}

// A dry run with a model phrasing the standup leaves every table as it
// was: no standup, no delivery, no job, no model usage.
func TestStandupDryRunWritesNothing(t *testing.T) {
	dbURL, pool, _, _ := forecastProject(t, storetest.ProjectShape{Open: 30, Done: 20, People: 3, DepShare: 0.2, Milestones: 2, Seed: 8})
	ctx := context.Background()
	small := modeltest.NewOpenAI(t)
	small.Handle(func(modeltest.Request) modeltest.Reply { return modeltest.Text("All work is on track.", 900, 10) })
	env := map[string]string{"DATABASE_URL": dbURL, "COMMITEA_CALENDAR_WORKING_DAYS": "mon,tue,wed,thu,fri,sat,sun",
		"COMMITEA_SMALL_MODEL": "openai:gemma", "COMMITEA_SMALL_BASE_URL": small.BaseURL(),
		"COMMITEA_STANDUP_WEBHOOK_URL": "http://127.0.0.1:1/hook", "COMMITEA_STANDUP_WEBHOOK_SECRET": "0123456789abcdef0123"}
	before := rowCounts(t, pool)
	var out, errOut bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &errOut, Getenv: configtest.Getenv(env)}
	err := m.Run(ctx, []string{"standup", "--project", "acme/app", "--dry-run"})
	if cerr := m.Close(); cerr != nil {
		t.Error(cerr)
	}
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, errOut.String())
	}
	if len(small.Requests()) != 1 {
		t.Fatalf("the model was asked %d times, want once", len(small.Requests()))
	}
	if !strings.HasPrefix(out.String(), "Standup for acme/app, ") {
		t.Errorf("the dry run printed the model's prose, not the template:\n%s", out.String())
	}
	after := rowCounts(t, pool)
	if len(after) != len(before) {
		t.Errorf("tables before %d, after %d", len(before), len(after))
	}
	for tb, n := range before {
		if after[tb] != n {
			t.Errorf("%s: %d rows before the dry run, %d after", tb, n, after[tb])
		}
	}
}
