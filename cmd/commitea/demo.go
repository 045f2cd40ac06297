package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/commitea/commitea/api/signin"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/gitea/giteafake"
)

// demoDatabase is the database demo creates afresh on every run, next to
// the one DATABASE_URL names; nothing else in that server is touched.
const demoDatabase = "commitea_demo"

// defaultDemoDatabaseURL is where demo looks for PostgreSQL when
// DATABASE_URL is unset.
const defaultDemoDatabaseURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// demoOptions are demo's flags.
type demoOptions struct {
	Addr     string
	Seed     uint64
	Database string
}

func (m *Main) runDemo(ctx context.Context, g globalOptions, args []string) error {
	opts := demoOptions{Addr: "127.0.0.1:8080", Seed: 1, Database: demoDatabase}
	fs := m.newFlagSet("demo", "[--addr host:port] [--seed N] [--database NAME]", &g)
	fs.StringVar(&opts.Database, "database", opts.Database, "`name` of the database demo drops and creates on the DATABASE_URL server")
	fs.StringVar(&opts.Addr, "addr", opts.Addr, "listen `address` of the service (use 127.0.0.1:0 for any free port)")
	fs.Uint64Var(&opts.Seed, "seed", opts.Seed, "`seed` of the generated project")
	if done, err := parseFlags(fs, args); done || err != nil {
		return err
	}
	cfg, err := LoadConfig(g.configPath, m.Getenv)
	if err != nil {
		return err
	}
	m.logger = newLogger(cfg.Log, m.Stderr)
	return m.demo(ctx, cfg, opts)
}

// demo runs everything serve runs against an in-process forge that serves a
// generated project, in a database of its own. cfg supplies the logging
// settings and DATABASE_URL; everything else is the demo's.
func (m *Main) demo(ctx context.Context, cfg Config, opts demoOptions) error {
	begin := time.Now()
	adminURL := cfg.Database.URL.Reveal()
	if adminURL == "" {
		adminURL = defaultDemoDatabaseURL
	}
	dbURL, err := recreateDatabase(ctx, adminURL, opts.Database)
	if err != nil {
		return err
	}

	secret := randomSecret()
	team := giteafake.DemoTeam()
	forge, err := giteafake.New(giteafake.Options{Generate: &giteafake.Project{Seed: opts.Seed, Team: team}, HookSecret: secret})
	if err != nil {
		return fmt.Errorf("start the demo forge: %w", err)
	}
	defer forge.Close()

	// The listener comes first: sign-in needs CommiTea's address before it
	// starts, and --addr 127.0.0.1:0 picks it only now.
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", opts.Addr, err)
	}
	defer ln.Close() // already closed once serve has run
	cfg.Server.Addr = opts.Addr
	if cfg.Server.PublicURL == "" {
		cfg.Server.PublicURL = cfg.PublicBase(ln.Addr())
	}
	password := randomSecret()[:12]
	clientID, clientSecret := demoAccounts(forge, team, password, cfg.PublicBase(ln.Addr()))

	token := randomSecret()
	cfg.Database.URL = Secret(dbURL)
	cfg.Gitea = GiteaConfig{URL: forge.URL, Token: Secret(forge.Token()), WebhookSecret: Secret(secret),
		OAuthClientID: clientID, OAuthClientSecret: Secret(clientSecret)}
	cfg.Dashboard.TokenLinks = true // the banner's first link carries the token
	cfg.Projects = []string{forge.Repo()}
	cfg.Tokens = []TokenConfig{{Name: "demo", Scopes: []string{ScopeRead, ScopeWrite, ScopeApprove}, Secret: Secret(token)}}
	cfg.People = map[string]CalendarConfig{}
	for _, p := range team {
		cc := CalendarConfig{HoursPerDay: p.HoursPerDay, TimeZone: p.TimeZone}
		for _, d := range p.WorkingDays {
			cc.WorkingDays = append(cc.WorkingDays, strings.ToLower(d.String()[:3]))
		}
		for _, r := range p.TimeOff {
			now := time.Now()
			from, _ := ParseDate(now.AddDate(0, 0, r.From).Format(time.DateOnly))
			to, _ := ParseDate(now.AddDate(0, 0, r.To).Format(time.DateOnly))
			cc.TimeOff = append(cc.TimeOff, DateRangeConfig{From: from, To: to})
		}
		cfg.People[p.Login] = cc
	}
	if err := cfg.ValidateFor("serve"); err != nil {
		return err
	}
	m.logger.Info("demo starting", slog.String("database", redactDatabaseURL(dbURL)), slog.String("forge", forge.URL), slog.String("project", forge.Repo()))

	started := func(s serving) {
		// From now on every change made through the forge's API reaches
		// the service as a signed webhook, as from a real Gitea; the forge
		// runs in this process, so it posts to the listener itself. The
		// banner's links use the public URL when one is configured.
		forge.SetHook("http://"+s.Addr.String()+"/webhooks/gitea", secret)
		base := cfg.PublicBase(s.Addr)
		go func() {
			if err := waitForSnapshot(ctx, s.Pool, s.Projects[0].ID); err != nil {
				return
			}
			if err := m.demoStandup(ctx, cfg, s.Pool, s.Projects[0].ID); err != nil {
				m.logger.Warn("demo standup", slog.Any("error", err))
			}
			printDemoBanner(m.Stdout, demoBanner{
				Base: base, Token: token, Project: forge.Repo(), Database: opts.Database,
				Forge: forge.URL, ForgeToken: forge.Token(), Issue: exampleIssue(ctx, s.Pool, s.Projects[0].ID),
				Password: password, Member: team[0].Login,
				Took: time.Since(begin),
			})
		}()
	}
	return m.serveWith(ctx, cfg, serveOptions{Role: RoleAll, Listener: ln}, started)
}

// demoGuest is the demo forge's user without access to the project.
const demoGuest = "guest"

// demoAccounts makes the demo forge's project private and gives its people
// something to sign in as: ceo (the project manager, a site admin: approve,
// so the River UI too), the team (write collaborators), and a guest who
// cannot read the project (signed in, they see nothing of it). Everyone
// shares password. It registers CommiTea as an OAuth2 application whose
// redirect URI is base's callback, and returns its client id and secret.
func demoAccounts(forge *giteafake.Server, team []giteafake.Person, password, base string) (clientID, clientSecret string) {
	forge.SetPrivate(true)
	forge.AddUser(demoGuest)
	logins := []string{"ceo", demoGuest}
	for _, p := range team {
		logins = append(logins, p.Login)
	}
	for _, l := range logins {
		forge.SetPassword(l, password)
	}
	return forge.RegisterOAuthApp("CommiTea demo", []string{base + signin.CallbackPath}, true)
}

// demoStandup produces today's standup of record, as the daily job would at
// its hour, so the dashboard's standup page has one to show; the demo has
// no sinks, so nothing is delivered. On a day off there is none.
func (m *Main) demoStandup(ctx context.Context, cfg Config, pool *store.Pool, projectID int64) error {
	router, err := m.modelRouter(cfg, pool)
	if err != nil {
		return err
	}
	s, err := m.newStandups(cfg, pool, router)
	if err != nil {
		return err
	}
	day := s.Today()
	if !s.IsStandupDay(day) {
		return nil
	}
	jobs, err := worker.NewJobClient(pool, worker.JobClientConfig{Log: m.logger})
	if err != nil {
		return err
	}
	w := &worker.StandupWorker{Standups: s, Sinks: standupSinks(cfg, nil), Jobs: jobs}
	return w.Work(ctx, &river.Job[worker.StandupArgs]{Args: worker.StandupArgs{ProjectID: projectID, Day: day.Format(time.DateOnly)}})
}

// recreateDatabase drops and creates name on the server adminURL points
// at, and returns the URL of the new database.
func recreateDatabase(ctx context.Context, adminURL, name string) (string, error) {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", fmt.Errorf("connect to PostgreSQL (DATABASE_URL, default %s): %w", defaultDemoDatabaseURL, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
		return "", fmt.Errorf("drop the demo database %s: %w", name, err)
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		return "", fmt.Errorf("create the demo database %s: %w", name, err)
	}
	return withDatabase(adminURL, name)
}

// withDatabase is the connection string u with its database replaced.
func withDatabase(u, name string) (string, error) {
	if strings.Contains(u, "://") {
		parsed, err := url.Parse(u)
		if err != nil {
			return "", fmt.Errorf("DATABASE_URL: %w", err)
		}
		parsed.Path = "/" + name
		return parsed.String(), nil
	}
	// key=value form: a later dbname wins.
	return u + " dbname=" + name, nil
}

// snapshotCurrent reports whether the project is backfilled and its latest
// snapshot was computed from the mirror as it is now (same change counter).
func snapshotCurrent(ctx context.Context, pool *store.Pool, projectID int64) (bool, error) {
	st, err := store.GetSyncState(ctx, pool, projectID)
	if err != nil || st.BackfillDoneAt == nil {
		return false, err
	}
	s, err := store.LatestSnapshot(ctx, pool, projectID)
	if err != nil {
		return false, err
	}
	counter, err := store.ChangeCounter(ctx, pool, projectID)
	return err == nil && counter == s.ChangeCounter, err
}

// waitForSnapshot returns once the project has a snapshot computed after
// its backfill: the forge's history is imported and forecast.
func waitForSnapshot(ctx context.Context, pool *store.Pool, projectID int64) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if ready, err := snapshotCurrent(ctx, pool, projectID); err == nil && ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func randomSecret() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// exampleIssue picks an open, unassigned est/s issue of the first
// milestone for the printed apply_changes example: making it est/xl moves
// the milestone's cone visibly.
func exampleIssue(ctx context.Context, pool *store.Pool, projectID int64) int64 {
	cards, err := store.IssueCards(ctx, pool, projectID, time.Now())
	if err != nil {
		return 1
	}
	for _, c := range cards {
		if c.State == "open" && c.Milestone != nil && *c.Milestone == 1 && len(c.Assignees) == 0 && slices.Contains(c.Labels, "est/s") {
			return c.Number
		}
	}
	return 1
}

// demoBanner is what demo prints once it is ready.
type demoBanner struct {
	Base, Token, Project, Database string
	Forge, ForgeToken              string
	Issue                          int64
	// Password is the demo forge's password of ceo, Member (someone of
	// the team) and the guest, for "Sign in with Gitea".
	Password, Member string
	Took             time.Duration
}

// printDemoBanner tells the newcomer what is running and how to use it:
// the dashboard, a curl per tool, and an MCP client configuration.
func printDemoBanner(w io.Writer, b demoBanner) {
	base, token := b.Base, b.Token
	auth := fmt.Sprintf("-H 'Authorization: Bearer %s' -H 'Content-Type: application/json'", token)
	tool := func(name, body string) string {
		return fmt.Sprintf("curl -s %s %s/v1/tools/%s -d '%s'", auth, base, name, body)
	}
	fmt.Fprintf(w, `
CommiTea demo is ready in %s.
  project   %s (a generated year of history)
  forge     %s (in-process, Gitea API; token %s)
  database  %s (dropped and created afresh on every run)

Dashboard (token in the link once; a cookie keeps it):
  %s/dashboard/?token=%s
River UI (jobs; needs the approve scope):
  %s/riverui/?token=%s
Or sign in with Gitea (the forge's login page; password %s for each):
  %s/dashboard/  as ceo (admin: everything, River UI too), %s (the team: the dashboard)
  or %s (no access: sees nothing of the project)
Metrics:
  curl -s %s/metrics | grep ^commitea_

Token (scopes read, write, approve):
  %s

Tools:
  %s
  %s
  %s
  %s
  %s
  (capture_work answers MODEL_UNAVAILABLE until a big model is configured: COMMITEA_BIG_MODEL)

Change the plan in the forge, as a person would in Gitea; the webhook reaches CommiTea and the
launch's cone moves on the dashboard within a second or two:
  curl -s -H 'Authorization: token %s' -H 'Content-Type: application/json' %s/api/v1/repos/%s/issues/%d/labels -d '{"labels":["est/xl"]}'

MCP client configuration (e.g. .mcp.json), over HTTP, or over stdio through 'commitea mcp'
(go install ./cmd/commitea first):
{
  "mcpServers": {
    "commitea": {
      "type": "http",
      "url": "%s/mcp",
      "headers": { "Authorization": "Bearer %s" }
    },
    "commitea-stdio": {
      "command": "commitea",
      "args": ["mcp"],
      "env": { "COMMITEA_URL": "%s", "COMMITEA_TOKEN": "%s" }
    }
  }
}

Press Ctrl-C to stop.
`, b.Took.Round(100*time.Millisecond), b.Project, b.Forge, b.ForgeToken, b.Database,
		base, token, base, token, b.Password, base, b.Member, demoGuest, base, token,
		tool("query_project", `{"view":"runway"}`),
		tool("query_project", `{"view":"milestone","filters":{"milestoneId":1}}`),
		tool("apply_changes", fmt.Sprintf(`{"ops":[{"op":"set_estimate","issue":%d,"estimate":"est/xl"}]}`, b.Issue)),
		tool("record_directive", fmt.Sprintf(`{"kind":"reprioritize","quote":"The launch comes first: make this urgent.","target":{"issue":%d},"params":{"priority":0}}`, b.Issue)),
		tool("capture_work", `{"braindump":"Customers want CSV export of invoices, and the export must respect team permissions."}`),
		b.ForgeToken, b.Forge, b.Project, b.Issue,
		base, token, base, token)
}
