package worker

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
)

func TestHardDeadline(t *testing.T) {
	t.Parallel()
	for desc, want := range map[string]bool{
		"":                                false,
		"deadline: hard":                  true,
		"First release.\nDeadline: Hard ": true,
		"deadline: hard-ish":              false,
		"the deadline: hard one":          false,
		"a\r\ndeadline: hard\r\nb":        true,
	} {
		if got := hardDeadline(desc); got != want {
			t.Errorf("hardDeadline(%q) = %v, want %v", desc, got, want)
		}
	}
}

func TestWithHardLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		hard bool
		want string
	}{
		{"", true, "deadline: hard"},
		{"", false, ""},
		{"first release", true, "first release\ndeadline: hard"},
		{"first release\n", true, "first release\ndeadline: hard\n"},
		{"first release\ndeadline: hard", true, "first release\ndeadline: hard"},
		{"first release\n  Deadline: HARD  ", true, "first release\n  Deadline: HARD  "},
		{"first release\ndeadline: hard", false, "first release"},
		{"first release\ndeadline: hard\n", false, "first release\n"},
		{"deadline: hard\nnotes below", false, "notes below"},
		{"a\r\ndeadline: hard\r\nb", false, "a\r\nb"},
		{"deadline: hard", false, ""},
		{"the deadline: hard, they say", false, "the deadline: hard, they say"},
		{"first release", false, "first release"},
	}
	for _, c := range cases {
		if got := WithHardLine(c.in, c.hard); got != c.want {
			t.Errorf("WithHardLine(%q, %v) = %q, want %q", c.in, c.hard, got, c.want)
		}
		// Adding then removing gives back what was there.
		if !c.hard && !strings.Contains(strings.ToLower(c.in), "deadline: hard") {
			if got := WithHardLine(WithHardLine(c.in, true), false); got != c.in {
				t.Errorf("round trip of %q = %q", c.in, got)
			}
		}
	}
}

func TestActiveIntervals(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	h := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Hour) }
	issues := []store.Issue{{Number: 1, Assignees: []string{"ann"}}, {Number: 2, Assignees: []string{"bob", "ann"}}}
	ts := []store.Transition{
		{Issue: 1, From: "", To: "diagnosis", At: h(0)},
		{Issue: 1, From: "diagnosis", To: "steeping", At: h(1)},
		{Issue: 1, From: "steeping", To: "in_review", At: h(3)},
		{Issue: 1, From: "in_review", To: "done", At: h(5)},
		{Issue: 2, From: "", To: "steeping", At: h(2)},
	}
	got := activeIntervals(issues, ts, h(10))
	want := []scheduler.WorkInterval{
		{Number: 1, Person: "ann", From: h(1), To: h(5)},
		{Number: 2, Person: "bob", From: h(2), To: h(10)},
	}
	if len(got) != len(want) {
		t.Fatalf("intervals = %+v, want %+v", got, want)
	}
	for k := range want {
		if got[k] != want[k] {
			t.Errorf("interval %d = %+v, want %+v", k, got[k], want[k])
		}
	}
}

func TestStateChanges(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	created := now.Add(-48 * time.Hour)
	closed := now.Add(-time.Hour)
	since := now.Add(-24 * time.Hour)
	m := store.Mirror{
		Issues: []store.Issue{
			{Number: 1, CreatedAt: created},                    // new, never seen
			{Number: 2, CreatedAt: created},                    // replayed by backfill
			{Number: 3, CreatedAt: created},                    // moved by a delivery
			{Number: 4, CreatedAt: created, ClosedAt: &closed}, // closed
			{Number: 5, CreatedAt: created},                    // only a flag changed
		},
		LastDelivery: map[int64]string{1: "d1", 3: "d3", 4: "d4"},
	}
	statuses := []scheduler.IssueStatus{
		{Number: 1, State: scheduler.Diagnosis},
		{Number: 2, State: scheduler.Steeping},
		{Number: 3, State: scheduler.Steeping},
		{Number: 4, State: scheduler.Done},
		{Number: 5, State: scheduler.Steeping, Stale: true},
	}
	prev := map[int64]store.IssueState{
		3: {Number: 3, State: "triage", Flags: json.RawMessage(`{}`), Since: since},
		4: {Number: 4, State: "steeping", Flags: json.RawMessage(`{}`), Since: since},
		5: {Number: 5, State: "steeping", Flags: json.RawMessage(`{}`), Since: since},
	}
	last := map[int64]store.Transition{2: {Issue: 2, From: "triage", To: "steeping", At: since, Cause: "timeline:7"}}
	states, ts := stateChanges(m, statuses, prev, last, now)

	wantTs := []store.Transition{
		{Issue: 1, From: "", To: "diagnosis", At: created, Cause: "delivery:d1"},
		{Issue: 3, From: "triage", To: "steeping", At: now, Cause: "delivery:d3"},
		{Issue: 4, From: "steeping", To: "done", At: closed, Cause: "delivery:d4"},
	}
	if len(ts) != len(wantTs) {
		t.Fatalf("transitions = %+v, want %+v", ts, wantTs)
	}
	for k := range wantTs {
		if ts[k] != wantTs[k] {
			t.Errorf("transition %d = %+v, want %+v", k, ts[k], wantTs[k])
		}
	}
	byNumber := map[int64]store.IssueState{}
	for _, s := range states {
		byNumber[s.Number] = s
	}
	if s := byNumber[2]; s.State != "steeping" || !s.Since.Equal(since) {
		t.Errorf("replayed issue state = %+v, want steeping since the replayed transition", s)
	}
	if s := byNumber[5]; s.State != "steeping" || !s.Since.Equal(since) || !strings.Contains(string(s.Flags), `"stale":true`) {
		t.Errorf("flag-only change = %+v, want steeping, same since, stale", s)
	}
	if len(states) != 5 {
		t.Errorf("state rows = %d, want 5", len(states))
	}
	// Nothing changed: nothing to write.
	again := map[int64]store.IssueState{}
	for _, s := range states {
		again[s.Number] = s
	}
	if states, ts := stateChanges(m, statuses, again, last, now.Add(time.Minute)); len(states) != 0 || len(ts) != 0 {
		t.Errorf("second pass wrote %d states and %d transitions, want none", len(states), len(ts))
	}
}

// TestRecordedDeliveriesToSnapshot drives the recorded Forgejo deliveries
// through ingest and a recompute, and checks the lifecycle, the transitions
// and their causes, and the forecast in the snapshot.
func TestRecordedDeliveriesToSnapshot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, in, p := newIngestFixture(t)
	in.Start()
	defer in.Close()
	deliveries, err := giteafake.Deliveries()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deliveries {
		ch, err := gitea.DecodeDelivery(d.Event, d.RawBody)
		if err != nil {
			t.Fatalf("decode %s: %v", d.Name, err)
		}
		if err := in.Submit(ctx, Incoming{DeliveryID: d.Headers["X-Gitea-Delivery"], Payload: d.RawBody, Change: ch}); err != nil {
			t.Fatalf("ingest %s: %v", d.Name, err)
		}
	}
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	f := &Forecaster{Pool: pool, Log: quietLog(), Trials: 500, Now: func() time.Time { return now }}
	if err := f.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	snap, err := store.LatestSnapshot(ctx, pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var data SnapshotData
	if err := json.Unmarshal(snap.Data, &data); err != nil {
		t.Fatal(err)
	}
	states := map[int64]scheduler.State{}
	for _, s := range data.Statuses {
		states[s.Number] = s.State
	}
	m, err := store.LoadMirror(ctx, pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range m.Issues {
		if i.IsPull {
			if _, ok := states[i.Number]; ok {
				t.Errorf("pull request #%d got a lifecycle state", i.Number)
			}
			continue
		}
		st, ok := states[i.Number]
		if !ok {
			t.Errorf("issue #%d has no state", i.Number)
			continue
		}
		if (i.State == "closed") != (st == scheduler.Done) {
			t.Errorf("issue #%d is %s in Gitea but %s in the snapshot", i.Number, i.State, st)
		}
	}
	ts, err := store.Transitions(ctx, pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) == 0 {
		t.Fatal("no transitions recorded")
	}
	for _, tr := range ts {
		if !strings.HasPrefix(tr.Cause, "delivery:") {
			t.Errorf("transition %+v does not cite its delivery", tr)
		}
	}
	if data.Counts.Open > 0 && len(data.Forecast.Issues) == 0 {
		t.Errorf("snapshot has %d open issues but no forecast", data.Counts.Open)
	}
	for _, fi := range data.Forecast.Issues {
		if fi.Unschedulable == "" && (fi.P10.After(fi.P50) || fi.P50.After(fi.P80) || fi.P10.Before(now)) {
			t.Errorf("issue #%d range %v/%v/%v is not ordered after now", fi.Number, fi.P10, fi.P50, fi.P80)
		}
	}
	// The same mirror recomputed gives the same inputs hash and no new
	// transitions.
	if err := f.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	again, err := store.LatestSnapshot(ctx, pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.InputsHash != snap.InputsHash || again.Version != snap.Version+1 {
		t.Errorf("recompute of the same mirror: hash %s → %s, version %d → %d", snap.InputsHash, again.InputsHash, snap.Version, again.Version)
	}
	ts2, err := store.Transitions(ctx, pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts2) != len(ts) {
		t.Errorf("transitions %d → %d on an unchanged mirror", len(ts), len(ts2))
	}
}

// TestBacktestFollowsFinishedWork: a recompute enqueues a backtest of the
// project's history, the snapshot after it carries the coverage, and a
// recompute with no newly finished work asks for none.
func TestBacktestFollowsFinishedWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	shape := storetest.ProjectShape{Open: 60, Done: 300, People: 4, DepShare: 0.2, Milestones: 2, Seed: 3}
	pool, p, f := seededProject(t, "history", shape, 200)
	now := benchNow
	jobs, err := NewJobClient(pool, JobClientConfig{Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	f.Jobs = jobs
	if err := f.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	backtests := func() int { return count(t, pool, `SELECT count(*) FROM river_job WHERE kind = 'backtest'`) }
	if n := backtests(); n != 1 {
		t.Fatalf("backtest jobs after the first recompute = %d, want 1", n)
	}
	w := &BacktestWorker{Pool: pool, Log: quietLog(), Trials: 100, Now: func() time.Time { return now }}
	if err := w.Work(ctx, &river.Job[BacktestArgs]{Args: BacktestArgs{ProjectID: p.ID}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE river_job SET state = 'completed', finalized_at = now()`); err != nil {
		t.Fatal(err)
	}
	if err := f.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	snap, err := store.LatestSnapshot(ctx, pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var data SnapshotData
	if err := json.Unmarshal(snap.Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.Backtest == nil || !data.Backtest.Current || data.Backtest.Cutoffs == 0 {
		t.Fatalf("snapshot backtest = %+v, want a current one with cut-offs", data.Backtest)
	}
	if c := data.Backtest.P80Coverage; c <= 0 || c > 1 {
		t.Errorf("p80 coverage %v out of (0, 1]", c)
	}
	if n := backtests(); n != 1 {
		t.Errorf("backtest jobs after a recompute with the same finished work = %d, want still 1", n)
	}
}
