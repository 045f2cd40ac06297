package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Delivery is one webhook delivery as received.
type Delivery struct {
	ID         string
	ProjectID  *int64 // nil when the repository is not configured here
	Event      string
	Action     string
	Repo       string
	Ignored    string // why the delivery changed nothing, empty when applied
	ReceivedAt time.Time
	Payload    []byte
}

// InsertDeliveries stores deliveries in one statement and returns the ids
// that were new. A delivery id seen before is skipped, which is how
// redelivered webhooks are made harmless.
func InsertDeliveries(ctx context.Context, q DBTX, ds []Delivery) (map[string]bool, error) {
	if len(ds) == 0 {
		return map[string]bool{}, nil
	}
	ids := make([]string, len(ds))
	projects := make([]*int64, len(ds))
	events := make([]string, len(ds))
	actions := make([]string, len(ds))
	repos := make([]string, len(ds))
	ignored := make([]string, len(ds))
	payloads := make([][]byte, len(ds))
	// Rows go in by id so two concurrent batches holding the same
	// redelivered ids wait on each other instead of deadlocking.
	ds = slices.Clone(ds)
	slices.SortStableFunc(ds, func(a, b Delivery) int { return strings.Compare(a.ID, b.ID) })
	for i, d := range ds {
		ids[i], projects[i], events[i], actions[i] = d.ID, d.ProjectID, cleanText(d.Event), cleanText(d.Action)
		repos[i], ignored[i], payloads[i] = cleanText(d.Repo), cleanText(d.Ignored), d.Payload
	}
	rows, err := q.Query(ctx, `
		INSERT INTO deliveries (id, project_id, event, action, repo, ignored, payload)
		SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bytea[])
		ON CONFLICT (id) DO NOTHING
		RETURNING id`, ids, projects, events, actions, repos, ignored, payloads)
	if err != nil {
		return nil, fmt.Errorf("insert deliveries: %w", err)
	}
	defer rows.Close()
	fresh := make(map[string]bool, len(ds))
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("insert deliveries: %w", err)
		}
		fresh[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("insert deliveries: %w", err)
	}
	return fresh, nil
}

// CountDeliveries counts the stored deliveries; load tests use it to prove
// nothing acknowledged was lost.
func CountDeliveries(ctx context.Context, q DBTX) (int64, error) {
	var n int64
	if err := q.QueryRow(ctx, `SELECT count(*) FROM deliveries`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count deliveries: %w", err)
	}
	return n, nil
}
