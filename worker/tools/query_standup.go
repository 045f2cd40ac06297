package tools

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/commitea/commitea/store"
)

// The standup view: the latest standup the daily job stored (drift,
// per-person plan, stale blockers), or a plain statement that there is
// none yet.

// StandupView is the standup payload.
type StandupView struct {
	Standup *StoredStandup `json:"standup"`
	Message string         `json:"message,omitempty"`
	Meta
}

// StoredStandup is one stored standup.
type StoredStandup struct {
	Day             string          `json:"day"`
	CreatedAt       time.Time       `json:"createdAt"`
	SnapshotVersion int64           `json:"snapshotVersion"`
	Content         json.RawMessage `json:"content"`
	Text            string          `json:"text,omitempty"`
}

// maxStandupTextBytes bounds the prose; the content holds the numbers.
const maxStandupTextBytes = 8000

func (q *query) standup(ctx context.Context) (Answer[any], error) {
	s, err := store.LatestStandup(ctx, q.s.Pool, q.v.Project.ID)
	if errors.Is(err, store.ErrNotFound) {
		out := StandupView{Message: "No standup has been produced for " + q.v.Project.FullName() + " yet; the daily standup job writes one on working days."}
		out.Meta = q.meta()
		return Answer[any]{Data: out, Instruction: "Say there is no standup yet; offer view focus or runway instead."}, nil
	}
	if err != nil {
		return Answer[any]{}, err
	}
	out := StandupView{Standup: &StoredStandup{Day: day(s.Day), CreatedAt: s.CreatedAt, SnapshotVersion: s.SnapshotVersion,
		Content: s.Content, Text: Truncate(s.Text, maxStandupTextBytes)}}
	out.Meta = q.meta()
	return Answer[any]{Data: out, Instruction: "Relay the standup of " + out.Standup.Day + ": drift first, then each person's plan, then stale blockers."}, nil
}
