package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"riverqueue.com/riverui"

	"github.com/commitea/commitea/api"
	"github.com/commitea/commitea/api/dashboard"
	"github.com/commitea/commitea/api/signin"
	"github.com/commitea/commitea/cmd/commitea/config"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/flow"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/liveness"
	"github.com/commitea/commitea/worker/metrics"
	"github.com/commitea/commitea/worker/tools"
)

// openDatabase connects to the configured database and registers the pool
// for Close.
func (m *Main) openDatabase(ctx context.Context, cfg config.Config) (*store.Pool, error) {
	pool, err := store.Open(ctx, cfg.Database.URL.Reveal())
	if err != nil {
		return nil, err
	}
	m.addCloser(func() error { pool.Close(); return nil })
	return pool, nil
}

// migrate applies the embedded migrations under an advisory lock and exits.
func (m *Main) migrate(ctx context.Context, cfg config.Config) error {
	pool, err := m.openDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	if err := store.Migrate(ctx, pool, m.logger); err != nil {
		return err
	}
	fmt.Fprintln(m.Stdout, "migrations are current")
	return nil
}

// ensureProjects makes sure every configured project has its row.
func ensureProjects(ctx context.Context, pool *store.Pool, names []string) ([]store.Project, error) {
	out := make([]store.Project, 0, len(names))
	for _, n := range names {
		owner, repo, _ := strings.Cut(n, "/")
		p, err := store.EnsureProject(ctx, pool, owner, repo)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func (m *Main) giteaClient(cfg config.Config) (*gitea.Client, error) {
	return gitea.New(cfg.Gitea.URL, cfg.Gitea.Token.Reveal(), gitea.Options{Logger: m.logger, UserAgent: "commitea",
		MaxConcurrent: cfg.Gitea.MaxConcurrentRequests})
}

// recomputeEvery is how often a project is recomputed with no change in
// Gitea, so dates and stale flags follow the clock.
const recomputeEvery = 30 * time.Minute

// serve runs the HTTP API (opts.Role.RunsAPI) and/or the River worker
// (opts.Role.RunsWorker) until ctx is cancelled, then shuts down gracefully:
// the listener stops taking requests, queued deliveries are written and
// answered, and running jobs get time to finish.
func (m *Main) serve(ctx context.Context, cfg config.Config, opts serveOptions) error {
	return m.serveWith(ctx, cfg, opts, nil)
}

// serving is what a running serve hands to its caller once the listener is
// up: demo uses it to point its forge's webhook at the service and to wait
// for the first snapshot.
type serving struct {
	Addr     net.Addr
	Pool     *store.Pool
	Projects []store.Project
}

// serveWith is serve, calling started (when not nil) once the HTTP
// listener accepts connections. Everything serve wires is here, so demo
// runs exactly what serve runs.
func (m *Main) serveWith(ctx context.Context, cfg config.Config, opts serveOptions, started func(serving)) error {
	pool, err := m.openDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	if err := store.Migrate(ctx, pool, m.logger); err != nil {
		return err
	}
	projects, err := ensureProjects(ctx, pool, cfg.Projects)
	if err != nil {
		return err
	}
	gc, err := m.giteaClient(cfg)
	if err != nil {
		return err
	}
	syncer := &worker.Syncer{Pool: pool, Gitea: gc, Replayer: worker.LifecycleReplayer{}, Log: m.logger, Now: m.now,
		Concurrency: cfg.Gitea.MaxConcurrentRequests}
	engine, err := m.newRecomputer(cfg, pool)
	if err != nil {
		return err
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &worker.RecomputeWorker{Pool: pool, Recomputer: engine, Log: m.logger})
	river.AddWorker(workers, &worker.ReconcileWorker{Syncer: syncer})
	river.AddWorker(workers, &worker.RetentionWorker{Pool: pool, Deliveries: cfg.Retention.Deliveries, Conversations: cfg.Retention.Conversations,
		Sessions: endedSessionsListed, Log: m.logger, Now: m.now})
	river.AddWorker(workers, &worker.BackfillWorker{Syncer: syncer})
	river.AddWorker(workers, &worker.BacktestWorker{Pool: pool, Log: m.logger, People: engine.People, DefaultCalendar: engine.DefaultCalendar, Now: m.now,
		Forecaster: engine})
	// One model router for the tools and the standups: one budget, one
	// usage account. Roles without a model answer MODEL_UNAVAILABLE.
	languageModels, err := m.modelRouter(cfg, pool)
	if err != nil {
		return err
	}
	standups, err := m.addStandupJobs(cfg, pool, gc, languageModels, workers)
	if err != nil {
		return err
	}
	periodic := append(worker.ReconcilePeriodicJobs(projects, cfg.Reconcile.Interval),
		worker.RecomputePeriodicJobs(projects, recomputeEvery)...)
	periodic = append(periodic, worker.RetentionPeriodicJob())
	jobs, err := worker.NewJobClient(pool, worker.JobClientConfig{
		Work:     opts.Role.RunsWorker(),
		Workers:  workers,
		Periodic: append(periodic, standups.periodic(projects)...),
		Log:      m.logger,
	})
	if err != nil {
		return err
	}
	syncer.Jobs = jobs
	engine.Jobs = jobs
	metrics.SetSnapshotFreshness(func(ctx context.Context) ([]store.Freshness, error) {
		return store.ProjectFreshness(ctx, pool)
	})

	if opts.Role.RunsWorker() {
		// The liveness lock comes before the first fetch: no job of this
		// process runs without it, so no keeper takes one of ours for dead.
		keeper := &liveness.Keeper{Pool: pool, ClientID: jobs.ID(), Log: m.logger}
		if err := keeper.Hold(ctx); err != nil {
			return err
		}
		keeperCtx, stopKeeper := context.WithCancel(context.WithoutCancel(ctx))
		kept := make(chan struct{})
		go func() { defer close(kept); keeper.Run(keeperCtx) }()
		// Deferred first, so it runs last: the lock is held until River
		// has stopped its jobs.
		defer func() { stopKeeper(); <-kept }()
		if err := jobs.Start(ctx); err != nil {
			return fmt.Errorf("start jobs: %w", err)
		}
		defer func() {
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if err := jobs.Stop(stopCtx); err != nil {
				m.logger.Warn("stop jobs", slog.Any("error", err))
			}
		}()
		watchCtx, stopWatch := context.WithCancel(ctx)
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			(&worker.FreshnessWatch{Pool: pool, Jobs: jobs, Log: m.logger}).Run(watchCtx)
		}()
		defer func() { stopWatch(); <-watched }()
		standups.start(ctx, jobs, projects, m.logger)
		// A project never backfilled gets its history now; the unique
		// job keeps replicas from doing it twice.
		for _, p := range projects {
			st, err := store.GetSyncState(ctx, pool, p.ID)
			if err != nil {
				return err
			}
			if st.BackfillDoneAt == nil {
				if _, err := jobs.Insert(ctx, worker.BackfillArgs{ProjectID: p.ID}, nil); err != nil {
					return fmt.Errorf("enqueue backfill of %s: %w", p.FullName(), err)
				}
			}
		}
	}

	if !opts.Role.RunsAPI() {
		m.logger.Info("worker running", slog.Int("projects", len(projects)))
		<-ctx.Done()
		return nil
	}
	if len(cfg.Tokens) == 0 {
		m.logger.Warn("no bearer tokens configured (tokens / COMMITEA_TOKENS): the tool API and MCP refuse every call")
	}
	riverUI, err := riverui.NewHandler(&riverui.HandlerOpts{
		Endpoints: riverui.NewEndpoints(jobs, nil),
		Logger:    m.logger.With(slog.String("component", "riverui")),
		Prefix:    "/riverui",
	})
	if err != nil {
		return fmt.Errorf("river ui: %w", err)
	}
	if err := riverUI.Start(ctx); err != nil {
		return fmt.Errorf("start river ui: %w", err)
	}
	signIn, err := m.signIn(cfg, pool, gc, projects)
	if err != nil {
		return err
	}
	toolService := tools.NewService(pool, projects, m.logger)
	toolService.Write = tools.WriteConfig{Gitea: gc, Engine: engine, Jobs: jobs, Now: m.now}
	toolService.Models = languageModels
	registry := m.withReginald(cfg, pool, toolService, languageModels)
	giteaBrowser := cfg.Gitea.BrowserURL
	if giteaBrowser == "" {
		giteaBrowser = cfg.Gitea.URL
	}
	board, err := dashboard.New(dashboard.Config{Pool: pool, Projects: projects, Log: m.logger, Prefix: "/dashboard", Now: m.now,
		Query: toolService.Query, GiteaURL: giteaBrowser, People: engine.People, DefaultCalendar: engine.DefaultCalendar})
	if err != nil {
		return err
	}
	ingest := worker.NewIngester(pool, jobs, projects, m.logger, worker.IngesterConfig{})
	ingest.Start()
	router := api.NewRouter(api.Config{
		WebhookSecret:    cfg.Gitea.WebhookSecret.Reveal(),
		MaxBodyBytes:     cfg.Server.MaxBodyBytes,
		MaxBufferedBytes: cfg.Server.MaxBufferedBytes,
		Sink:             ingest,
		Decode:           gitea.DecodeDelivery,
		Ready:            readiness(pool),
		Freshness:        freshness(pool),
		MaxLag:           cfg.Forecast.MaxLag,
		Log:              m.logger,
		Tools:            registry,
		PMState:          toolService.PMStateMarkdown,
		Tokens:           apiTokens(cfg.Tokens),
		Version:          versionString(),
		Dashboard:        board.Handler(),
		RiverUI:          riverUI,
		MetricsToken:     cfg.Server.MetricsToken.Reveal(),
		PublicURL:        strings.TrimSuffix(cfg.Server.PublicURL, "/"),
		SignIn:           signIn,
		TokenLinks:       cfg.Dashboard.TokenLinks,
		Projects:         cfg.Projects,
	})
	srv := api.NewServer(cfg.Server.Addr, router)
	ln := opts.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.Server.Addr); err != nil {
			ingest.Close()
			return fmt.Errorf("listen on %s: %w", cfg.Server.Addr, err)
		}
	}
	m.logger.Info("serving", slog.String("addr", ln.Addr().String()), slog.String("role", string(opts.Role)), slog.Int("projects", len(projects)),
		slog.String("dashboard", cfg.PublicBase(ln.Addr())+"/dashboard/"))
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if started != nil {
		started(serving{Addr: ln.Addr(), Pool: pool, Projects: projects})
	}
	select {
	case err = <-errc:
	case <-ctx.Done():
		shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
		err = srv.Shutdown(shutCtx)
		cancel()
	}
	ingest.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// signIn builds "Sign in with Gitea" when it is configured, and says at
// start-up how people reach the pages.
func (m *Main) signIn(cfg config.Config, pool *store.Pool, gc *gitea.Client, projects []store.Project) (*signin.Service, error) {
	if cfg.Dashboard.TokenLinks {
		m.logger.Warn("dashboard.token_links is on: the dashboard and the River UI take a bearer token in their address (?token=…); anyone holding such a link holds the token")
	}
	if !cfg.SignInEnabled() {
		if !cfg.Dashboard.TokenLinks {
			m.logger.Info("people reach the dashboard with a bearer header only: set gitea.oauth_client_id for sign-in with Gitea, or dashboard.token_links")
		}
		return nil, nil
	}
	s, err := signin.New(signin.Config{
		Pool: pool, Gitea: gc, GiteaURL: cfg.Gitea.URL, BrowserURL: cfg.Gitea.BrowserURL,
		ClientID: cfg.Gitea.OAuthClientID, ClientSecret: cfg.Gitea.OAuthClientSecret.Reveal(),
		PublicURL: cfg.Server.PublicURL, Projects: projects,
		IdleTimeout: cfg.Sessions.IdleTimeout, MaxAge: cfg.Sessions.MaxAge, Refresh: cfg.Sessions.PermissionRefresh,
		Log: m.logger,
	})
	if err != nil {
		return nil, err
	}
	m.logger.Info("sign-in with Gitea is on", slog.String("callback", strings.TrimSuffix(cfg.Server.PublicURL, "/")+signin.CallbackPath))
	return s, nil
}

// apiTokens hands the configured bearer tokens to the API, which keeps
// only their hashes.
func apiTokens(ts []config.TokenConfig) []api.Token {
	out := make([]api.Token, len(ts))
	for i, t := range ts {
		out[i] = api.Token{Name: t.Name, Scopes: t.Scopes, Secret: t.Secret.Reveal()}
	}
	return out
}

// readiness is up when the database answers and every migration is in.
func readiness(pool *store.Pool) api.ReadinessChecker {
	return func(ctx context.Context) error {
		ok, err := store.MigrationsCurrent(ctx, pool)
		if err != nil {
			return fmt.Errorf("database: %w", err)
		}
		if !ok {
			return errors.New("migrations pending")
		}
		return nil
	}
}

// freshness reports each project's lag for /readyz. Ages are wall-clock
// (the database's clock stamps the snapshots), not the configured clock.
func freshness(pool *store.Pool) api.FreshnessReporter {
	return func(ctx context.Context) ([]api.ProjectFreshness, error) {
		fs, err := store.ProjectFreshness(ctx, pool)
		if err != nil {
			return nil, err
		}
		at := time.Now()
		out := make([]api.ProjectFreshness, len(fs))
		for i, f := range fs {
			out[i] = api.ProjectFreshness{Project: f.Project, Ready: f.Ready(), SnapshotVersion: f.SnapshotVersion,
				ChangesBehind: f.ChangesBehind, SecondsBehind: roundSeconds(f.Behind), SnapshotAgeSeconds: roundSeconds(f.SnapshotAge(at))}
		}
		return out, nil
	}
}

// roundSeconds is d in seconds to one decimal.
func roundSeconds(d time.Duration) float64 {
	return float64(d.Round(100*time.Millisecond)) / float64(time.Second)
}

// syncProjects imports (first time) or repairs (afterwards) the mirror of
// opts.Projects from the Gitea API, with a progress line on a terminal.
func (m *Main) syncProjects(ctx context.Context, cfg config.Config, opts syncOptions) error {
	pool, err := m.openDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	if err := store.Migrate(ctx, pool, m.logger); err != nil {
		return err
	}
	projects, err := ensureProjects(ctx, pool, opts.Projects)
	if err != nil {
		return err
	}
	gc, err := m.giteaClient(cfg)
	if err != nil {
		return err
	}
	jobs, err := worker.NewJobClient(pool, worker.JobClientConfig{Log: m.logger})
	if err != nil {
		return err
	}
	tty := isTerminal(m.Stdout)
	for _, p := range projects {
		name := p.FullName()
		s := &worker.Syncer{Pool: pool, Gitea: gc, Replayer: worker.LifecycleReplayer{}, Jobs: jobs, Log: m.logger,
			Concurrency: cfg.Gitea.MaxConcurrentRequests}
		if tty {
			s.Progress = func(done, total int) {
				fmt.Fprintf(m.Stdout, "\r%s: %d/%d issues", name, done, total)
			}
		}
		start := time.Now()
		if err := s.Backfill(ctx, p); err != nil {
			if tty {
				fmt.Fprintln(m.Stdout)
			}
			return fmt.Errorf("sync %s: %w", name, err)
		}
		if tty {
			fmt.Fprintln(m.Stdout)
		}
		fmt.Fprintf(m.Stdout, "%s: synced in %s\n", name, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// backtest replays history and scores past forecasts. It parses args itself.
func (m *Main) backtest(_ context.Context, _ config.Config, args []string) error {
	return m.runBacktestCSV(args)
}

// newRecomputer builds the engine the recompute job runs.
func (m *Main) newRecomputer(cfg config.Config, pool *store.Pool) (*worker.Forecaster, error) {
	people, err := cfg.ConfiguredPeople()
	if err != nil {
		return nil, err
	}
	def, err := cfg.DefaultCalendar()
	if err != nil {
		return nil, err
	}
	return &worker.Forecaster{
		Pool:             pool,
		Log:              m.logger,
		Now:              m.now,
		Trials:           cfg.Forecast.Trials,
		StaleWorkingDays: cfg.Lifecycle.StaleWorkingDays,
		DefaultCalendar:  def,
		People:           people,
		Flow:             flow.Options{WindowDays: cfg.Flow.WindowDays, SLEPercentile: cfg.Flow.SLEPercentile, Location: def.Location},
	}, nil
}
