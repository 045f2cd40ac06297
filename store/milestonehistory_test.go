package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
)

// TestMilestoneHistoryOutlivesSnapshots: snapshots are pruned to the last
// hundred, a milestone's history is not; a live point is kept per hour
// (the latest of the hour), and replaying replaces only the replay points.
func TestMilestoneHistoryOutlivesSnapshots(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "ceo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	due := time.Date(2026, 9, 30, 23, 59, 59, 0, time.UTC)
	point := func(at time.Time, open int) store.MilestonePoint {
		return store.MilestonePoint{MilestoneID: 7, At: at, Title: "v1", Due: due, Open: open, Done: 3,
			P10: at.AddDate(0, 0, 10), P50: at.AddDate(0, 0, 20), P80: at.AddDate(0, 0, 30), PDue: 0.75}
	}
	for k := range 150 {
		at := t0.Add(time.Duration(k) * 24 * time.Hour)
		v, err := store.PutSnapshot(ctx, pool, store.Snapshot{ProjectID: p.ID, InputsHash: "h", Data: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		pt := point(at, 150-k)
		pt.Version = v
		if err := store.RecordMilestoneForecasts(ctx, pool, p.ID, []store.MilestonePoint{pt}); err != nil {
			t.Fatal(err)
		}
	}
	// A second forecast within the last hour replaces that hour's point.
	last := point(t0.Add(149*24*time.Hour+20*time.Minute), 1)
	if err := store.RecordMilestoneForecasts(ctx, pool, p.ID, []store.MilestonePoint{last}); err != nil {
		t.Fatal(err)
	}
	var snapshots int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM snapshots WHERE project_id = $1`, p.ID).Scan(&snapshots); err != nil {
		t.Fatal(err)
	}
	replay := []store.MilestonePoint{point(t0.AddDate(0, -2, 0), 40), point(t0.AddDate(0, -1, 0), 60), point(t0.AddDate(0, 0, 3), 1)}
	for range 2 { // replacing twice leaves one set
		if err := store.ReplaceReplayedForecasts(ctx, pool, p.ID, replay); err != nil {
			t.Fatal(err)
		}
	}
	h, err := store.MilestoneHistory(ctx, pool, p.ID, 7)
	if err != nil {
		t.Fatal(err)
	}
	if snapshots != 100 || len(h) != 152 {
		t.Fatalf("%d snapshots kept, %d history points; want 100 and 150 live + the 2 replayed before them", snapshots, len(h))
	}
	first, end := h[2], h[len(h)-1]
	if h[0].Source != store.HistoryReplay || h[1].Open != 60 || first.Source != store.HistoryLive || !first.At.Equal(t0) || first.Open != 150 || first.Version != 1 {
		t.Errorf("history starts %+v, %+v, %+v", h[0], h[1], first)
	}
	if end.Open != 1 || end.Version != 0 || !end.At.Equal(t0.Add(149*24*time.Hour)) || !end.Due.Equal(due) || end.PDue != 0.75 || !end.P80.Equal(last.P80) {
		t.Errorf("the last hour's point %+v, want the later forecast of the hour", end)
	}
}
