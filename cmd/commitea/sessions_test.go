package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
)

// `commitea sessions` lists live sessions (and with --all the recently
// ended), and revokes by id or by login.
func TestSessionsCommand(t *testing.T) {
	dbURL, pool := storetest.NewDB(t)
	env := map[string]string{"DATABASE_URL": dbURL}
	ctx := context.Background()
	now := time.Now()
	var ids []int64
	for k, login := range []string{"dev", "dev", "ceo"} {
		s, err := store.CreateWebSession(ctx, pool, []byte(fmt.Sprintf("secret-hash-%d", k)), store.WebSession{
			Login: login, GiteaUserID: int64(k), CreatedAt: now.Add(time.Duration(k) * time.Minute), LastSeenAt: now,
			IdleExpiresAt: now.Add(12 * time.Hour), ExpiresAt: now.Add(24 * time.Hour),
			Permissions: map[string]string{"ceo/demo": "read", "ceo/docs": "approve"}, PermissionsAt: now,
		})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	out, _, err := run(t, env, "sessions", "list")
	if err != nil || strings.Count(out, "\n") != 4 || !strings.Contains(out, "ceo/demo:read ceo/docs:approve") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	if out, _, err := run(t, env, "sessions", "revoke", fmt.Sprint(ids[2])); err != nil || !strings.Contains(out, fmt.Sprintf("revoked session %d", ids[2])) {
		t.Fatalf("revoke by id: %v\n%s", err, out)
	}
	if _, _, err := run(t, env, "sessions", "revoke", fmt.Sprint(ids[2])); err == nil || !strings.Contains(err.Error(), "no live session") {
		t.Fatalf("revoke twice: %v", err)
	}
	if out, _, err := run(t, env, "sessions", "revoke", "--login", "DEV"); err != nil || !strings.Contains(out, "revoked 2 session(s) of DEV") {
		t.Fatalf("revoke by login: %v\n%s", err, out)
	}
	if out, _, _ := run(t, env, "sessions", "list"); !strings.Contains(out, "No sessions.") {
		t.Fatalf("list after revoking all:\n%s", out)
	}
	out, _, _ = run(t, env, "sessions", "list", "--all")
	if strings.Count(out, "revoked ") != 3 {
		t.Fatalf("list --all:\n%s", out)
	}
	for _, bad := range [][]string{{"sessions"}, {"sessions", "drop"}, {"sessions", "revoke"}, {"sessions", "revoke", "--login", "x", "3"}, {"sessions", "revoke", "x"}} {
		if _, _, err := run(t, env, bad...); err == nil || exitCode(err) != 2 {
			t.Errorf("%v: %v", bad, err)
		}
	}
	if out, _, err := run(t, nil, "help", "sessions"); err != nil || !strings.Contains(out, "revoke") {
		t.Errorf("help sessions: %v\n%s", err, out)
	}
}
