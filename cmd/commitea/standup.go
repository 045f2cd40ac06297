package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/commitea/commitea/cmd/commitea/config"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/models"
	"github.com/commitea/commitea/worker/standup"
)

// publicHost is the host (no port) of the public URL, or "" when none is
// configured.
func publicHost(publicURL string) string {
	u, err := url.Parse(publicURL)
	if err != nil || publicURL == "" {
		return ""
	}
	return u.Hostname()
}

// standupSchedule is when standups run: the configured local time on the
// default calendar's working days, skipping its holidays. Call it on a
// validated Config.
func standupSchedule(c config.Config) (standup.Schedule, error) {
	loc, err := c.StandupLocation()
	if err != nil {
		return standup.Schedule{}, err
	}
	h, m, err := c.StandupClock()
	if err != nil {
		return standup.Schedule{}, err
	}
	cal, err := c.DefaultCalendar()
	if err != nil {
		return standup.Schedule{}, err
	}
	return standup.Schedule{Hour: h, Minute: m, Location: loc, Calendar: cal}, nil
}

// standupSinks builds the configured sinks; the Gitea comment sink only for
// the projects that opted in.
func standupSinks(c config.Config, gc standup.Commenter) worker.StandupSinks {
	s := c.Standup
	var common []standup.Sink
	if s.Webhook.URL != "" {
		common = append(common, &standup.WebhookSink{URL: s.Webhook.URL, Secret: s.Webhook.Secret.Reveal()})
	}
	if s.Slack.URL != "" {
		common = append(common, &standup.SlackSink{URL: s.Slack.URL.Reveal()})
	}
	if s.Matrix.Homeserver != "" {
		common = append(common, &standup.MatrixSink{Homeserver: s.Matrix.Homeserver, Room: s.Matrix.Room, AccessToken: s.Matrix.AccessToken.Reveal()})
	}
	if s.Email.SMTPAddr != "" {
		common = append(common, &standup.EmailSink{Addr: s.Email.SMTPAddr, Username: s.Email.Username,
			Password: s.Email.Password.Reveal(), From: s.Email.From, To: s.Email.To, Host: publicHost(c.Server.PublicURL)})
	}
	issues := map[string]int64{}
	for _, g := range s.GiteaIssues {
		if project, n, err := config.ParseGiteaIssue(g); err == nil {
			issues[strings.ToLower(project)] = n
		}
	}
	return func(p store.Project) []standup.Sink {
		out := append([]standup.Sink(nil), common...)
		if n, ok := issues[strings.ToLower(p.FullName())]; ok && gc != nil {
			out = append(out, &standup.GiteaSink{Client: gc, Owner: p.Owner, Repo: p.Name, Issue: n})
		}
		return out
	}
}

// newStandups builds the standup service. With a small model configured
// on router it phrases the standup (checked, the template otherwise);
// without one the template is the standup. serve passes the router the
// tools share, so budgets and usage are one account.
func (m *Main) newStandups(cfg config.Config, pool *store.Pool, router *models.Router) (*worker.Standups, error) {
	sched, err := standupSchedule(cfg)
	if err != nil {
		return nil, err
	}
	// A first standup compares with the project as it stood on the
	// previous working day, forecast the way the recompute would have.
	f, err := m.newRecomputer(cfg, pool)
	if err != nil {
		return nil, err
	}
	s := &worker.Standups{Pool: pool, Log: m.logger, Location: sched.Location, Calendar: sched.Calendar, Now: m.now,
		Reconstruct: f.BaselineAt}
	if router != nil && router.Has(models.Small) {
		s.Phraser = standup.ModelPhraser{Model: router.For(models.Small)}
	}
	return s, nil
}

// standupJobs registers the standup workers with serve's River workers.
type standupJobs struct {
	standups *worker.Standups
	sched    standup.Schedule
	producer *worker.StandupWorker
}

func (m *Main) addStandupJobs(cfg config.Config, pool *store.Pool, gc *gitea.Client, router *models.Router, workers *river.Workers) (*standupJobs, error) {
	s, err := m.newStandups(cfg, pool, router)
	if err != nil {
		return nil, err
	}
	sched, err := standupSchedule(cfg)
	if err != nil {
		return nil, err
	}
	sinks := standupSinks(cfg, gc)
	sj := &standupJobs{standups: s, sched: sched, producer: &worker.StandupWorker{Standups: s, Sinks: sinks}}
	river.AddWorker(workers, sj.producer)
	river.AddWorker(workers, &worker.StandupDeliveryWorker{Pool: pool, Sinks: sinks, Log: m.logger})
	return sj, nil
}

func (sj *standupJobs) periodic(projects []store.Project) []*river.PeriodicJob {
	return worker.StandupPeriodicJobs(projects, sj.sched)
}

// start hands the producer the River client and catches up on today's
// standup if the process was down at standup time.
func (sj *standupJobs) start(ctx context.Context, jobs *worker.JobClient, projects []store.Project, log *slog.Logger) {
	sj.producer.Jobs = jobs
	if err := worker.EnqueueMissedStandups(ctx, jobs, sj.standups, projects, sj.sched); err != nil {
		log.Warn("catch up on today's standup", slog.Any("error", err))
	}
}

// dryRunLedger reads the day's usage from the database and keeps its own
// in memory, for a standup --dry-run that must write nothing.
type dryRunLedger struct {
	db   models.UsageLedger
	mu   sync.Mutex
	rows []store.ModelUsage
}

func (l *dryRunLedger) AddModelUsage(_ context.Context, u store.ModelUsage) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rows = append(l.rows, u)
	return nil
}

func (l *dryRunLedger) ModelUsageOn(ctx context.Context, day time.Time) ([]store.ModelUsage, error) {
	rows, err := l.db.ModelUsageOn(ctx, day)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.rows {
		if r.Day.Equal(day) {
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// standupOptions are the standup command's flags.
type standupOptions struct {
	Project string
	DryRun  bool
}

func (m *Main) runStandup(ctx context.Context, g globalOptions, args []string) error {
	var opts standupOptions
	fs := m.newFlagSet("standup", "--project owner/repo [--dry-run]", &g)
	fs.StringVar(&opts.Project, "project", "", "the `owner/repo` whose standup to print")
	fs.BoolVar(&opts.DryRun, "dry-run", false, "compute and print today's standup without storing or delivering it")
	if done, err := parseFlags(fs, args); done || err != nil {
		return err
	}
	if err := config.CheckProject(opts.Project); err != nil {
		return usageError{"standup: --project: " + err.Error()}
	}
	cfg, err := m.loadConfig(g.configPath, "standup")
	if err != nil {
		return err
	}
	return m.standup(ctx, cfg, opts)
}

// standup prints today's standup of one project. Without --dry-run it is
// the standup of record: stored once, its deliveries enqueued for the
// worker, as the daily job would; printing it again prints the same text.
func (m *Main) standup(ctx context.Context, cfg config.Config, opts standupOptions) error {
	pool, err := m.openDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	if !opts.DryRun {
		if err := store.Migrate(ctx, pool, m.logger); err != nil {
			return err
		}
	}
	p, err := store.ProjectByName(ctx, pool, opts.Project)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("standup: %s is not known here yet: run 'commitea sync --project %s' first", opts.Project, opts.Project)
	}
	if err != nil {
		return err
	}
	// A dry run reads today's usage, so the budgets hold, but records what
	// it spends in memory only: it writes nothing at all.
	var ledger models.UsageLedger = store.ModelUsageLedger{DB: pool}
	if opts.DryRun {
		ledger = &dryRunLedger{db: ledger}
	}
	router, err := m.modelRouterWith(cfg, ledger)
	if err != nil {
		return err
	}
	s, err := m.newStandups(cfg, pool, router)
	if err != nil {
		return err
	}
	day := s.Today()
	if !s.IsStandupDay(day) {
		fmt.Fprintf(m.Stderr, "%s is not a working day: no standup is delivered today.\n", day.Format(time.DateOnly))
		if !opts.DryRun {
			return nil
		}
	}
	if opts.DryRun {
		gen, err := s.Generate(ctx, p.ID, day)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("standup: %s has no forecast yet: run 'commitea serve' (or 'commitea sync') first", p.FullName())
		}
		if err != nil {
			return err
		}
		fmt.Fprint(m.Stdout, gen.Text)
		return nil
	}
	var gc standup.Commenter // nil unless Gitea is configured
	if cfg.Gitea.URL != "" {
		c, err := m.giteaClient(cfg)
		if err != nil {
			return err
		}
		gc = c
	}
	jobs, err := worker.NewJobClient(pool, worker.JobClientConfig{Log: m.logger})
	if err != nil {
		return err
	}
	w := &worker.StandupWorker{Standups: s, Sinks: standupSinks(cfg, gc), Jobs: jobs}
	if err := w.Work(ctx, &river.Job[worker.StandupArgs]{Args: worker.StandupArgs{ProjectID: p.ID, Day: day.Format(time.DateOnly)}}); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("standup: %s has no forecast yet: run 'commitea serve' (or 'commitea sync') first", p.FullName())
		}
		return err
	}
	st, err := store.StandupOn(ctx, pool, p.ID, day)
	if err != nil {
		return err
	}
	fmt.Fprint(m.Stdout, st.Text)
	return nil
}
