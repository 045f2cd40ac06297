package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
)

// TestWebSessions follows a session through its life: found by its
// secret's hash, moved on by use but never past its absolute expiry,
// listed while live, revoked once, listed as ended, pruned.
func TestWebSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	hash := []byte("0123456789abcdef0123456789abcdef")
	s, err := store.CreateWebSession(ctx, pool, hash, store.WebSession{
		Login: "Dev", GiteaUserID: 2, CreatedAt: t0, LastSeenAt: t0, IdleExpiresAt: t0.Add(12 * time.Hour), ExpiresAt: t0.Add(24 * time.Hour),
		Permissions: map[string]string{"ceo/demo": "write"}, PermissionsAt: t0, UserAgent: "test",
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := store.WebSessionBySecret(ctx, pool, hash)
	if err != nil || got.ID != s.ID || got.Permissions["ceo/demo"] != "write" || !got.Live(t0.Add(time.Hour)) {
		t.Fatalf("by secret: %+v, %v", got, err)
	}
	if _, err := store.WebSessionBySecret(ctx, pool, []byte("other")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown secret: %v", err)
	}
	if got.Live(t0.Add(13 * time.Hour)) {
		t.Fatal("live after its idle timeout")
	}
	// Use at 20h moves the idle expiry to 32h, capped at the 24h expiry.
	if err := store.TouchWebSession(ctx, pool, s.ID, t0.Add(11*time.Hour), t0.Add(23*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := store.TouchWebSession(ctx, pool, s.ID, t0.Add(20*time.Hour), t0.Add(32*time.Hour)); err != nil {
		t.Fatal(err)
	}
	got, _ = store.WebSessionBySecret(ctx, pool, hash)
	if !got.IdleExpiresAt.Equal(t0.Add(24*time.Hour)) || !got.EndsAt().Equal(t0.Add(24*time.Hour)) {
		t.Fatalf("idle expiry %s, ends %s", got.IdleExpiresAt, got.EndsAt())
	}
	if err := store.SetWebSessionPermissions(ctx, pool, s.ID, nil, t0.Add(21*time.Hour)); err != nil {
		t.Fatal(err)
	}
	got, _ = store.WebSessionBySecret(ctx, pool, hash)
	if len(got.Permissions) != 0 || !got.PermissionsAt.Equal(t0.Add(21*time.Hour)) {
		t.Fatalf("permissions %v at %s", got.Permissions, got.PermissionsAt)
	}

	other, err := store.CreateWebSession(ctx, pool, []byte("second-secret-hash"), store.WebSession{
		Login: "dev", GiteaUserID: 2, CreatedAt: t0.Add(time.Hour), LastSeenAt: t0.Add(time.Hour), IdleExpiresAt: t0.Add(13 * time.Hour), ExpiresAt: t0.Add(25 * time.Hour), PermissionsAt: t0,
	})
	if err != nil {
		t.Fatal(err)
	}
	now := t0.Add(12*time.Hour + 30*time.Minute)
	live, err := store.ListWebSessions(ctx, pool, now, nil)
	if err != nil || len(live) != 2 || live[0].ID != other.ID {
		t.Fatalf("live sessions: %+v, %v", live, err)
	}
	if ok, err := store.RevokeWebSession(ctx, pool, other.ID, now); !ok || err != nil {
		t.Fatalf("revoke: %v %v", ok, err)
	}
	if ok, _ := store.RevokeWebSession(ctx, pool, other.ID, now); ok {
		t.Fatal("revoked twice")
	}
	if n, err := store.RevokeWebSessionsOf(ctx, pool, "DEV", now); n != 1 || err != nil {
		t.Fatalf("revoke all of dev: %d %v", n, err)
	}
	live, _ = store.ListWebSessions(ctx, pool, now, nil)
	if len(live) != 0 {
		t.Fatalf("live after revocation: %+v", live)
	}
	since := t0
	all, _ := store.ListWebSessions(ctx, pool, now, &since)
	if len(all) != 2 || all[0].RevokedAt == nil {
		t.Fatalf("ended since t0: %+v", all)
	}
	if n, err := store.PruneWebSessions(ctx, pool, now.Add(time.Second), 100); n != 2 || err != nil {
		t.Fatalf("prune: %d %v", n, err)
	}
}

// TestWebLogins: a sign-in's state works once and only while fresh.
func TestWebLogins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	if err := store.SaveWebLogin(ctx, pool, []byte("state-1"), "verifier-1", "/dashboard/ceo/demo/", t0); err != nil {
		t.Fatal(err)
	}
	if err := store.SaveWebLogin(ctx, pool, []byte("state-2"), "verifier-2", "/dashboard/", t0); err != nil {
		t.Fatal(err)
	}
	v, next, err := store.TakeWebLogin(ctx, pool, []byte("state-1"), t0.Add(-10*time.Minute))
	if err != nil || v != "verifier-1" || next != "/dashboard/ceo/demo/" {
		t.Fatalf("take: %q %q %v", v, next, err)
	}
	if _, _, err := store.TakeWebLogin(ctx, pool, []byte("state-1"), t0.Add(-10*time.Minute)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("taken twice: %v", err)
	}
	if _, _, err := store.TakeWebLogin(ctx, pool, []byte("state-2"), t0.Add(time.Second)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("stale sign-in: %v", err)
	}
}
