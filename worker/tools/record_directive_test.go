package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/tools"
)

// planned gives the stack an open milestone "v2.0" due 2026-12-18 holding
// #2 and #3, sized est/m, and recomputes, so directives have something to
// move. It returns the milestone's id.
func (s *writeStack) planned(t *testing.T) int64 {
	t.Helper()
	ctx := context.Background()
	body, _ := json.Marshal(map[string]any{"title": "v2.0", "description": "second release", "due_on": "2026-12-18T23:59:59Z"})
	req, _ := http.NewRequest(http.MethodPost, s.fake.URL+"/api/v1/repos/ceo/demo/milestones", bytes.NewReader(body))
	req.Header.Set("Authorization", "token "+s.fake.Token())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create milestone: %v %v", resp, err)
	}
	resp.Body.Close()
	ms, err := s.client.ListMilestones(ctx, "ceo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.UpsertMilestones(ctx, s.pool, s.p.ID, gitea.Rows(ms)); err != nil {
		t.Fatal(err)
	}
	var id int64
	for _, m := range ms {
		if m.Title == "v2.0" {
			id = m.ID
		}
	}
	s.apply(t, writer, `{"ops":[{"op":"set_milestone","issue":2,"milestone":`+itoa(id)+`},{"op":"set_milestone","issue":3,"milestone":`+itoa(id)+`},`+
		`{"op":"set_estimate","issue":2,"estimate":"est/m"},{"op":"set_estimate","issue":3,"estimate":"est/m"}]}`)
	if err := s.engine.Recompute(ctx, s.p.ID); err != nil {
		t.Fatal(err)
	}
	s.svc.Invalidate(s.p.ID)
	s.fake.ResetRequests()
	return id
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func (s *writeStack) record(t *testing.T, input string) (tools.RecordDirectiveOutput, tools.Envelope) {
	t.Helper()
	env, terr := s.call(t, writer, "record_directive", input)
	if terr != nil {
		t.Fatalf("record_directive %s: %v", input, terr)
	}
	return env.Data.(tools.RecordDirectiveOutput), env
}

func TestRecordDirectiveThenApply(t *testing.T) {
	t.Parallel()
	s := newWriteStack(t)
	ms := s.planned(t)
	ctx := context.Background()

	quote := "Make #3 way bigger — it's really an XL, sorry."
	out, env := s.record(t, `{"kind":"reestimate","quote":"`+quote+`","target":{"issue":3},"params":{"estimate":"est/xl"},"rationale":"the PM re-scoped it"}`)
	if out.DirectiveID == 0 || len(out.Consequence) != 1 || out.Consequence[0].Milestone != ms {
		t.Fatalf("answer = %+v", out)
	}
	c := out.Consequence[0]
	if c.Before.P80 == "" || c.After.P80 <= c.Before.P80 {
		t.Fatalf("a bigger estimate did not move p80 later: %+v", c)
	}
	if !strings.Contains(out.Summary, "pending until apply_changes") {
		t.Fatalf("summary = %q", out.Summary)
	}
	if !strings.Contains(env.Instruction, `{"op":"set_estimate","issue":3,"estimate":"est/xl"}`) || env.Safety == "" {
		t.Fatalf("instruction = %q, safety %q", env.Instruction, env.Safety)
	}
	// The same batch, structured: what a client sends without reading prose.
	if ops, _ := json.Marshal(out.ProposedOps); string(ops) != `[{"op":"set_estimate","issue":3,"estimate":"est/xl"}]` {
		t.Fatalf("proposedOps = %s", ops)
	}
	if w := s.writes(); len(w) != 0 {
		t.Fatalf("record_directive wrote to Gitea: %v", w)
	}
	d, err := store.GetDirective(ctx, s.pool, s.p.ID, out.DirectiveID)
	if err != nil || d.Status != store.DirectivePending || d.Quote != quote || d.Caller != "planner" || d.Rationale != "the PM re-scoped it" {
		t.Fatalf("ledger entry = %+v, %v", d, err)
	}

	view := func() tools.DirectivesView {
		t.Helper()
		env, terr := s.call(t, writer, "query_project", `{"view":"directives"}`)
		if terr != nil {
			t.Fatal(terr)
		}
		return env.Data.(tools.DirectivesView)
	}
	v := view()
	if v.PendingTotal != 1 || v.Pending[0].ID != out.DirectiveID || !strings.Contains(string(v.Pending[0].Consequence), `"after"`) {
		t.Fatalf("directives view = %+v", v)
	}

	applied := s.apply(t, writer, `{"ops":[{"op":"set_estimate","issue":3,"estimate":"est/xl"}],"directiveId":`+itoa(out.DirectiveID)+`}`)
	if applied.Applied != 1 || len(applied.Effects) != 1 || applied.Effects[0].Milestone != ms ||
		applied.Effects[0].After.P80 != c.After.P80 || applied.Effects[0].After.PDue != c.After.PDue {
		t.Fatalf("apply = %+v, want the effect %+v", applied, c)
	}
	d, err = store.GetDirective(ctx, s.pool, s.p.ID, out.DirectiveID)
	if err != nil || len(d.Predicted) == 0 || d.AppliedCounter == nil || d.Realized != nil {
		t.Fatalf("ledger entry after apply = %+v, %v", d, err)
	}
	// The next snapshot realizes it, and it reads as quoted.
	if err := s.engine.Recompute(ctx, s.p.ID); err != nil {
		t.Fatal(err)
	}
	s.svc.Invalidate(s.p.ID)
	d, err = store.GetDirective(ctx, s.pool, s.p.ID, out.DirectiveID)
	if err != nil || len(d.Realized) == 0 || d.RealizedVersion == nil {
		t.Fatalf("ledger entry after the recompute = %+v, %v", d, err)
	}
	var predicted []tools.BeforeAfter
	var realized []scheduler.MilestoneBand
	if err := json.Unmarshal(d.Predicted, &predicted); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(d.Realized, &realized); err != nil {
		t.Fatal(err)
	}
	if m := scheduler.RealizedMismatches(predicted, realized); len(m) > 0 || len(predicted) == 0 {
		t.Fatalf("the quote did not come true (%d milestones predicted): %v", len(predicted), m)
	}
	v = view()
	if v.PendingTotal != 0 || len(v.Recent) == 0 || v.Recent[0].ID != out.DirectiveID || v.Recent[0].Status != store.DirectiveApplied ||
		v.Recent[0].AppliedAt == nil || v.Recent[0].Quote != quote || !strings.Contains(string(v.Recent[0].Consequence), c.After.P80) {
		t.Fatalf("directives view after apply = %+v", v)
	}
	if r := v.Recent[0]; r.CameTrue == nil || !*r.CameTrue || r.RealizedVersion == nil || len(r.Predicted) == 0 || len(r.Realized) == 0 {
		t.Fatalf("directives view keeps no predicted and realized figures: %+v", r)
	}

	md, err := s.svc.PMStateMarkdown(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# PM state: ceo/demo", "> " + quote, "reestimate on issue #3 (applied)", "No directive is waiting", "v2.0: p50",
		"- predicted when applied:\n  - v2.0: p50 ", "- realized in snapshot " + itoa(*d.RealizedVersion) + ": as predicted, every milestone"} {
		if !strings.Contains(md, want) {
			t.Fatalf("pm-state.md lacks %q:\n%s", want, md)
		}
	}
}

func TestRecordDirectiveKinds(t *testing.T) {
	t.Parallel()
	s := newWriteStack(t)
	ms := s.planned(t)
	ctx := context.Background()
	m := itoa(ms)

	t.Run("reprioritize", func(t *testing.T) {
		_, env := s.record(t, `{"kind":"reprioritize","quote":"#2 is urgent","target":{"issue":2},"params":{"priority":0}}`)
		if !strings.Contains(env.Instruction, `"priority":"p/0"`) {
			t.Fatalf("instruction = %q", env.Instruction)
		}
		_, env = s.record(t, `{"kind":"reprioritize","quote":"#2 is low","target":{"issue":2},"params":{"priority":"P/3"}}`)
		if !strings.Contains(env.Instruction, `"priority":"p/3"`) {
			t.Fatalf("instruction = %q", env.Instruction)
		}
	})
	t.Run("set-deadline", func(t *testing.T) {
		out, env := s.record(t, `{"kind":"set-deadline","quote":"v2.0 moves to January and it is hard","target":{"milestone":`+m+`},"params":{"due":"2027-01-29","hard":true}}`)
		if len(out.Consequence) != 1 || out.Consequence[0].After.PDue < out.Consequence[0].Before.PDue {
			t.Fatalf("a later due date lowered the chance to meet it: %+v", out)
		}
		if !strings.Contains(env.Instruction, `"op":"set_deadline_hard"`) {
			t.Fatalf("instruction = %q", env.Instruction)
		}
	})
	t.Run("scope", func(t *testing.T) {
		out, env := s.record(t, `{"kind":"scope","quote":"drop #3 from v2.0","target":{"milestone":`+m+`},"params":{"drop":[3]}}`)
		// #2 waits on #3 whatever milestone #3 is in, so v2.0 may well not
		// move; it must not move later.
		for _, c := range out.Consequence {
			if c.After.P80 > c.Before.P80 {
				t.Fatalf("dropping work moved the milestone later: %+v", out)
			}
		}
		if !strings.Contains(env.Instruction, `{"op":"set_milestone","issue":3,"milestone":null}`) {
			t.Fatalf("instruction = %q", env.Instruction)
		}
	})
	t.Run("capacity", func(t *testing.T) {
		out, _ := s.record(t, `{"kind":"capacity","quote":"Dana joins at 4 hours a day, off over the new year","target":{"member":"dana"},"params":{"hoursPerDay":4,"timeOff":[{"from":"2026-12-24","to":"2027-01-01"}]}}`)
		d, err := store.GetDirective(ctx, s.pool, s.p.ID, out.DirectiveID)
		if err != nil || d.Status != store.DirectiveApplied || d.AppliedAt == nil {
			t.Fatalf("capacity directive = %+v, %v", d, err)
		}
		caps, err := store.CapacityCalendar(ctx, s.pool, s.p.ID)
		if err != nil || len(caps) != 1 || caps[0].Login != "dana" || *caps[0].HoursPerDay != 4 || len(caps[0].TimeOff) != 1 {
			t.Fatalf("capacity calendar = %+v, %v", caps, err)
		}
		// More time off adds to it; hours stay.
		s.record(t, `{"kind":"capacity","quote":"Dana is also off on the 3rd","target":{"member":"dana"},"params":{"timeOff":[{"from":"2027-01-04","to":"2027-01-04"}]}}`)
		caps, _ = store.CapacityCalendar(ctx, s.pool, s.p.ID)
		if len(caps[0].TimeOff) != 2 || *caps[0].HoursPerDay != 4 {
			t.Fatalf("capacity calendar = %+v", caps)
		}
		// The recompute's input has Dana on the team with that calendar.
		var in scheduler.Input
		if _, err := s.engine.WhatIf(ctx, s.p.ID, func(x scheduler.Input) []scheduler.Change { in = x; return nil }); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, p := range in.People {
			if p.Login == "dana" {
				found = p.Calendar.HoursPerDay == 4 && len(p.Calendar.TimeOff) == 2
			}
		}
		if !found {
			t.Fatalf("people = %+v", in.People)
		}
		if err := s.engine.Recompute(ctx, s.p.ID); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("note", func(t *testing.T) {
		out, _ := s.record(t, `{"kind":"note","quote":"Remember the demo on Friday."}`)
		if len(out.Consequence) != 0 || !strings.Contains(out.Summary, "noted") {
			t.Fatalf("note = %+v", out)
		}
	})
	if w := s.writes(); len(w) != 0 {
		t.Fatalf("directives wrote to Gitea: %v", w)
	}

	pendingBefore := countDirectives(t, s)
	errs := []struct{ name, input, code, field string }{
		{"no params", `{"kind":"reprioritize","quote":"make it urgent","target":{"issue":2}}`, tools.CodeModelUnavailable, "params"},
		{"null params", `{"kind":"scope","quote":"cut scope","target":{"milestone":` + m + `},"params":null}`, tools.CodeModelUnavailable, "params"},
		{"empty quote", `{"kind":"note","quote":" "}`, tools.CodeInvalidInput, "quote"},
		{"unknown kind", `{"kind":"fire","quote":"x","params":{}}`, tools.CodeInvalidInput, "kind"},
		{"no target", `{"kind":"reprioritize","quote":"x","params":{"priority":1}}`, tools.CodeInvalidInput, "target.issue"},
		{"unknown issue", `{"kind":"reprioritize","quote":"x","target":{"issue":99},"params":{"priority":1}}`, tools.CodeNotFound, "target.issue"},
		{"priority out of range", `{"kind":"reprioritize","quote":"x","target":{"issue":2},"params":{"priority":7}}`, tools.CodeInvalidInput, "params.priority"},
		{"param of another kind", `{"kind":"reprioritize","quote":"x","target":{"issue":2},"params":{"estimate":"est/m"}}`, tools.CodeInvalidInput, "params.estimate"},
		{"bad estimate", `{"kind":"reestimate","quote":"x","target":{"issue":2},"params":{"estimate":"huge"}}`, tools.CodeInvalidInput, "params.estimate"},
		{"bad date", `{"kind":"set-deadline","quote":"x","target":{"milestone":` + m + `},"params":{"due":"next friday"}}`, tools.CodeInvalidInput, "params.due"},
		{"unknown milestone", `{"kind":"set-deadline","quote":"x","target":{"milestone":404},"params":{"hard":true}}`, tools.CodeNotFound, "target.milestone"},
		{"drop a hard-deadline issue", `{"kind":"scope","quote":"drop #1","target":{"milestone":` + m + `},"params":{"drop":[1]}}`, tools.CodeInvalidInput, "params.drop"},
		{"zero hours", `{"kind":"capacity","quote":"x","target":{"member":"dana"},"params":{"hoursPerDay":0}}`, tools.CodeInvalidInput, "params.hoursPerDay"},
		{"time off backwards", `{"kind":"capacity","quote":"x","target":{"member":"dana"},"params":{"timeOff":[{"from":"2027-01-04","to":"2027-01-01"}]}}`, tools.CodeInvalidInput, "params.timeOff"},
		{"capacity without member", `{"kind":"capacity","quote":"x","params":{"hoursPerDay":3}}`, tools.CodeInvalidInput, "target.member"},
	}
	for _, c := range errs {
		t.Run(c.name, func(t *testing.T) {
			_, terr := s.call(t, writer, "record_directive", c.input)
			if terr == nil || terr.Code != c.code || terr.Field != c.field {
				t.Fatalf("error = %v, want %s on %q", terr, c.code, c.field)
			}
		})
	}
	if n := countDirectives(t, s); n != pendingBefore {
		t.Fatalf("refused directives were recorded: %d -> %d", pendingBefore, n)
	}
}

func countDirectives(t *testing.T, s *writeStack) int {
	t.Helper()
	var n int
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM directives`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
