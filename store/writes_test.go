package store_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
)

func TestIdempotencyProgressAndExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "o", "r")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	if _, found, err := store.PeekIdempotency(ctx, pool, p.ID, "k", now); err != nil || found {
		t.Fatalf("peek of a new key = %v, %v", found, err)
	}
	r, err := store.ClaimIdempotency(ctx, pool, p.ID, "k", "h1", "planner", now)
	if err != nil || r.Status != "partial" || len(r.Done) != 0 || r.OpsHash != "h1" {
		t.Fatalf("claim = %+v, %v", r, err)
	}
	for _, step := range []func() error{
		func() error { return store.RecordOpDone(ctx, pool, p.ID, "k", 0, 0) },
		func() error { return store.RecordCreated(ctx, pool, p.ID, "k", 1, 17) },
		func() error { return store.RecordOpDone(ctx, pool, p.ID, "k", 1, 17) },
		func() error { return store.RecordOpDone(ctx, pool, p.ID, "k", 1, 17) }, // twice: no duplicate
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	// A second claim keeps the first batch and its progress.
	r, err = store.ClaimIdempotency(ctx, pool, p.ID, "k", "h2", "other", now.Add(time.Hour))
	if err != nil || r.OpsHash != "h1" || !slices.Equal(r.Done, []int{0, 1}) || r.Created[1] != 17 {
		t.Fatalf("second claim = %+v, %v", r, err)
	}
	if err := store.FinishIdempotency(ctx, pool, p.ID, "k", json.RawMessage(`{"data":{"applied":2}}`)); err != nil {
		t.Fatal(err)
	}
	r, found, err := store.PeekIdempotency(ctx, pool, p.ID, "k", now.Add(23*time.Hour))
	if err != nil || !found || r.Status != "done" || string(r.Answer) != `{"data": {"applied": 2}}` {
		t.Fatalf("peek within a day = %+v %v %v (%s)", r, found, err, r.Answer)
	}
	// After 24 hours the key is free again.
	later := now.Add(25 * time.Hour)
	if _, found, _ := store.PeekIdempotency(ctx, pool, p.ID, "k", later); found {
		t.Fatal("an expired key still replays")
	}
	if r, err := store.ClaimIdempotency(ctx, pool, p.ID, "k", "h3", "planner", later); err != nil || r.OpsHash != "h3" || len(r.Done) != 0 {
		t.Fatalf("claim after expiry = %+v, %v", r, err)
	}
}

func TestCapacityCalendarMerges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "o", "r")
	if err != nil {
		t.Fatal(err)
	}
	four := 4.0
	puts := []store.Capacity{
		{Login: "dana", HoursPerDay: &four, TimeOff: []store.DateSpan{{From: "2026-12-24", To: "2026-12-31"}}},
		{Login: "dana", TimeOff: []store.DateSpan{{From: "2026-12-24", To: "2026-12-31"}, {From: "2027-01-04", To: "2027-01-04"}}},
		{Login: "alex"},
	}
	for _, c := range puts {
		if err := store.PutCapacity(ctx, pool, p.ID, c); err != nil {
			t.Fatal(err)
		}
	}
	caps, err := store.CapacityCalendar(ctx, pool, p.ID)
	if err != nil || len(caps) != 2 {
		t.Fatalf("calendar = %+v, %v", caps, err)
	}
	if caps[0].Login != "alex" || caps[0].HoursPerDay != nil || len(caps[0].TimeOff) != 0 {
		t.Fatalf("alex = %+v", caps[0])
	}
	if caps[1].HoursPerDay == nil || *caps[1].HoursPerDay != 4 || len(caps[1].TimeOff) != 2 {
		t.Fatalf("dana = %+v", caps[1])
	}
	zero := 0.0
	if err := store.PutCapacity(ctx, pool, p.ID, store.Capacity{Login: "x", HoursPerDay: &zero}); err == nil {
		t.Fatal("zero hours per day stored")
	}
}
