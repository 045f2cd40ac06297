package api

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"testing"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
)

// ingestStack is the real path: router, group-commit ingester, River and
// Postgres.
type ingestStack struct {
	pool    *store.Pool
	project store.Project
	handler http.Handler
}

func newIngestStack(t *testing.T) ingestStack {
	t.Helper()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "ceo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	jobs, err := worker.NewJobClient(pool, worker.JobClientConfig{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	in := worker.NewIngester(pool, jobs, []store.Project{p}, log, worker.IngesterConfig{})
	in.Start()
	t.Cleanup(in.Close)
	h := NewRouter(Config{WebhookSecret: giteafake.RecordedSecret, Sink: in, Decode: gitea.DecodeDelivery, Log: log})
	return ingestStack{pool: pool, project: p, handler: h}
}

func (s ingestStack) send(t *testing.T, d giteafake.Delivery, body []byte) int {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/webhooks/gitea", bytes.NewReader(body))
	for k, v := range d.Headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	return rec.Code
}

func (s ingestStack) mirror(t *testing.T) store.Mirror {
	t.Helper()
	m, err := store.LoadMirror(context.Background(), s.pool, s.project.ID)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (s ingestStack) issue(t *testing.T, n int64) store.Issue {
	t.Helper()
	i, err := store.GetIssue(context.Background(), s.pool, s.project.ID, n)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// TestReplayRecordedDeliveries sends every delivery recorded from a real
// Forgejo, signed as it was, and checks the mirror after the steps that
// matter, then replays them all and expects nothing to change.
func TestReplayRecordedDeliveries(t *testing.T) {
	t.Parallel()
	ds, err := giteafake.Deliveries()
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 41 {
		t.Fatalf("recorded deliveries = %d, want 41", len(ds))
	}
	s := newIngestStack(t)
	ms := func(i store.Issue) int64 {
		if i.Milestone == nil {
			return 0
		}
		return *i.Milestone
	}
	checks := map[string]func(t *testing.T){
		"002-issues-opened": func(t *testing.T) {
			if i := s.issue(t, 1); i.Title != "Widget breaks on Tuesdays" || i.State != "open" || i.Author != "ceo" {
				t.Fatalf("issue 1 = %+v", i)
			}
		},
		"006-issues-label_updated": func(t *testing.T) {
			if got := s.issue(t, 1).Labels; !slices.Equal(got, []string{"deadline/hard", "est/M"}) {
				t.Fatalf("labels = %v, want exclusive est/M to replace est/S", got)
			}
		},
		"010-issues-label_cleared": func(t *testing.T) {
			if got := s.issue(t, 1).Labels; len(got) != 0 {
				t.Fatalf("labels after label_cleared = %v, want none (the payload's list is stale)", got)
			}
		},
		"011-issues-milestoned": func(t *testing.T) {
			if got := ms(s.issue(t, 1)); got != 1 {
				t.Fatalf("milestone = %d, want 1", got)
			}
		},
		"012-issues-demilestoned": func(t *testing.T) {
			if got := ms(s.issue(t, 1)); got != 0 {
				t.Fatalf("milestone after demilestoned = %d, want none (the payload's is stale)", got)
			}
		},
		"015-issues-assigned": func(t *testing.T) {
			if got := s.issue(t, 1).Assignees; !slices.Equal(got, []string{"ceo", "dev"}) {
				t.Fatalf("assignees = %v", got)
			}
		},
		"017-issues-unassigned": func(t *testing.T) {
			if got := s.issue(t, 1).Assignees; len(got) != 0 {
				t.Fatalf("assignees = %v, want none", got)
			}
		},
		"021-issue_comment-deleted": func(t *testing.T) {
			m := s.mirror(t)
			if len(m.Comments) != 1 {
				t.Fatalf("comments = %+v, want the one left after the delete", m.Comments)
			}
		},
		"022-issues-closed": func(t *testing.T) {
			if i := s.issue(t, 1); i.State != "closed" || i.ClosedAt == nil {
				t.Fatalf("issue 1 after close = %+v", i)
			}
		},
		"023-issues-reopened": func(t *testing.T) {
			if i := s.issue(t, 1); i.State != "open" {
				t.Fatalf("issue 1 after reopen = %s", i.State)
			}
		},
		"029-pull_request-opened": func(t *testing.T) {
			pr := s.issue(t, 4)
			if !pr.IsPull || pr.Ref != "fix-1" || !slices.Equal(pr.ClosingRefs, []int64{1}) || pr.State != "open" {
				t.Fatalf("pull 4 = %+v", pr)
			}
		},
		"038-pull_request-closed": func(t *testing.T) {
			if pr := s.issue(t, 4); !pr.Merged || pr.State != "closed" {
				t.Fatalf("pull 4 after merge = %+v", pr)
			}
		},
	}
	for _, d := range ds {
		if code := s.send(t, d, d.RawBody); code != http.StatusAccepted {
			t.Fatalf("%s: status %d, want 202", d.Name, code)
		}
		if check, ok := checks[d.Name]; ok {
			t.Run(d.Name, check)
		}
	}

	final := s.mirror(t)
	if n := len(final.Issues); n != 4 {
		t.Fatalf("issues in mirror = %d, want 4", n)
	}
	one := s.issue(t, 1)
	if one.State != "closed" || ms(one) != 1 || !slices.Equal(one.Labels, []string{"deadline/hard", "est/S", "p/1"}) {
		t.Fatalf("final issue 1 = %+v", one)
	}
	var deliveries int
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM deliveries`).Scan(&deliveries); err != nil {
		t.Fatal(err)
	}
	if deliveries != len(ds) {
		t.Fatalf("deliveries stored = %d, want %d", deliveries, len(ds))
	}

	// Replaying everything (Gitea's "redeliver") must change nothing.
	for _, d := range ds {
		if code := s.send(t, d, d.RawBody); code != http.StatusAccepted {
			t.Fatalf("replay %s: status %d, want 202", d.Name, code)
		}
	}
	if again := s.mirror(t); !reflect.DeepEqual(final, again) {
		t.Fatalf("replaying the same deliveries changed the mirror:\nbefore %+v\nafter  %+v", final, again)
	}

	// A tampered body under a valid-looking signature writes nothing.
	d := ds[1]
	tampered := bytes.Replace(d.RawBody, []byte("Tuesdays"), []byte("Mondays!"), 1)
	d.Headers = maps(d.Headers)
	d.Headers["X-Gitea-Delivery"], d.Headers["X-Forgejo-Delivery"] = "tampered", "tampered"
	if code := s.send(t, d, tampered); code != http.StatusUnauthorized {
		t.Fatalf("tampered body: status %d, want 401", code)
	}
	var tamperedRows int
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM deliveries WHERE id = 'tampered'`).Scan(&tamperedRows); err != nil {
		t.Fatal(err)
	}
	if tamperedRows != 0 {
		t.Fatal("a tampered delivery was stored")
	}
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
