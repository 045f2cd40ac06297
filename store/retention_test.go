package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
)

func TestPruneDeliveriesByAgeInBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	var ds []store.Delivery
	for i := range 25 {
		ds = append(ds, store.Delivery{ID: fmt.Sprintf("d%02d", i), Event: "issues", Payload: []byte("{}")})
	}
	if _, err := store.InsertDeliveries(ctx, pool, ds); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	// Twenty are forty days old, five are fresh.
	if _, err := pool.Exec(ctx, `UPDATE deliveries SET received_at = $1 WHERE id < 'd20'`, now.Add(-40*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	cutoff := now.Add(-30 * 24 * time.Hour)
	var total int64
	for _, want := range []int64{8, 8, 4, 0} {
		n, err := store.PruneDeliveries(ctx, pool, cutoff, 8)
		if err != nil || n != want {
			t.Fatalf("prune: %d, %v; want %d", n, err, want)
		}
		total += n
	}
	if left, _ := store.CountDeliveries(ctx, pool); left != 5 || total != 20 {
		t.Fatalf("%d pruned, %d left; want 20 and 5", total, left)
	}
	// A pruned id is new again; a kept one still dedupes.
	fresh, err := store.InsertDeliveries(ctx, pool, []store.Delivery{{ID: "d00", Event: "issues", Payload: []byte("{}")}, {ID: "d24", Event: "issues", Payload: []byte("{}")}})
	if err != nil || !fresh["d00"] || fresh["d24"] {
		t.Fatalf("after pruning: fresh %v, %v", fresh, err)
	}
}

func TestPruneConversationsOnlyWhenIdle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	for _, c := range []struct {
		id    string
		turns int
	}{{"idle", 3}, {"active", 3}, {"other", 1}} {
		for range c.turns {
			if _, err := store.AppendConversationTurn(ctx, pool, "tok", c.id, "ceo/demo", "q → a"); err != nil {
				t.Fatal(err)
			}
		}
	}
	old := time.Now().Add(-100 * 24 * time.Hour)
	// "idle" is old throughout; "active" began long ago but its last turn is
	// today; "other" is fresh.
	if _, err := pool.Exec(ctx, `UPDATE conversation_turns SET created_at = $1 WHERE conversation_id = 'idle' OR (conversation_id = 'active' AND turn < 3)`, old); err != nil {
		t.Fatal(err)
	}
	n, err := store.PruneConversations(ctx, pool, time.Now().Add(-90*24*time.Hour), 100)
	if err != nil || n != 3 {
		t.Fatalf("pruned %d turns, %v; want the idle conversation's 3", n, err)
	}
	for id, want := range map[string]int{"idle": 0, "active": 3, "other": 1} {
		turns, err := store.RecentConversationTurns(ctx, pool, "tok", id, 10)
		if err != nil || len(turns) != want {
			t.Errorf("%s: %d turns, %v; want %d", id, len(turns), err, want)
		}
	}
}
