package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/commitea/commitea/store"
)

// ProjectShape sizes a generated project.
type ProjectShape struct {
	Open       int     // open issues
	Done       int     // closed issues with a history, for calibration
	People     int     // assignees
	DepShare   float64 // share of open issues with dependencies
	Milestones int
	Seed       uint64
}

// SeedProject writes a generated, realistic project into a project's
// mirror: milestones with due dates (the first one hard), estimated and
// prioritised issues, some assigned and steeping, dependencies only on
// lower-numbered issues (so there is no cycle), done issues with tracked
// time or steeping transitions, as benchmarks of the recompute need. The
// project is marked backfilled (MarkBackfilled).
func SeedProject(ctx context.Context, pool *store.Pool, projectID int64, shape ProjectShape, now time.Time) error {
	rng := rand.New(rand.NewPCG(shape.Seed, 0x5eed))
	sizes := []string{"est/xs", "est/s", "est/m", "est/m", "est/l", "est/xl"}
	prios := []string{"p/0", "p/1", "p/2", "p/2", "p/3"}
	person := func() string { return fmt.Sprintf("dev%02d", rng.IntN(max(shape.People, 1))) }
	var ms []store.Milestone
	for k := range shape.Milestones {
		due := now.AddDate(0, 1+2*k, 0)
		desc := fmt.Sprintf("Release %d", k+1)
		if k == 0 {
			desc += "\ndeadline: hard"
		}
		ms = append(ms, store.Milestone{ID: int64(k + 1), Title: fmt.Sprintf("v%d.0", k+1), Description: desc, State: "open", DueOn: &due})
	}
	var issues []store.IssueWrite
	var deps []store.Dependency
	var times []store.TrackedTime
	var transitions []store.Transition
	number := int64(0)
	for range shape.Done {
		number++
		created := now.AddDate(0, 0, -300+rng.IntN(280))
		started := created.Add(time.Duration(rng.IntN(72)) * time.Hour)
		closed := started.Add(time.Duration(4+rng.IntN(200)) * time.Hour)
		who := person()
		issues = append(issues, store.IssueWrite{Issue: store.Issue{
			Number: number, Title: fmt.Sprintf("Done work %d", number), State: "closed",
			Labels: []string{sizes[rng.IntN(len(sizes))], "kind/feature"}, Assignees: []string{who},
			CreatedAt: created, UpdatedAt: closed, ClosedAt: &closed, LastActivityAt: closed,
		}})
		if rng.IntN(3) == 0 {
			times = append(times, store.TrackedTime{ID: number, Issue: number, User: who, Seconds: int64(1800 + rng.IntN(40*3600)), Created: closed})
		}
		transitions = append(transitions,
			store.Transition{Issue: number, To: "triage", At: created, Cause: "timeline:seed"},
			store.Transition{Issue: number, From: "triage", To: "steeping", At: started, Cause: "timeline:seed"},
			store.Transition{Issue: number, From: "steeping", To: "done", At: closed, Cause: "timeline:seed"})
	}
	first := number + 1
	for range shape.Open {
		number++
		created := now.AddDate(0, 0, -rng.IntN(60))
		i := store.Issue{
			Number: number, Title: fmt.Sprintf("Open work %d", number), State: "open",
			Labels:    []string{sizes[rng.IntN(len(sizes))], prios[rng.IntN(len(prios))]},
			CreatedAt: created, UpdatedAt: created, LastActivityAt: created,
		}
		if shape.Milestones > 0 {
			m := int64(1 + rng.IntN(shape.Milestones))
			i.Milestone = &m
		}
		if rng.IntN(3) == 0 {
			i.Assignees = []string{person()}
		}
		issues = append(issues, store.IssueWrite{Issue: i})
		if number > first && rng.Float64() < shape.DepShare {
			a := first + rng.Int64N(number-first)
			deps = append(deps, store.Dependency{Issue: number, DependsOn: a})
			if b := first + rng.Int64N(number-first); b != a && rng.IntN(2) == 0 {
				deps = append(deps, store.Dependency{Issue: number, DependsOn: b})
			}
		}
	}
	return store.InTx(ctx, pool, func(tx store.Tx) error {
		if err := store.ReplaceMilestones(ctx, tx, projectID, ms); err != nil {
			return err
		}
		if err := store.UpsertIssues(ctx, tx, projectID, issues); err != nil {
			return err
		}
		byIssue := map[int64][]store.Dependency{}
		for _, d := range deps {
			byIssue[d.Issue] = append(byIssue[d.Issue], d)
		}
		for n, ds := range byIssue {
			if err := store.ReplaceDependencies(ctx, tx, projectID, n, ds); err != nil {
				return err
			}
		}
		if err := store.UpsertTrackedTimes(ctx, tx, projectID, times); err != nil {
			return err
		}
		if err := store.RecordTransitions(ctx, tx, projectID, nil, transitions); err != nil {
			return err
		}
		return MarkBackfilled(ctx, tx, projectID, now)
	})
}

// MarkBackfilled records that a project's first backfill completed at at,
// as Syncer.Backfill does: tools answer NOT_READY for a project without
// it. Tests and load commands that write a mirror directly call it.
func MarkBackfilled(ctx context.Context, q store.DBTX, projectID int64, at time.Time) error {
	st, err := store.GetSyncState(ctx, q, projectID)
	if err != nil {
		return err
	}
	st.BackfillDoneAt = &at
	return store.PutSyncState(ctx, q, st)
}
