package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// IssueDetail is what a backfill writes for one issue besides its row: its
// dependencies, timeline and history, and, when Replayed, its lifecycle
// transitions.
type IssueDetail struct {
	Number       int64
	Dependencies []Dependency
	Timeline     []TimelineEvent
	History      []IssueVersion
	Replayed     bool
	Transitions  []Transition
}

// ReplaceIssueDetails writes many issues' details as ReplaceDependencies,
// ReplaceTimeline, ReplaceIssueHistory and ReplaceTransitions do, in that
// order per issue, in one round trip: a backfill checkpoint of 50 issues
// was 200 round trips, and the database's side of a backfill is most of
// its time once Gitea is read concurrently.
func ReplaceIssueDetails(ctx context.Context, q DBTX, projectID int64, details []IssueDetail) error {
	if len(details) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, d := range details {
		queueReplaceDependencies(b, projectID, d.Number, d.Dependencies)
		queueReplaceTimeline(b, projectID, d.Number, d.Timeline)
		queueReplaceIssueHistory(b, projectID, d.Number, d.History)
		if d.Replayed {
			queueReplaceTransitions(b, projectID, d.Number, d.Transitions)
		}
	}
	return runBatch(ctx, q, b, fmt.Sprintf("replace details of issues #%d to #%d", details[0].Number, details[len(details)-1].Number))
}
