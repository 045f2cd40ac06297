package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/cmd/commitea/config/configtest"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
	"github.com/commitea/commitea/worker/models/modeltest"
)

// freeAddr finds a loopback port to listen on. The fake Gitea needs the
// service's webhook URL before the service starts.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeEndToEnd runs `commitea serve` in-process against a real
// database and a fake Forgejo that sends its webhooks to it, the way a user
// would deploy it: start-up backfills the project, a change in Gitea flows
// in as a signed webhook, and each leaves a fresh snapshot.
func TestServeEndToEnd(t *testing.T) {
	dbURL, pool := storetest.NewDB(t)
	addr := freeAddr(t)
	fake, err := giteafake.New(giteafake.Options{HookURL: "http://" + addr + "/webhooks/gitea", HookSecret: "end-to-end-webhook-secret"})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	// The big model is a scripted OpenAI-compatible server: capture_work
	// must reach it through the router serve builds.
	big := modeltest.NewOpenAI(t)
	big.Handle(func(r modeltest.Request) modeltest.Reply {
		if strings.Contains(r.System, "directive into structured parameters") {
			return modeltest.JSON(map[string]any{"params": map[string]any{"estimate": "est/xl"}}, 600, 10)
		}
		return modeltest.JSON(map[string]any{"kind": "proposal", "issues": []any{
			map[string]any{"title": "Add Keycloak login", "body": "Sign in with Keycloak.", "estimate": "est/m", "dependsOn": []any{3}},
		}}, 800, 100)
	})
	env := map[string]string{
		"COMMITEA_BIG_MODEL":      "openai:big-model",
		"COMMITEA_BIG_BASE_URL":   big.BaseURL(),
		"DATABASE_URL":            dbURL,
		"GITEA_URL":               fake.URL,
		"GITEA_TOKEN":             fake.Token(),
		"COMMITEA_WEBHOOK_SECRET": "end-to-end-webhook-secret",
		"COMMITEA_ADDR":           addr,
		"COMMITEA_PROJECTS":       "ceo/demo",
		"COMMITEA_TOKENS":         "agent:read:agent-secret-0123456789,ops:write:ops-secret-0123456789",
	}
	var out, errOut bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &errOut, Getenv: configtest.Getenv(env)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, []string{"serve"}) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve returned %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop within 30s of cancel")
		}
		if err := m.Close(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("serve log:\n%s", errOut.String())
		}
	}()

	waitFor(t, "readyz", 20*time.Second, func() bool {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	bg := context.Background()
	p, err := store.ProjectByName(bg, pool, "ceo/demo")
	if err != nil {
		t.Fatal(err)
	}
	// Start-up finds the project never synced and backfills it.
	waitFor(t, "backfill and first snapshot", 20*time.Second, func() bool {
		st, err := store.GetSyncState(bg, pool, p.ID)
		if err != nil || st.BackfillDoneAt == nil {
			return false
		}
		_, err = store.LatestSnapshot(bg, pool, p.ID)
		return err == nil
	})
	first, err := store.LatestSnapshot(bg, pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}

	// A change in Gitea arrives as a signed webhook and is mirrored.
	client, err := gitea.New(fake.URL, fake.Token(), gitea.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const title = "Retitled through the webhook"
	if _, err := client.EditIssue(bg, "ceo", "demo", 3, gitea.EditIssueOptions{Title: gitea.String(title)}); err != nil {
		t.Fatal(err)
	}
	fake.FlushHooks()
	for _, h := range fake.SentHooks() {
		if h.Status != http.StatusAccepted {
			t.Errorf("webhook %s answered %d, want 202", h.Event, h.Status)
		}
	}
	waitFor(t, "the webhook's change in the mirror", 10*time.Second, func() bool {
		i, err := store.GetIssue(bg, pool, p.ID, 3)
		return err == nil && i.Title == title
	})
	defer func() {
		if !t.Failed() {
			return
		}
		rows, _ := pool.Query(bg, "SELECT kind, state, attempt, coalesce(errors::text,'') FROM river_job ORDER BY id")
		for rows.Next() {
			var k, st, e string
			var a int
			_ = rows.Scan(&k, &st, &a, &e)
			t.Logf("job %s %s %d %s", k, st, a, e)
		}
		s, _ := store.LatestSnapshot(bg, pool, p.ID)
		c, _ := store.ChangeCounter(bg, pool, p.ID)
		t.Logf("snapshot v%d counter %d; now counter %d first v%d", s.Version, s.ChangeCounter, c, first.Version)
	}()
	waitFor(t, "a snapshot newer than the change", 10*time.Second, func() bool {
		s, err := store.LatestSnapshot(bg, pool, p.ID)
		if err != nil {
			return false
		}
		counter, err := store.ChangeCounter(bg, pool, p.ID)
		return err == nil && s.Version > first.Version && s.ChangeCounter == counter
	})

	// A forged delivery is refused.
	resp, err := http.Post("http://"+addr+"/webhooks/gitea", "application/json", bytes.NewReader([]byte(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("unsigned delivery: %d, want 401", resp.StatusCode)
	}

	// The tools answer from that snapshot, through the tool subcommand.
	toolEnv := map[string]string{"COMMITEA_URL": "http://" + addr, "COMMITEA_TOKEN": "agent-secret-0123456789"}
	stdout, stderr, err := run(t, toolEnv, "tool", "query_project", `{"view":"issue","filters":{"issueId":3}}`)
	if err != nil || !strings.Contains(stdout, title) || !strings.Contains(stdout, `"instruction"`) {
		t.Errorf("tool query_project: %v\n%s%s", err, stdout, stderr)
	}
	// Reginald is mounted: with no small model configured, ask says to
	// call query_project directly.
	if _, stderr, err := run(t, toolEnv, "ask", "What should I work on next?"); err == nil ||
		!strings.Contains(stderr, "MODEL_UNAVAILABLE") || !strings.Contains(stderr, "query_project directly") ||
		!strings.Contains(stderr, "COMMITEA_SMALL_MODEL") || !strings.Contains(stderr, "commitea tool query_project '{") {
		t.Errorf("ask without a small model: %v %s", err, stderr)
	}
	toolEnv["COMMITEA_TOKEN"] = "ops-secret-0123456789"
	if _, stderr, err := run(t, toolEnv, "tool", "query_project", `{"view":"focus"}`); err == nil || !strings.Contains(stderr, "FORBIDDEN") {
		t.Errorf("a write-only token read: %v %s", err, stderr)
	}
	// The write path is wired to Gitea: apply_changes lands in the fake
	// and in the mirror at once.
	stdout, stderr, err = run(t, toolEnv, "tool", "apply_changes", `{"ops":[{"op":"set_estimate","issue":3,"estimate":"est/l"}]}`)
	if err != nil || !strings.Contains(strings.ReplaceAll(stdout, " ", ""), `"applied":1`) {
		t.Errorf("tool apply_changes: %v\n%s%s", err, stdout, stderr)
	}
	if is, err := client.GetIssue(bg, "ceo", "demo", 3); err != nil || len(is.Labels) != 1 || is.Labels[0].Name != "est/l" {
		t.Errorf("issue 3 in Gitea after apply_changes: %+v %v", is.Labels, err)
	}
	if i, err := store.GetIssue(bg, pool, p.ID, 3); err != nil || !slices.Contains(i.Labels, "est/l") {
		t.Errorf("issue 3 in the mirror after apply_changes: %+v %v", i.Labels, err)
	}
	// capture_work proposes through the configured big model, with the
	// engine's consequence, and files nothing.
	stdout, stderr, err = run(t, toolEnv, "tool", "capture_work", `{"braindump":"We need Keycloak login."}`)
	if err != nil || !strings.Contains(stdout, `"op": "create_issue"`) || !strings.Contains(stdout, `"consequence"`) ||
		!strings.Contains(stdout, `"deps": [`) {
		t.Errorf("tool capture_work: %v\n%s%s", err, stdout, stderr)
	}
	if n := len(big.Requests()); n != 1 {
		t.Errorf("big model requests = %d, want 1", n)
	}
	// record_directive without params: the big model reads them from the
	// quote; the directive is pending and nothing is written to Gitea.
	writesBefore := len(fake.Requests())
	stdout, stderr, err = run(t, toolEnv, "tool", "record_directive", `{"kind":"reestimate","quote":"#3 is really an XL","target":{"issue":3}}`)
	if err != nil || !strings.Contains(stdout, `"model": "openai:big-model"`) || !strings.Contains(stdout, `"estimate": "est/xl"`) {
		t.Errorf("tool record_directive: %v\n%s%s", err, stdout, stderr)
	}
	for _, r := range fake.Requests()[writesBefore:] {
		if r.Method != http.MethodGet {
			t.Errorf("record_directive wrote to Gitea: %s %s", r.Method, r.Path)
		}
	}
	if n := len(big.Requests()); n != 2 {
		t.Errorf("big model requests = %d, want 2", n)
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		t.Fatal("serve context cancelled early")
	}
}
