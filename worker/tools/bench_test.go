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

// BenchmarkQueryProject times query_project in process, without HTTP, on a
// generated 5,000-issue project: the database round trips of the views
// that need them and the work on the cached snapshot. cmd/toolload
// measures the same over loopback HTTP under a fixed request rate.
func BenchmarkQueryProject(b *testing.B) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	pool, p, f := seededProject(b, "bench", "tools", storetest.ProjectShape{Open: 3500, Done: 1500, People: 15, DepShare: 0.3, Milestones: 8, Seed: 42}, now, 500)
	log := f.Log
	reg := tools.NewService(pool, []store.Project{p}, log).Registry()
	caller := tools.Caller{Name: "bench", Scopes: []string{tools.ScopeRead}}
	for _, c := range []struct{ name, input string }{
		{"focus", `{"view":"focus"}`},
		{"focus-person", `{"view":"focus","filters":{"assignee":"dev03"}}`},
		{"board", `{"view":"board"}`},
		{"board-label", `{"view":"board","filters":{"label":"p/1","limit":100}}`},
		{"milestone", `{"view":"milestone","filters":{"milestoneId":3}}`},
		{"runway", `{"view":"runway"}`},
		{"issue", `{"view":"issue","filters":{"issueId":2500}}`},
		{"search", `{"view":"search","filters":{"query":"open work","limit":20}}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				env, terr := reg.Call(ctx, caller, "query_project", json.RawMessage(c.input))
				if terr != nil {
					b.Fatal(terr)
				}
				if _, err := json.Marshal(env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
