package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/commitea/commitea/store"
)

// The standup view: the latest standup the daily job stored (drift,
// per-person plan, stale blockers; at-risk milestones in newer ones), or a plain statement that there is
// none yet. The assignee filter keeps that person's plan; the limit caps
// each list; the baseline the next standup diffs against stays out.

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
	content, err := q.standupContent(s.Content)
	if err != nil {
		return Answer[any]{}, fmt.Errorf("decode standup of %s: %w", day(s.Day), err)
	}
	out := StandupView{Standup: &StoredStandup{Day: day(s.Day), CreatedAt: s.CreatedAt, SnapshotVersion: s.SnapshotVersion,
		Content: content, Text: Truncate(s.Text, MaxStandupTextBytes)}}
	out.Meta = q.meta()
	return Answer[any]{Data: out, Instruction: "Relay the standup of " + out.Standup.Day + ": at-risk milestones first, then drift, each person's plan, and stale blockers."}, nil
}

// standupContent trims a stored report for the view.
func (q *query) standupContent(raw json.RawMessage) (json.RawMessage, error) {
	var report map[string]json.RawMessage
	if err := json.Unmarshal(raw, &report); err != nil {
		return nil, err
	}
	delete(report, "baseline")
	lists := map[string]string{"atRisk": "atRisk: no milestone at risk", "drift": "drift: no milestone moved since the last standup",
		"plan": "plan: nobody has a plan in this standup", "staleBlockers": "staleBlockers: no stale blocker"}
	for key, empty := range lists {
		var items []json.RawMessage
		if b, ok := report[key]; ok && string(b) != "null" {
			if err := json.Unmarshal(b, &items); err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
		}
		keep := func(json.RawMessage) bool { return true }
		if key == "plan" && q.f.Assignee != "" {
			empty = "plan: " + q.f.Assignee + " has no plan in this standup"
			keep = func(it json.RawMessage) bool {
				var p struct {
					Login string `json:"login"`
				}
				return json.Unmarshal(it, &p) == nil && strings.EqualFold(p.Login, q.f.Assignee)
			}
		}
		shown, _ := Take(q.caps, items, keep, key, empty)
		b, err := json.Marshal(shown)
		if err != nil {
			return nil, err
		}
		report[key] = b
	}
	return json.Marshal(report)
}
