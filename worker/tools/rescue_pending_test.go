package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/tools"
)

// TestQuerySaysRescueIsBeingComputed: while the latest snapshot's rescue
// options are still being computed (searched after it is published), the
// milestone view of a milestone at risk says so (rescuePending, a note,
// an instruction to ask again) and the runway marks it, rather than
// showing none; once they are stored, the same cached service lists them.
func TestQuerySaysRescueIsBeingComputed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "ceo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	shape := storetest.ProjectShape{Open: 60, Done: 120, People: 4, DepShare: 0.25, Milestones: 3, Seed: 3}
	if err := storetest.SeedProject(ctx, pool, p.ID, shape, now); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	f := &worker.Forecaster{Pool: pool, Log: log, Trials: 500, Now: func() time.Time { return now }}
	if err := f.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	mark, err := store.LatestSnapshotMark(ctx, pool, p.ID)
	if err != nil || !mark.Rescued {
		t.Fatalf("snapshot after the recompute: %+v (%v), want its rescue stored", mark, err)
	}
	raw, err := store.SnapshotRescue(ctx, pool, p.ID, mark.Version)
	if err != nil {
		t.Fatal(err)
	}
	var rs []scheduler.MilestoneRescue
	if err := json.Unmarshal(raw, &rs); err != nil || len(rs) == 0 {
		t.Fatalf("rescue %s (%v): the test project has no milestone at risk", raw, err)
	}
	if _, err := pool.Exec(ctx, `UPDATE snapshots SET rescue = NULL WHERE project_id = $1 AND version = $2`, p.ID, mark.Version); err != nil {
		t.Fatal(err)
	}

	svc := tools.NewService(pool, []store.Project{p}, log)
	reg := svc.Registry()
	call := func(input string) (any, string) {
		t.Helper()
		env, terr := reg.Call(ctx, tools.Caller{Name: "t", Scopes: []string{tools.ScopeRead}}, "query_project", json.RawMessage(input))
		if terr != nil {
			t.Fatal(terr)
		}
		return env.Data, env.Instruction
	}
	runway := func() map[int64]tools.RunwayMilestone {
		data, _ := call(`{"view":"runway"}`)
		out := map[int64]tools.RunwayMilestone{}
		for _, m := range data.(tools.RunwayView).Milestones {
			out[m.ID] = m
		}
		return out
	}
	rw := runway()
	for _, r := range rs {
		data, instr := call(fmt.Sprintf(`{"view":"milestone","filters":{"milestoneId":%d}}`, r.Milestone))
		mv := data.(tools.MilestoneView)
		if !mv.RescuePending || len(mv.Rescue) != 0 || mv.RescueNote != tools.RescuePendingNote(mark.Version) || !strings.Contains(instr, "still being computed") {
			t.Errorf("milestone %d while its rescue is computed: pending %v, %d options, note %q, instruction %q", r.Milestone, mv.RescuePending, len(mv.Rescue), mv.RescueNote, instr)
		}
		if m := rw[r.Milestone]; !m.RescuePending || m.RescueOptions != 0 {
			t.Errorf("runway milestone %d while its rescue is computed: %+v", r.Milestone, m)
		}
	}
	if ok, err := store.PutRescue(ctx, pool, p.ID, mark.Version, raw); err != nil || !ok {
		t.Fatalf("store the rescue: %v %v", ok, err)
	}
	svc.Invalidate(p.ID) // skip the cache's freshness window, not its reload
	rw = runway()
	for _, r := range rs {
		data, _ := call(fmt.Sprintf(`{"view":"milestone","filters":{"milestoneId":%d}}`, r.Milestone))
		mv := data.(tools.MilestoneView)
		if mv.RescuePending || len(mv.Rescue) != len(r.Options) || mv.RescueNote != r.Note {
			t.Errorf("milestone %d once its rescue is stored: pending %v, %d options of %d, note %q", r.Milestone, mv.RescuePending, len(mv.Rescue), len(r.Options), mv.RescueNote)
		}
		if m := rw[r.Milestone]; m.RescuePending || m.RescueOptions != len(r.Options) {
			t.Errorf("runway milestone %d once its rescue is stored: %+v", r.Milestone, m)
		}
	}
}
