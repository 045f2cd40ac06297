package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
)

// syncFixture is a fresh database with project ceo/demo, a fake Forgejo
// seeded with the recorded scenario, and a Syncer between them.
type syncFixture struct {
	pool   *store.Pool
	fake   *giteafake.Server
	client *gitea.Client
	syncer *Syncer
	p      store.Project
}

func newSyncFixture(t *testing.T) *syncFixture {
	t.Helper()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "ceo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	fake, err := giteafake.New(giteafake.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	client, err := gitea.New(fake.URL, fake.Token(), gitea.Options{BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := NewJobClient(pool, JobClientConfig{Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	return &syncFixture{
		pool: pool, fake: fake, client: client, p: p,
		syncer: &Syncer{Pool: pool, Gitea: client, Jobs: jobs, Log: quietLog()},
	}
}

func (f *syncFixture) mirror(t *testing.T) store.Mirror {
	t.Helper()
	m, err := store.LoadMirror(context.Background(), f.pool, f.p.ID)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// comparable drops what legitimately differs between a webhook's view and
// an API listing of the same issue: the update and activity stamps (a later
// API call sees later edits than the delivery that carried the row) and the
// instance-wide id, which pull request payloads spell differently.
func comparableIssue(i store.Issue) store.Issue {
	i.UpdatedAt, i.LastActivityAt = time.Time{}, time.Time{}
	i.GiteaID = 0
	if i.Labels == nil {
		i.Labels = []string{}
	}
	if i.Assignees == nil {
		i.Assignees = []string{}
	}
	if i.ClosingRefs == nil {
		i.ClosingRefs = []int64{}
	}
	slices.Sort(i.Labels)
	return i
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBackfillReproducesWebhookReplay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// Mirror A: every recorded delivery, through the ingest path.
	poolA, in, pA := newIngestFixture(t)
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
	fromHooks, err := store.LoadMirror(ctx, poolA, pA.ID)
	if err != nil {
		t.Fatal(err)
	}

	// Mirror B: a backfill from the fake, whose state is where the
	// recorded scenario ended.
	f := newSyncFixture(t)
	var progress [][2]int
	f.syncer.Progress = func(done, total int) { progress = append(progress, [2]int{done, total}) }
	if err := f.syncer.Backfill(ctx, f.p); err != nil {
		t.Fatal(err)
	}
	fromAPI := f.mirror(t)

	if len(fromAPI.Issues) == 0 || len(fromAPI.Issues) != len(fromHooks.Issues) {
		t.Fatalf("issues: backfill %d, webhooks %d", len(fromAPI.Issues), len(fromHooks.Issues))
	}
	for k := range fromAPI.Issues {
		a, h := comparableIssue(fromAPI.Issues[k]), comparableIssue(fromHooks.Issues[k])
		if asJSON(t, a) != asJSON(t, h) {
			t.Errorf("issue #%d differs:\nbackfill %s\nwebhooks %s", a.Number, asJSON(t, a), asJSON(t, h))
		}
	}
	// Webhooks carry labels and milestones only as they appear on issues;
	// every one they saw must be in the backfill, with the same fields.
	for _, l := range fromHooks.Labels {
		i := slices.IndexFunc(fromAPI.Labels, func(x store.Label) bool { return x.ID == l.ID })
		if i < 0 || fromAPI.Labels[i].Name != l.Name {
			t.Errorf("label %d %q from webhooks missing in backfill", l.ID, l.Name)
		}
	}
	for _, m := range fromHooks.Milestones {
		i := slices.IndexFunc(fromAPI.Milestones, func(x store.Milestone) bool { return x.ID == m.ID })
		if i < 0 || fromAPI.Milestones[i].Title != m.Title {
			t.Errorf("milestone %d %q from webhooks missing in backfill", m.ID, m.Title)
		}
	}
	// What webhooks never carry, backfill must bring: dependencies,
	// tracked time and timelines.
	if len(fromAPI.Dependencies) == 0 || len(fromAPI.TrackedTimes) == 0 || len(fromAPI.Timeline) == 0 {
		t.Errorf("backfill brought deps %d, times %d, timeline %d; want all > 0",
			len(fromAPI.Dependencies), len(fromAPI.TrackedTimes), len(fromAPI.Timeline))
	}
	if len(progress) == 0 || progress[len(progress)-1][0] != progress[len(progress)-1][1] {
		t.Errorf("progress = %v, want it to end at total", progress)
	}

	// A second backfill is idempotent.
	if err := f.syncer.Backfill(ctx, f.p); err != nil {
		t.Fatal(err)
	}
	again := f.mirror(t)
	if asJSON(t, again) != asJSON(t, fromAPI) {
		t.Error("second backfill changed the mirror")
	}
}

func TestReconcileRepairsDroppedWebhooks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := time.Now().UTC()
	f := newSyncFixture(t)
	f.syncer.Now = func() time.Time { return clock }
	if err := f.syncer.Backfill(ctx, f.p); err != nil {
		t.Fatal(err)
	}
	before, err := store.ChangeCounter(ctx, f.pool, f.p.ID)
	if err != nil {
		t.Fatal(err)
	}

	// Changes made in Gitea whose webhooks never arrive (the fake has no
	// hook URL), and one Gitea never sends a webhook for at all: a new
	// dependency.
	title := "Retitled while the webhook was lost"
	if _, err := f.client.EditIssue(ctx, "ceo", "demo", 3, gitea.EditIssueOptions{Title: gitea.String(title)}); err != nil {
		t.Fatal(err)
	}
	if err := f.client.AddDependency(ctx, "ceo", "demo", 3, gitea.IssueMeta{Owner: "ceo", Repo: "demo", Index: 1}); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(10 * time.Minute)
	f.fake.ResetRequests()
	if err := f.syncer.Reconcile(ctx, f.p); err != nil {
		t.Fatal(err)
	}

	got, err := store.GetIssue(ctx, f.pool, f.p.ID, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != title {
		t.Errorf("title after reconcile = %q, want %q", got.Title, title)
	}
	m := f.mirror(t)
	if !slices.ContainsFunc(m.Dependencies, func(d store.Dependency) bool { return d.Issue == 3 && d.DependsOn == 1 }) {
		t.Errorf("dependency #3 → #1 not repaired: %+v", m.Dependencies)
	}
	after, err := store.ChangeCounter(ctx, f.pool, f.p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("change counter %d → %d: reconcile must trigger a recompute", before, after)
	}
	// Cheap enough to run often: it asks only for what changed since the
	// last sync, never for every issue's timeline.
	for _, r := range f.fake.Requests() {
		if r.Method == http.MethodGet && strings.HasSuffix(r.Path, "/timeline") {
			t.Errorf("reconcile fetched a timeline: %s", r.Path)
		}
		if r.Method == http.MethodGet && r.Path == "/repos/ceo/demo/issues" && r.Query.Get("since") == "" {
			t.Errorf("reconcile listed issues without since: %v", r.Query)
		}
	}
}

func TestBackfillResumesAfterCrash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSyncFixture(t)
	f.syncer.Checkpoint = 1
	// #3's timeline fails on every attempt the client makes (4), so the
	// backfill stops after committing #1 and #2.
	f.fake.InjectFault(giteafake.Fault{Method: http.MethodGet, PathPrefix: "/repos/ceo/demo/issues/3/timeline", Status: http.StatusInternalServerError, Times: 4})
	if err := f.syncer.Backfill(ctx, f.p); err == nil {
		t.Fatal("backfill succeeded through a failing Gitea")
	}
	st, err := store.GetSyncState(ctx, f.pool, f.p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.BackfillDoneAt != nil {
		t.Fatal("a failed backfill was marked done")
	}
	if st.BackfillCursor != 2 {
		t.Fatalf("cursor after the crash = %d, want 2", st.BackfillCursor)
	}

	// Reconcile on a project never fully backfilled runs the backfill,
	// which resumes after the cursor and finishes.
	f.fake.ResetRequests()
	if err := f.syncer.Reconcile(ctx, f.p); err != nil {
		t.Fatal(err)
	}
	read := map[string]bool{}
	for _, r := range f.fake.Requests() {
		read[r.Path] = true
	}
	for _, n := range []int{1, 2} {
		if read[fmt.Sprintf("/repos/ceo/demo/issues/%d/timeline", n)] {
			t.Errorf("resumed backfill re-read the timeline of #%d", n)
		}
	}
	for _, n := range []int{3, 4} {
		if !read[fmt.Sprintf("/repos/ceo/demo/issues/%d/timeline", n)] {
			t.Errorf("resumed backfill never read the timeline of #%d", n)
		}
	}
	st, err = store.GetSyncState(ctx, f.pool, f.p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.BackfillDoneAt == nil || st.LastSyncedAt == nil {
		t.Fatalf("sync state after resume: %+v", st)
	}
	m := f.mirror(t)
	// #3 has no timeline events in the recorded scenario.
	for _, n := range []int64{1, 2, 4} {
		if !slices.ContainsFunc(m.Timeline, func(e store.TimelineEvent) bool { return e.Issue == n }) {
			t.Errorf("timeline of #%d missing after the resumed backfill", n)
		}
	}
}
