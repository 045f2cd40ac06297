package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
	"github.com/commitea/commitea/worker/prose"
	"github.com/commitea/commitea/worker/standup"
	"github.com/commitea/commitea/worker/standup/sinktest"
)

// standupFixture is a generated project with a snapshot, the five sinks on
// loopback servers (the Gitea one on a fake Forgejo), and the standup
// service on a fixed clock: Tuesday 2026-12-01, 09:00 UTC.
type standupFixture struct {
	pool     *store.Pool
	p        store.Project
	now      time.Time
	forecast *Forecaster
	standups *Standups

	webhook, slack, matrix *sinktest.Endpoint
	smtp                   *sinktest.SMTPServer
	fake                   *giteafake.Server
	gitea                  *gitea.Client
	// retryBase is the delivery jobs' first retry delay.
	retryBase time.Duration
	// emailHost is the email sink's Message-ID host (server.public_url's).
	emailHost string
}

const standupDay = "2026-12-01"

func newStandupFixture(t *testing.T) *standupFixture {
	t.Helper()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "acme", "app")
	if err != nil {
		t.Fatal(err)
	}
	f := &standupFixture{pool: pool, p: p, now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), retryBase: 20 * time.Millisecond}
	shape := storetest.ProjectShape{Open: 80, Done: 60, People: 4, DepShare: 0.3, Milestones: 2, Seed: 3}
	if err := storetest.SeedProject(ctx, pool, p.ID, shape, f.now); err != nil {
		t.Fatal(err)
	}
	// The project stands for one imported from Gitea: a standup waits for that.
	if err := store.PutSyncState(ctx, pool, store.SyncState{ProjectID: p.ID, LastSyncedAt: &f.now, BackfillDoneAt: &f.now}); err != nil {
		t.Fatal(err)
	}
	clock := func() time.Time { return f.now }
	f.forecast = &Forecaster{Pool: pool, Log: quietLog(), Trials: 300, StaleWorkingDays: 3, Now: clock}
	if err := f.forecast.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	f.standups = &Standups{Pool: pool, Log: quietLog(), Location: time.UTC, Now: clock}
	f.webhook, f.slack, f.matrix = sinktest.NewEndpoint(t), sinktest.NewEndpoint(t), sinktest.NewEndpoint(t)
	f.smtp = sinktest.NewSMTPServer(t)
	if f.fake, err = giteafake.New(giteafake.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.fake.Close)
	if f.gitea, err = gitea.New(f.fake.URL, f.fake.Token(), gitea.Options{BaseBackoff: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	return f
}

// dueInAWeek moves milestone 1 (hard) to a week out, far too soon for its
// work, and recomputes: the snapshot then has a milestone at risk.
func (f *standupFixture) dueInAWeek(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if _, err := f.pool.Exec(ctx, `UPDATE milestones SET due_on = $1 WHERE project_id = $2 AND id = 1`, f.now.AddDate(0, 0, 7), f.p.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.forecast.Recompute(ctx, f.p.ID); err != nil {
		t.Fatal(err)
	}
}

func (f *standupFixture) sinks(store.Project) []standup.Sink {
	return []standup.Sink{
		&standup.WebhookSink{URL: f.webhook.URL, Secret: "0123456789abcdef"},
		&standup.SlackSink{URL: f.slack.URL},
		&standup.MatrixSink{Homeserver: f.matrix.URL, Room: "!standup:example.org", AccessToken: "token"},
		&standup.EmailSink{Addr: f.smtp.Addr, From: "commitea@example.org", To: []string{"team@example.org"}, Host: f.emailHost},
		&standup.GiteaSink{Client: f.gitea, Owner: "ceo", Repo: "demo", Issue: 1},
	}
}

// startJobs runs a River client with the standup workers, as serve does; it
// stands for one process and is stopped when the test ends.
func (f *standupFixture) startJobs(t *testing.T) *JobClient {
	t.Helper()
	workers := river.NewWorkers()
	sw := &StandupWorker{Standups: f.standups, Sinks: f.sinks}
	river.AddWorker(workers, sw)
	river.AddWorker(workers, &StandupDeliveryWorker{Pool: f.pool, Sinks: f.sinks, Log: quietLog(),
		RetryBase: f.retryBase, RetryMax: 8 * f.retryBase})
	jobs, err := NewJobClient(f.pool, JobClientConfig{Work: true, Workers: workers, Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	sw.Jobs = jobs
	if err := jobs.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = jobs.Stop(ctx)
	})
	return jobs
}

// waitIdle waits until River has no unfinished job.
func (f *standupFixture) waitIdle(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		err := f.pool.QueryRow(context.Background(), `SELECT count(*) FROM river_job
			WHERE state IN ('available', 'pending', 'running', 'retryable', 'scheduled')`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs still unfinished", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (f *standupFixture) deliveries(t *testing.T) map[string]store.StandupDelivery {
	t.Helper()
	day, _ := ParseDay(standupDay)
	ds, err := store.StandupDeliveries(context.Background(), f.pool, f.p.ID, day)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]store.StandupDelivery{}
	for _, d := range ds {
		out[d.Sink] = d
	}
	return out
}

// received counts what each sink got: messages, not attempts.
func (f *standupFixture) received(t *testing.T) map[string]int {
	t.Helper()
	cs, err := f.gitea.ListIssueComments(context.Background(), "ceo", "demo", 1, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	comments := 0
	for _, c := range cs {
		if strings.Contains(c.Body, "<!-- commitea-standup-") {
			comments++
		}
	}
	return map[string]int{
		standup.SinkWebhook: len(f.webhook.Received()), standup.SinkSlack: len(f.slack.Received()),
		standup.SinkMatrix: len(f.matrix.Received()), standup.SinkEmail: len(f.smtp.Messages()),
		standup.SinkGitea: comments,
	}
}

func (f *standupFixture) wantOnceEach(t *testing.T) {
	t.Helper()
	for sink, n := range f.received(t) {
		if n != 1 {
			t.Errorf("%s received %d standups, want 1", sink, n)
		}
	}
	ds := f.deliveries(t)
	if len(ds) != 5 {
		t.Errorf("delivery rows = %d, want 5", len(ds))
	}
	for sink, d := range ds {
		if d.Status != store.DeliveryDelivered {
			t.Errorf("%s: status %s (%s)", sink, d.Status, d.LastError)
		}
	}
}

func TestStandupDeliveredOnceWhenTheJobRunsTwice(t *testing.T) {
	f := newStandupFixture(t)
	ctx := context.Background()
	jobs := f.startJobs(t)
	for range 2 {
		if _, err := jobs.Insert(ctx, StandupArgs{ProjectID: f.p.ID, Day: standupDay}, nil); err != nil {
			t.Fatal(err)
		}
		f.waitIdle(t)
	}
	f.wantOnceEach(t)
	for sink, d := range f.deliveries(t) {
		if d.Attempts != 1 {
			t.Errorf("%s: %d attempts, want 1", sink, d.Attempts)
		}
	}
	// The stored standup is what went out.
	day, _ := ParseDay(standupDay)
	st, err := store.StandupOn(ctx, f.pool, f.p.ID, day)
	if err != nil {
		t.Fatal(err)
	}
	var m standup.Message
	if err := json.Unmarshal(f.webhook.Received()[0].Body, &m); err != nil || m.Text != st.Text {
		t.Errorf("webhook got %q (%v), stored %q", m.Text, err, st.Text)
	}
	var report standup.Report
	if err := json.Unmarshal(m.Report, &report); err != nil || report.Day != standupDay || report.Baseline.SnapshotVersion != 0 {
		t.Errorf("webhook report: day %q, baseline %+v (%v); want the day and no baseline", report.Day, report.Baseline, err)
	}
	if !strings.HasPrefix(st.Text, "Standup for acme/app, Tuesday 2026-12-01") {
		t.Errorf("text = %q", st.Text)
	}
}

func TestStandupRestartMidDelivery(t *testing.T) {
	f := newStandupFixture(t)
	ctx := context.Background()
	// The homeserver takes the message, then the process dies before it
	// hears back.
	held := f.matrix.HoldAfterAccept()
	first := f.startJobs(t)
	if _, err := first.Insert(ctx, StandupArgs{ProjectID: f.p.ID, Day: standupDay}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("the matrix delivery never arrived")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := 0
		for _, d := range f.deliveries(t) {
			if d.Status == store.DeliveryDelivered {
				n++
			}
		}
		if n == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("other sinks not delivered: %+v", f.deliveries(t))
		}
		time.Sleep(10 * time.Millisecond)
	}
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	if err := first.StopAndCancel(stopCtx); err != nil {
		t.Fatal(err)
	}
	cancel()
	if d := f.deliveries(t)[standup.SinkMatrix]; d.Status == store.DeliveryDelivered {
		t.Fatalf("matrix marked delivered though it never answered")
	}

	// A new process starts: it catches up on today's standup (already
	// stored) and River retries the interrupted delivery.
	second := f.startJobs(t)
	if err := EnqueueMissedStandups(ctx, second, f.standups, []store.Project{f.p}, standup.Schedule{Hour: 9}); err != nil {
		t.Fatal(err)
	}
	if _, err := second.Insert(ctx, StandupArgs{ProjectID: f.p.ID, Day: standupDay}, nil); err != nil {
		t.Fatal(err)
	}
	f.waitIdle(t)
	f.wantOnceEach(t)
	if d := f.deliveries(t)[standup.SinkMatrix]; d.Attempts < 2 {
		t.Errorf("matrix attempts = %d, want the interrupted one and the retry", d.Attempts)
	}
}

func TestStandupFailingSinkRetriedOthersDelivered(t *testing.T) {
	f := newStandupFixture(t)
	ctx := context.Background()
	// Slack fails for about a second (150, 300, 600 ms between attempts):
	// time enough for the others to be delivered even on a busy machine.
	f.retryBase = 150 * time.Millisecond
	f.slack.Fail(3, 500)
	jobs := f.startJobs(t)
	if _, err := jobs.Insert(ctx, StandupArgs{ProjectID: f.p.ID, Day: standupDay}, nil); err != nil {
		t.Fatal(err)
	}
	f.waitIdle(t)
	f.wantOnceEach(t)
	ds := f.deliveries(t)
	if a := ds[standup.SinkSlack].Attempts; a != 4 {
		t.Errorf("slack attempts = %d, want 3 failures and 1 success", a)
	}
	slackAt := *ds[standup.SinkSlack].DeliveredAt
	for sink, d := range ds {
		if sink == standup.SinkSlack {
			continue
		}
		if d.Attempts != 1 || !d.DeliveredAt.Before(slackAt) {
			t.Errorf("%s: %d attempts, delivered %s; want 1 attempt, before slack's %s", sink, d.Attempts, d.DeliveredAt, slackAt)
		}
	}
}

type inventingPhraser struct{ calls int }

func (p *inventingPhraser) Phrase(_ context.Context, req standup.PhraseRequest) (string, error) {
	p.calls++
	return req.Draft + "\nEverything ships on 2031-03-14.", nil
}

func TestStandupProseInventingADateIsReplaced(t *testing.T) {
	f := newStandupFixture(t)
	p := &inventingPhraser{}
	f.standups.Phraser = p
	day, _ := ParseDay(standupDay)
	g, err := f.standups.Generate(context.Background(), f.p.ID, day)
	if err != nil {
		t.Fatal(err)
	}
	if p.calls != 1 || g.Source != standup.SourceTemplate || g.Text != standup.Template(g.Report) {
		t.Errorf("calls %d, source %s, text:\n%s", p.calls, g.Source, g.Text)
	}
	if strings.Contains(g.Text, "2031-03-14") {
		t.Error("the invented date went out")
	}
}

func TestStandupNotOnWeekendsOrHolidays(t *testing.T) {
	f := newStandupFixture(t)
	ctx := context.Background()
	f.standups.Calendar = scheduler.Calendar{Holidays: []time.Time{time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}}
	w := &StandupWorker{Standups: f.standups, Sinks: f.sinks, Jobs: failingInserter{}}
	for _, d := range []string{"2026-12-05", "2026-12-06", standupDay} { // Saturday, Sunday, holiday
		if err := w.Work(ctx, &river.Job[StandupArgs]{Args: StandupArgs{ProjectID: f.p.ID, Day: d}}); err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		day, _ := ParseDay(d)
		if _, err := store.StandupOn(ctx, f.pool, f.p.ID, day); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: a standup was stored (%v)", d, err)
		}
	}
	// The missed-standup catch-up agrees: nothing to enqueue on a holiday.
	if err := EnqueueMissedStandups(ctx, nil, f.standups, []store.Project{f.p}, standup.Schedule{Hour: 9}); err != nil {
		t.Fatal(err)
	}
	s := standup.Schedule{Hour: 9, Location: time.UTC, Calendar: f.standups.Calendar}
	for from, want := range map[time.Time]time.Time{
		time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC): time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC), // Monday: Tuesday is the holiday
		time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC):  time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC), // Friday: then Monday
	} {
		if got := s.Next(from); !got.Equal(want) {
			t.Errorf("after %s the next standup is %s, want %s", from, got, want)
		}
	}
}

type failingInserter struct{}

func (failingInserter) InsertManyTx(context.Context, store.Tx, []river.InsertManyParams) ([]*rivertype.JobInsertResult, error) {
	return nil, errors.New("no job may be enqueued")
}

// addScopeToMilestone1 files eight est/xl issues (320 estimated hours)
// into milestone 1 an hour before f.now, recomputes, and returns their
// numbers.
func (f *standupFixture) addScopeToMilestone1(t *testing.T) []int64 {
	t.Helper()
	ctx := context.Background()
	m := int64(1)
	var added []int64
	var ws []store.IssueWrite
	for n := int64(1001); n <= 1008; n++ {
		added = append(added, n)
		ws = append(ws, store.IssueWrite{Issue: store.Issue{Number: n, Title: "New scope", State: "open",
			Labels: []string{"est/xl"}, Milestone: &m, CreatedAt: f.now.Add(-time.Hour), UpdatedAt: f.now.Add(-time.Hour),
			LastActivityAt: f.now.Add(-time.Hour)}})
	}
	if err := store.UpsertIssues(ctx, f.pool, f.p.ID, ws); err != nil {
		t.Fatal(err)
	}
	if err := f.forecast.Recompute(ctx, f.p.ID); err != nil {
		t.Fatal(err)
	}
	return added
}

// latestData is the fixture project's latest snapshot, decoded.
func (f *standupFixture) latestData(t *testing.T) SnapshotData {
	t.Helper()
	snap, err := store.LatestSnapshot(context.Background(), f.pool, f.p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var data SnapshotData
	if err := json.Unmarshal(snap.Data, &data); err != nil {
		t.Fatal(err)
	}
	return data
}

// driftOf is milestone m's drift in r, or nil.
func driftOf(r standup.Report, m int64) *standup.Drift {
	for i := range r.Drift {
		if r.Drift[i].Milestone == m {
			return &r.Drift[i]
		}
	}
	return nil
}

// checkOwnProse: the template standup passes the prose check its facts
// make, as model prose must.
func checkOwnProse(t *testing.T, g Generated) {
	t.Helper()
	facts, err := standup.Facts(g.Report, standup.Known{}, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if err := prose.Check(g.Text, facts); err != nil {
		t.Errorf("template fails its own check: %v", err)
	}
}

func TestStandupDriftFromOneDayToTheNext(t *testing.T) {
	f := newStandupFixture(t)
	ctx := context.Background()
	day1, _ := ParseDay(standupDay)
	w := &StandupWorker{Standups: f.standups}
	if err := w.Work(ctx, &river.Job[StandupArgs]{Args: StandupArgs{ProjectID: f.p.ID, Day: standupDay}}); err != nil {
		t.Fatal(err)
	}
	first, err := store.StandupOn(ctx, f.pool, f.p.ID, day1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(first.Text, "first standup") {
		t.Errorf("first standup text:\n%s", first.Text)
	}

	// Overnight, eight est/xl issues join milestone 1.
	f.now = f.now.AddDate(0, 0, 1)
	added := f.addScopeToMilestone1(t)
	g, err := f.standups.Generate(ctx, f.p.ID, day1.AddDate(0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	d := driftOf(g.Report, 1)
	if d == nil {
		t.Fatalf("milestone 1 did not drift:\n%s", g.Text)
	}
	if d.P50Days < 1 && d.P80Days < 1 {
		t.Errorf("drift = %+v, want later by a working day or more", d)
	}
	if d.Causes[0].Kind != standup.CauseScopeAdded || !slices.Equal(d.Causes[0].Issues, added) || d.Causes[0].Hours != 320 {
		t.Errorf("first cause = %+v, want scope added %v (320 h)", d.Causes[0], added)
	}
	if g.Report.Since != standupDay {
		t.Errorf("since = %q", g.Report.Since)
	}
	checkOwnProse(t, g)
	t.Logf("\n%s", g.Text)
}

// A first standup, with no standup before it, compares with the project
// as it stood at the previous working day's hour, read back from its
// history: scope that joined a milestone overnight shows as its drift.
func TestFirstStandupDriftsFromTheHistory(t *testing.T) {
	f := newStandupFixture(t)
	ctx := context.Background()
	added := f.addScopeToMilestone1(t)
	day, _ := ParseDay(standupDay)
	without, err := f.standups.Generate(ctx, f.p.ID, day)
	if err != nil {
		t.Fatal(err)
	}
	if !without.Report.FirstStandup || without.Report.Reconstructed || !strings.Contains(without.Text, "first standup, nothing to compare against yet") {
		t.Errorf("without a history reader: %+v\n%s", without.Report, without.Text)
	}
	f.standups.Reconstruct = f.forecast.BaselineAt
	g, err := f.standups.Generate(ctx, f.p.ID, day)
	if err != nil {
		t.Fatal(err)
	}
	r := g.Report
	if !r.FirstStandup || !r.Reconstructed || r.Since != "2026-11-30" {
		t.Fatalf("first standup: first %v, reconstructed %v, since %q", r.FirstStandup, r.Reconstructed, r.Since)
	}
	d := driftOf(r, 1)
	if d == nil || (d.P50Days < 1 && d.P80Days < 1) {
		t.Fatalf("milestone 1 did not drift later:\n%s", g.Text)
	}
	if d.Causes[0].Kind != standup.CauseScopeAdded || !slices.Equal(d.Causes[0].Issues, added) {
		t.Errorf("first cause = %+v, want scope added %v", d.Causes[0], added)
	}
	if !strings.Contains(g.Text, "Drift since 2026-11-30 (the forecast as of then, read back from the history") || strings.Contains(g.Text, "nothing to compare against") {
		t.Errorf("drift text:\n%s", g.Text)
	}
	checkOwnProse(t, g)
	t.Logf("\n%s", g.Text)
}

type recordingInserter struct{ args []river.JobArgs }

func (r *recordingInserter) Insert(_ context.Context, args river.JobArgs, _ *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	r.args = append(r.args, args)
	return &rivertype.JobInsertResult{}, nil
}

// A process that starts after standup time on a working day with no
// standup stored enqueues it; before standup time, or once it is stored,
// it does not.
func TestEnqueueMissedStandups(t *testing.T) {
	f := newStandupFixture(t)
	ctx := context.Background()
	sched := standup.Schedule{Hour: 9, Minute: 30}
	for _, c := range []struct {
		at   time.Time
		want int
	}{
		{time.Date(2026, 12, 1, 9, 29, 0, 0, time.UTC), 0},
		{time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC), 1},
		{time.Date(2026, 12, 1, 17, 0, 0, 0, time.UTC), 1},
	} {
		f.now = c.at
		rec := &recordingInserter{}
		if err := EnqueueMissedStandups(ctx, rec, f.standups, []store.Project{f.p}, sched); err != nil {
			t.Fatal(err)
		}
		if len(rec.args) != c.want {
			t.Errorf("at %s: enqueued %v, want %d", c.at, rec.args, c.want)
		}
		if c.want == 1 && rec.args[0] != (StandupArgs{ProjectID: f.p.ID, Day: standupDay}) {
			t.Errorf("enqueued %+v", rec.args[0])
		}
	}
	w := &StandupWorker{Standups: f.standups}
	if err := w.Work(ctx, &river.Job[StandupArgs]{Args: StandupArgs{ProjectID: f.p.ID, Day: standupDay}}); err != nil {
		t.Fatal(err)
	}
	rec := &recordingInserter{}
	if err := EnqueueMissedStandups(ctx, rec, f.standups, []store.Project{f.p}, sched); err != nil {
		t.Fatal(err)
	}
	if len(rec.args) != 0 {
		t.Errorf("enqueued %v though today's standup is stored", rec.args)
	}
}

// The standup of a real recompute names every milestone the forecast puts
// at risk, with its chance and chain, and flags every planned now, next or
// blocked issue that lies on a critical chain in at least half the trials.
func TestStandupNamesAtRiskMilestonesAndFlagsCriticalWork(t *testing.T) {
	f := newStandupFixture(t)
	ctx := context.Background()
	f.dueInAWeek(t)
	day, _ := ParseDay(standupDay)
	g, err := f.standups.Generate(ctx, f.p.ID, day)
	if err != nil {
		t.Fatal(err)
	}
	data := f.latestData(t)
	named := map[int64]standup.AtRiskMilestone{}
	for _, a := range g.Report.AtRisk {
		named[a.Milestone] = a
	}
	risky := 0
	for _, m := range data.Forecast.Milestones {
		if m.Due.IsZero() || m.Open == 0 || !m.P80.After(m.Due) {
			if _, ok := named[m.ID]; ok {
				t.Errorf("%s is not at risk (p80 %s, due %s) but the standup names it", m.Title, m.P80, m.Due)
			}
			continue
		}
		risky++
		a, ok := named[m.ID]
		if !ok {
			t.Errorf("%s is at risk (p80 %s after due %s) but the standup does not name it", m.Title, m.P80, m.Due)
			continue
		}
		if want := math.Round(m.PDue*100) / 100; a.Chance != want || len(a.Chain) == 0 {
			t.Errorf("%s: chance %v (want %v), chain %+v", m.Title, a.Chance, want, a.Chain)
		}
		if !strings.Contains(g.Text, m.Title+" (due ") {
			t.Errorf("the text does not name %s:\n%s", m.Title, g.Text)
		}
	}
	if risky == 0 {
		t.Fatal("no milestone at risk: the fixture no longer tests anything")
	}
	freq := map[int64]float64{}
	for _, is := range data.Forecast.Issues {
		freq[is.Number] = is.CriticalFreq
	}
	flagged, flaggedNext := 0, 0
	for _, p := range g.Report.Plan {
		for _, it := range p.Next {
			if it.Critical != nil {
				flaggedNext++
			}
		}
		for _, it := range slices.Concat(p.Now, p.Next, p.Blocked) {
			onChain := freq[it.Number] >= 0.5
			if onChain != (it.Critical != nil) {
				t.Errorf("%s's #%d: on the chain in %.2f of trials, flag %+v", p.Login, it.Number, freq[it.Number], it.Critical)
			}
			if it.Critical != nil {
				flagged++
				if !strings.Contains(g.Text, fmt.Sprintf("#%d %s", it.Number, it.Title)) || !strings.Contains(g.Text, "[critical chain of "+it.Critical.Title) {
					t.Errorf("the text does not flag #%d:\n%s", it.Number, g.Text)
				}
			}
		}
	}
	if flagged == 0 || flaggedNext == 0 {
		t.Errorf("planned work flagged on a critical chain: %d, of it next work %d; want some of each:\n%s", flagged, flaggedNext, g.Text)
	}
	t.Logf("\n%s", g.Text)
}

// TestStandupListsAgingWork: the standup's aging section is the
// snapshot's aging work, oldest first, and the text names each issue.
func TestStandupListsAgingWork(t *testing.T) {
	f := newStandupFixture(t)
	ctx := context.Background()
	day, _ := ParseDay(standupDay)
	g, err := f.standups.Generate(ctx, f.p.ID, day)
	if err != nil {
		t.Fatal(err)
	}
	data := f.latestData(t)
	var want []int64
	for _, a := range data.Flow.Age {
		if a.Aging {
			want = append(want, a.Number)
		}
	}
	var got []int64
	for _, it := range g.Report.Aging.Items {
		got = append(got, it.Number)
		if !strings.Contains(g.Text, fmt.Sprintf("#%d %s", it.Number, it.Title)) || it.Title == "" {
			t.Errorf("the text does not name aging #%d:\n%s", it.Number, g.Text)
		}
	}
	if len(want) > 10 {
		want = want[:10]
	}
	if len(want) == 0 || !slices.Equal(got, want) || g.Report.Aging.SLE != data.Flow.SLE {
		t.Fatalf("aging %v (SLE %+v), snapshot's %v (SLE %+v)", got, g.Report.Aging.SLE, want, data.Flow.SLE)
	}
}

// TestStandupWaitsForRescueOptions: the recompute publishes a snapshot
// before it searches its rescue options, and a standup computed in
// between said "still being computed" for every milestone at risk, for the
// whole day. The job now waits (within Standups.RescueWait) for the
// options; past the wait it goes out saying they are pending.
func TestStandupWaitsForRescueOptions(t *testing.T) {
	f := newStandupFixture(t)
	ctx := context.Background()
	f.dueInAWeek(t)
	mark, err := store.LatestSnapshotMark(ctx, f.pool, f.p.ID)
	if err != nil {
		t.Fatal(err)
	}
	rescue, err := store.SnapshotRescue(ctx, f.pool, f.p.ID, mark.Version)
	if err != nil || rescue == nil {
		t.Fatalf("rescue of snapshot %d: %s, %v", mark.Version, rescue, err)
	}
	// The snapshot as a recompute still searching leaves it.
	unrescue := func() {
		t.Helper()
		if _, err := f.pool.Exec(ctx, `UPDATE snapshots SET rescue = NULL WHERE project_id = $1 AND version = $2`, f.p.ID, mark.Version); err != nil {
			t.Fatal(err)
		}
	}
	day, _ := ParseDay(standupDay)
	run := func() (string, time.Duration) {
		t.Helper()
		start := time.Now()
		w := &StandupWorker{Standups: f.standups}
		if err := w.Work(ctx, &river.Job[StandupArgs]{JobRow: &rivertype.JobRow{}, Args: StandupArgs{ProjectID: f.p.ID, Day: standupDay}}); err != nil {
			t.Fatal(err)
		}
		st, err := store.StandupOn(ctx, f.pool, f.p.ID, day)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.pool.Exec(ctx, `DELETE FROM standups WHERE project_id = $1`, f.p.ID); err != nil {
			t.Fatal(err)
		}
		return st.Text, time.Since(start)
	}

	// The options arrive while the job waits: the standup names the best rescue.
	unrescue()
	f.standups.RescueWait = time.Minute
	stored := make(chan struct{})
	go func() {
		defer close(stored)
		time.Sleep(300 * time.Millisecond)
		if _, err := store.PutRescue(ctx, f.pool, f.p.ID, mark.Version, rescue); err != nil {
			t.Error(err)
		}
	}()
	text, took := run()
	<-stored
	if strings.Contains(text, standup.RescuePendingText) || !strings.Contains(text, "best rescue: ") {
		t.Fatalf("standup with the rescue options stored %s into the job:\n%s", took, text)
	}
	if took < 300*time.Millisecond {
		t.Fatalf("the standup was stored after %s, before the rescue options (300 ms)", took)
	}

	// They never arrive: after the wait the standup says they are pending.
	unrescue()
	f.standups.RescueWait = 200 * time.Millisecond
	text, took = run()
	if want := "best rescue: "; !strings.Contains(text, want) || !strings.Contains(text, standup.RescuePendingText) {
		t.Fatalf("standup after waiting %s for options that never came:\n%s", took, text)
	}
}
