package tools_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker/tools"
)

// BenchmarkRecordDirective times record_directive on a generated
// 5,000-issue project at the default 2,000 trials: the mirror read that
// rebuilds the engine input, the calibration, the two forecasts of the
// what-if and the ledger append. apply_changes pays the same what-if once
// per batch, before it writes.
func BenchmarkRecordDirective(b *testing.B) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	pool, p, f := seededProject(b, "bench", "writes", storetest.ProjectShape{Open: 3500, Done: 1500, People: 15, DepShare: 0.3, Milestones: 8, Seed: 42}, now, 0)
	log := f.Log
	svc := tools.NewService(pool, []store.Project{p}, log)
	svc.Write = tools.WriteConfig{Engine: f, Now: func() time.Time { return now }}
	reg := svc.Registry()
	caller := tools.Caller{Name: "bench", Scopes: []string{tools.ScopeRead, tools.ScopeWrite}}
	input := json.RawMessage(`{"kind":"reestimate","quote":"2500 is bigger","target":{"issue":2500},"params":{"estimate":"est/xl"}}`)
	b.ResetTimer()
	for b.Loop() {
		if _, terr := reg.Call(ctx, caller, "record_directive", input); terr != nil {
			b.Fatal(terr)
		}
	}
}
