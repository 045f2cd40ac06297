package worker

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/gitea"
)

// TestIngestWritersDoNotDeadlock: two writers, each with a batch whose
// deliveries carry the same labels and issues in opposite orders. Written
// in payload order they lock the same label and issue rows in opposite
// orders and Postgres aborts one with a deadlock (40P01); written in one
// stable order the second only waits for the first.
func TestIngestWritersDoNotDeadlock(t *testing.T) {
	t.Parallel()
	pool, in, _ := newIngestFixture(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	labels := make([]store.Label, 300)
	for i := range labels {
		labels[i] = store.Label{ID: int64(i + 1), Name: fmt.Sprint("l", i+1)}
	}
	reversed := slices.Clone(labels)
	slices.Reverse(reversed)
	change := func(n int64, ls []store.Label) gitea.Change {
		c := issueChange(n, "t", at)
		c.Labels = ls
		c.Issue.Labels = []string{"l1"}
		return c
	}
	sub := func(id string, c gitea.Change) *submission {
		return &submission{in: Incoming{DeliveryID: id, Payload: []byte(`{}`), Change: c}, done: make(chan error, 1)}
	}
	for round := range 10 {
		// Forward: issues 1..20 each with labels ascending; backward:
		// issues 20..1 each with labels descending.
		var fwd, back []*submission
		for n := int64(1); n <= 20; n++ {
			fwd = append(fwd, sub(fmt.Sprintf("f-%d-%d", round, n), change(n, labels)))
			back = append(back, sub(fmt.Sprintf("b-%d-%d", round, n), change(21-n, reversed)))
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		startLine := make(chan struct{})
		for i, b := range [][]*submission{fwd, back} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-startLine
				errs[i] = in.write(ctx, b)
			}()
		}
		close(startLine)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: concurrent batch failed: %v", round+1, err)
			}
		}
	}
	if n := count(t, pool, `SELECT count(*) FROM labels`); n != 300 {
		t.Fatalf("labels = %d, want 300", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM deliveries`); n != 400 {
		t.Fatalf("deliveries = %d, want 400", n)
	}
}

// TestIngestBatchDedupesLabels: a batch carrying one label many times
// writes it once, with the last delivery's definition.
func TestIngestBatchDedupesLabels(t *testing.T) {
	t.Parallel()
	pool, _, p := newIngestFixture(t)
	mb := store.NewMirrorBatch(p.ID)
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	var cs []pendingChange
	for i := range 50 {
		c := issueChange(int64(50-i), "t", at)
		c.Labels = []store.Label{{ID: 2, Name: fmt.Sprint("two-", i)}, {ID: 1, Name: "one"}}
		c.Milestone = &store.Milestone{ID: 9, Title: "m"}
		cs = append(cs, pendingChange{delivery: fmt.Sprint(i), change: c})
	}
	queueChanges(mb, cs)
	// The two labels in one statement, the milestone in one, the fifty
	// issue writes (fifty issues) as one upsert and one history statement.
	if want := 4; mb.Len() != want {
		t.Fatalf("queued %d statements, want %d (labels and milestones once, issues in one pass)", mb.Len(), want)
	}
	if err := mb.Run(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	var name string
	if err := pool.QueryRow(context.Background(), `SELECT name FROM labels WHERE id = 2`).Scan(&name); err != nil {
		t.Fatal(err)
	}
	if name != "two-49" {
		t.Fatalf("label 2 is %q, want the last delivery's \"two-49\"", name)
	}
}
