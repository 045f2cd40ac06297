package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ConversationTurn is the short summary of one turn of a conversation with
// Reginald; the turns of a conversation are numbered from 1.
type ConversationTurn struct {
	Caller         string
	ConversationID string
	Turn           int
	Project        string
	Summary        string
	CreatedAt      time.Time
}

// AppendConversationTurn stores the next turn's summary of a caller's
// conversation and returns its number. Two concurrent turns of one
// conversation cannot take the same number: the loser of the race retries
// once on the primary key.
func AppendConversationTurn(ctx context.Context, q DBTX, caller, conversationID, project, summary string) (int, error) {
	const insert = `INSERT INTO conversation_turns (caller, conversation_id, turn, project, summary)
		SELECT $1, $2, coalesce(max(turn), 0) + 1, $3, $4 FROM conversation_turns WHERE caller = $1 AND conversation_id = $2
		RETURNING turn`
	var turn int
	var err error
	for range 2 {
		if err = q.QueryRow(ctx, insert, caller, conversationID, project, summary).Scan(&turn); err == nil {
			return turn, nil
		}
	}
	return 0, fmt.Errorf("append turn to conversation %q: %w", conversationID, err)
}

// RecentConversationTurns returns the last limit turns of a caller's
// conversation, oldest first; an unknown conversation has none.
func RecentConversationTurns(ctx context.Context, q DBTX, caller, conversationID string, limit int) ([]ConversationTurn, error) {
	out, err := collectArgs(ctx, q, `SELECT caller, conversation_id, turn, project, summary, created_at FROM (
			SELECT * FROM conversation_turns WHERE caller = $1 AND conversation_id = $2 ORDER BY turn DESC LIMIT $3
		) last ORDER BY turn`, func(r pgx.Rows) (ConversationTurn, error) {
		var t ConversationTurn
		err := r.Scan(&t.Caller, &t.ConversationID, &t.Turn, &t.Project, &t.Summary, &t.CreatedAt)
		return t, err
	}, caller, conversationID, limit)
	if err != nil {
		return nil, fmt.Errorf("turns of conversation %q: %w", conversationID, err)
	}
	return out, nil
}
