package store

import (
	"context"
	"fmt"
	"time"
)

// PruneDeliveries deletes up to limit deliveries received before cutoff and
// returns how many went. Callers loop until fewer than limit go, so no single
// statement holds locks on a large share of the table. A pruned delivery's id
// no longer dedupes a redelivery, so cutoff must lie well behind any retry
// Gitea makes; transitions keep citing the id, only the body is gone.
func PruneDeliveries(ctx context.Context, q DBTX, cutoff time.Time, limit int) (int64, error) {
	tag, err := q.Exec(ctx, `DELETE FROM deliveries WHERE id IN (
			SELECT id FROM deliveries WHERE received_at < $1 ORDER BY received_at LIMIT $2)`, cutoff, limit)
	if err != nil {
		return 0, fmt.Errorf("prune deliveries before %s: %w", cutoff.Format(time.RFC3339), err)
	}
	return tag.RowsAffected(), nil
}

// PruneConversations deletes, whole, up to limit conversations whose latest
// turn is older than cutoff, and returns how many turns went. A conversation
// still in use keeps its early turns: Reginald reads the last few only, but
// numbering continues from the highest.
func PruneConversations(ctx context.Context, q DBTX, cutoff time.Time, limit int) (int64, error) {
	tag, err := q.Exec(ctx, `DELETE FROM conversation_turns t USING (
			SELECT caller, conversation_id FROM conversation_turns
			GROUP BY caller, conversation_id HAVING max(created_at) < $1
			LIMIT $2) old
		WHERE t.caller = old.caller AND t.conversation_id = old.conversation_id`, cutoff, limit)
	if err != nil {
		return 0, fmt.Errorf("prune conversations idle since %s: %w", cutoff.Format(time.RFC3339), err)
	}
	return tag.RowsAffected(), nil
}
