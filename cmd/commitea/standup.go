package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/models"
	"github.com/commitea/commitea/worker/standup"
)

// StandupWebhookConfig is a JSON webhook signed with HMAC-SHA256.
type StandupWebhookConfig struct {
	URL    string `toml:"url"`
	Secret Secret `toml:"secret"`
}

// StandupSlackConfig is a Slack or Mattermost incoming webhook. Its URL
// holds the hook's token, so it is a Secret.
type StandupSlackConfig struct {
	URL Secret `toml:"url"`
}

// StandupMatrixConfig is a Matrix room written to through the
// client-server API.
type StandupMatrixConfig struct {
	Homeserver  string `toml:"homeserver"`
	Room        string `toml:"room"` // room id: !abc:example.org
	AccessToken Secret `toml:"access_token"`
}

// StandupEmailConfig is email over SMTP (STARTTLS when offered).
type StandupEmailConfig struct {
	SMTPAddr string   `toml:"smtp_addr"` // host:port
	Username string   `toml:"username"`
	Password Secret   `toml:"password"`
	From     string   `toml:"from"`
	To       []string `toml:"to"`
}

// standupSinkBindings are the environment variables of the standup sinks.
func standupSinkBindings() []envBinding {
	str := func(dst func(*Config) *string) func(*Config, string) error {
		return func(c *Config, v string) error { *dst(c) = v; return nil }
	}
	secret := func(dst func(*Config) *Secret) func(*Config, string) error {
		return func(c *Config, v string) error { *dst(c) = Secret(v); return nil }
	}
	list := func(dst func(*Config) *[]string) func(*Config, string) error {
		return func(c *Config, v string) error { *dst(c) = splitList(v); return nil }
	}
	return []envBinding{
		{env: "COMMITEA_STANDUP_WEBHOOK_URL", key: "standup.webhook.url", apply: str(func(c *Config) *string { return &c.Standup.Webhook.URL })},
		{env: "COMMITEA_STANDUP_WEBHOOK_SECRET", key: "standup.webhook.secret", secret: true, apply: secret(func(c *Config) *Secret { return &c.Standup.Webhook.Secret })},
		{env: "COMMITEA_STANDUP_SLACK_URL", key: "standup.slack.url", secret: true, apply: secret(func(c *Config) *Secret { return &c.Standup.Slack.URL })},
		{env: "COMMITEA_STANDUP_MATRIX_HOMESERVER", key: "standup.matrix.homeserver", apply: str(func(c *Config) *string { return &c.Standup.Matrix.Homeserver })},
		{env: "COMMITEA_STANDUP_MATRIX_ROOM", key: "standup.matrix.room", apply: str(func(c *Config) *string { return &c.Standup.Matrix.Room })},
		{env: "COMMITEA_STANDUP_MATRIX_ACCESS_TOKEN", key: "standup.matrix.access_token", secret: true, apply: secret(func(c *Config) *Secret { return &c.Standup.Matrix.AccessToken })},
		{env: "COMMITEA_STANDUP_SMTP_ADDR", key: "standup.email.smtp_addr", apply: str(func(c *Config) *string { return &c.Standup.Email.SMTPAddr })},
		{env: "COMMITEA_STANDUP_SMTP_USERNAME", key: "standup.email.username", apply: str(func(c *Config) *string { return &c.Standup.Email.Username })},
		{env: "COMMITEA_STANDUP_SMTP_PASSWORD", key: "standup.email.password", secret: true, apply: secret(func(c *Config) *Secret { return &c.Standup.Email.Password })},
		{env: "COMMITEA_STANDUP_EMAIL_FROM", key: "standup.email.from", apply: str(func(c *Config) *string { return &c.Standup.Email.From })},
		{env: "COMMITEA_STANDUP_EMAIL_TO", key: "standup.email.to", apply: list(func(c *Config) *[]string { return &c.Standup.Email.To })},
		{env: "COMMITEA_STANDUP_GITEA_ISSUES", key: "standup.gitea_issues", apply: list(func(c *Config) *[]string { return &c.Standup.GiteaIssues })},
	}
}

// checkStandupSinks validates the configured sinks: a sink is either fully
// configured or not at all.
func checkStandupSinks(p *problems, c Config) {
	key := func(k string) (string, string) { return envFor(k), k }
	s := c.Standup
	if s.Webhook.URL != "" || s.Webhook.Secret != "" {
		if err := checkHTTPURL(s.Webhook.URL); err != nil {
			e, k := key("standup.webhook.url")
			p.add(e, k, "%v", err)
		}
		if len(s.Webhook.Secret) < MinSecretLen {
			e, k := key("standup.webhook.secret")
			p.add(e, k, "must be at least %d characters", MinSecretLen)
		}
	}
	if s.Slack.URL != "" {
		if err := checkHTTPURL(s.Slack.URL.Reveal()); err != nil {
			e, k := key("standup.slack.url")
			p.add(e, k, "%v", err)
		}
	}
	m := s.Matrix
	if m.Homeserver != "" || m.Room != "" || m.AccessToken != "" {
		if err := checkHTTPURL(m.Homeserver); err != nil {
			e, k := key("standup.matrix.homeserver")
			p.add(e, k, "%v", err)
		}
		if !strings.HasPrefix(m.Room, "!") || !strings.Contains(m.Room, ":") {
			e, k := key("standup.matrix.room")
			p.add(e, k, "must be a room id such as !abc:example.org, got %q", m.Room)
		}
		if m.AccessToken == "" {
			e, k := key("standup.matrix.access_token")
			p.add(e, k, "required when the Matrix sink is configured")
		}
	}
	em := s.Email
	if em.SMTPAddr != "" || em.From != "" || len(em.To) > 0 || em.Username != "" {
		if _, port, err := net.SplitHostPort(em.SMTPAddr); err != nil || port == "" {
			e, k := key("standup.email.smtp_addr")
			p.add(e, k, "must be host:port, got %q", em.SMTPAddr)
		}
		if !strings.Contains(em.From, "@") {
			e, k := key("standup.email.from")
			p.add(e, k, "must be an email address, got %q", em.From)
		}
		if len(em.To) == 0 {
			e, k := key("standup.email.to")
			p.add(e, k, "required when the email sink is configured")
		}
		for _, to := range em.To {
			if !strings.Contains(to, "@") {
				e, k := key("standup.email.to")
				p.add(e, k, "%q is not an email address", to)
			}
		}
	}
	seen := map[string]bool{}
	for _, g := range s.GiteaIssues {
		e, k := key("standup.gitea_issues")
		project, _, err := parseGiteaIssue(g)
		if err != nil {
			p.add(e, k, "%v", err)
			continue
		}
		if seen[strings.ToLower(project)] {
			p.add(e, k, "%s has two standup issues; one per project", project)
		}
		seen[strings.ToLower(project)] = true
		listed := len(c.Projects) == 0
		for _, pr := range c.Projects {
			listed = listed || strings.EqualFold(pr, project)
		}
		if !listed {
			p.add(e, k, "%s is not a configured project", project)
		}
	}
}

// publicHost is the host (no port) of the public URL, or "" when none is
// configured.
func publicHost(publicURL string) string {
	u, err := url.Parse(publicURL)
	if err != nil || publicURL == "" {
		return ""
	}
	return u.Hostname()
}

// parseGiteaIssue reads "owner/repo#N".
func parseGiteaIssue(s string) (string, int64, error) {
	project, num, ok := strings.Cut(strings.TrimSpace(s), "#")
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil || n <= 0 || CheckProject(project) != nil {
		return "", 0, fmt.Errorf("%q is not in owner/repo#number form", s)
	}
	return project, n, nil
}

// StandupSchedule is when standups run: the configured local time on the
// default calendar's working days, skipping its holidays. Call it on a
// validated Config.
func (c Config) StandupSchedule() (standup.Schedule, error) {
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
func standupSinks(c Config, gc standup.Commenter) worker.StandupSinks {
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
		if project, n, err := parseGiteaIssue(g); err == nil {
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
func (m *Main) newStandups(cfg Config, pool *store.Pool, router *models.Router) (*worker.Standups, error) {
	sched, err := cfg.StandupSchedule()
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

func (m *Main) addStandupJobs(cfg Config, pool *store.Pool, gc *gitea.Client, router *models.Router, workers *river.Workers) (*standupJobs, error) {
	s, err := m.newStandups(cfg, pool, router)
	if err != nil {
		return nil, err
	}
	sched, err := cfg.StandupSchedule()
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
	if err := CheckProject(opts.Project); err != nil {
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
func (m *Main) standup(ctx context.Context, cfg Config, opts standupOptions) error {
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
