package worker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
)

// The retention job prunes more than one batch of old
// deliveries, the idle conversations and long-ended sessions, and keeps
// everything newer.
func TestRetentionPrunesOldDeliveriesAndIdleConversations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)

	var ds []store.Delivery
	for i := range pruneBatch + 7 {
		ds = append(ds, store.Delivery{ID: fmt.Sprintf("old-%05d", i), Event: "issues", Payload: []byte("{}")})
	}
	ds = append(ds, store.Delivery{ID: "fresh", Event: "issues", Payload: []byte("{}")})
	if _, err := store.InsertDeliveries(ctx, pool, ds); err != nil {
		t.Fatal(err)
	}
	mustExec(t, pool, `UPDATE deliveries SET received_at = $1 WHERE id LIKE 'old-%'`, now.Add(-31*24*time.Hour))
	mustExec(t, pool, `UPDATE deliveries SET received_at = $1 WHERE id = 'fresh'`, now.Add(-29*24*time.Hour))
	for _, id := range []string{"idle", "recent"} {
		if _, err := store.AppendConversationTurn(ctx, pool, "tok", id, "ceo/demo", "q → a"); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(t, pool, `UPDATE conversation_turns SET created_at = $1 WHERE conversation_id = 'idle'`, now.Add(-91*24*time.Hour))
	mustExec(t, pool, `UPDATE conversation_turns SET created_at = $1 WHERE conversation_id = 'recent'`, now.Add(-89*24*time.Hour))

	for k, ended := range []time.Time{now.Add(-31 * 24 * time.Hour), now.Add(-29 * 24 * time.Hour)} {
		_, err := store.CreateWebSession(ctx, pool, []byte(fmt.Sprintf("session-%d", k)), store.WebSession{Login: "dev", GiteaUserID: 2,
			CreatedAt: ended.Add(-time.Hour), LastSeenAt: ended.Add(-time.Hour), IdleExpiresAt: ended, ExpiresAt: ended.Add(time.Hour), PermissionsAt: ended})
		if err != nil {
			t.Fatal(err)
		}
	}

	run := func(w *RetentionWorker) {
		t.Helper()
		if err := w.Work(ctx, &river.Job[RetentionArgs]{}); err != nil {
			t.Fatalf("retention: %v", err)
		}
	}
	// Zero durations keep everything.
	run(&RetentionWorker{Pool: pool, Log: quietLog(), Now: func() time.Time { return now }})
	if n := count(t, pool, `SELECT count(*) FROM deliveries`); n != pruneBatch+8 {
		t.Fatalf("%d deliveries after a no-op run", n)
	}
	run(&RetentionWorker{Pool: pool, Deliveries: 30 * 24 * time.Hour, Conversations: 90 * 24 * time.Hour, Sessions: 30 * 24 * time.Hour, Log: quietLog(), Now: func() time.Time { return now }})
	if n := count(t, pool, `SELECT count(*) FROM web_sessions`); n != 1 {
		t.Errorf("%d sessions left, want the one ended 29 days ago", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM deliveries`); n != 1 {
		t.Errorf("%d deliveries left, want only the fresh one", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM conversation_turns WHERE conversation_id = 'recent'`); n != 1 {
		t.Errorf("recent conversation has %d turns, want 1", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM conversation_turns WHERE conversation_id = 'idle'`); n != 0 {
		t.Errorf("idle conversation kept %d turns", n)
	}
}

func mustExec(t *testing.T, pool *store.Pool, sql string, args ...any) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
