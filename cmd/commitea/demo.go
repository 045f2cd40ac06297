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

	"github.com/riverqueue/river"

	"github.com/commitea/commitea/api/signin"
	"github.com/commitea/commitea/cmd/commitea/config"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/gitea/giteafake"
)

// demoDatabase is the database demo creates afresh on every run, next to
// the one DATABASE_URL names; nothing else in that server is touched.
const demoDatabase = "commitea_demo"

// demoMarker is the comment demo puts on the database it creates. It drops
// only a database that carries it (or one an older demo left: empty, or
// holding nothing but the generated project), and never one in use.
const demoMarker = "commitea demo: dropped and created afresh by every run of commitea demo"

// demoHour is the time of day (UTC) the demo's clock starts at on --date.
const demoHour = 9

// defaultDemoDatabaseURL is where demo looks for PostgreSQL when
// DATABASE_URL is unset.
const defaultDemoDatabaseURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// demoOptions are demo's flags.
type demoOptions struct {
	Addr     string
	Seed     uint64
	Database string
	// Date is the day the demo's clock starts on (YYYY-MM-DD); "" is today.
	Date string
	// Deliver keeps the standup sinks of the environment; without it the
	// demo delivers its standups nowhere.
	Deliver bool
}

func (m *Main) runDemo(ctx context.Context, g globalOptions, args []string) error {
	opts := demoOptions{Addr: "127.0.0.1:8080", Seed: 1, Database: demoDatabase}
	fs := m.newFlagSet("demo", "[--addr host:port] [--seed N] [--date YYYY-MM-DD] [--database NAME] [--deliver]", &g)
	fs.StringVar(&opts.Database, "database", opts.Database, "`name` of the database demo drops and creates on the DATABASE_URL server (never one in use)")
	fs.StringVar(&opts.Addr, "addr", opts.Addr, "listen `address` of the service (use 127.0.0.1:0 for any free port)")
	fs.Uint64Var(&opts.Seed, "seed", opts.Seed, "`seed` of the generated project")
	fs.StringVar(&opts.Date, "date", "", "`day` (YYYY-MM-DD) the demo's clock starts on, at 09:00 UTC; the same --seed and --date give the same project (default today)")
	fs.BoolVar(&opts.Deliver, "deliver", false, "deliver the demo's standups to the sinks configured in the environment (COMMITEA_STANDUP_*); without it they go nowhere")
	if done, err := parseFlags(fs, args); done || err != nil {
		return err
	}
	cfg, err := config.Load(g.configPath, m.Getenv)
	if err != nil {
		return err
	}
	m.logger = newLogger(cfg.Log, m.Stderr)
	return m.demo(ctx, cfg, opts)
}

// demo runs everything serve runs against an in-process forge that serves a
// generated project, in a database of its own. cfg supplies the logging
// settings and DATABASE_URL; everything else is the demo's.
//
// The demo has a clock of its own: it starts at 09:00 UTC on --date and
// runs on, and the generated history ends where it starts, so a seed and a
// date always give the same project. The address is bound before the
// database is touched, and a database in use is never dropped.
func (m *Main) demo(ctx context.Context, cfg config.Config, opts demoOptions) error {
	begin := time.Now()
	origin, err := demoOrigin(opts.Date, begin)
	if err != nil {
		return err
	}
	m.clock = func() time.Time { return origin.Add(time.Since(begin)) }
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("demo: cannot listen on %s (another demo, or another service?); --addr 127.0.0.1:0 takes any free port: %w", opts.Addr, err)
	}
	defer ln.Close()
	adminURL := cfg.Database.URL.Reveal()
	if adminURL == "" {
		adminURL = defaultDemoDatabaseURL
	}
	dbURL, err := store.RecreateDemoDatabase(ctx, adminURL, opts.Database, giteafake.DemoRepo, demoMarker)
	if err != nil {
		return err
	}

	secret := randomSecret()
	team := giteafake.DemoTeam()
	forge, err := giteafake.New(giteafake.Options{Generate: demoProject(opts.Seed, origin, team), HookSecret: secret, Now: m.now})
	if err != nil {
		return fmt.Errorf("start the demo forge: %w", err)
	}
	defer forge.Close()

	// Sign-in needs CommiTea's address before it starts; --addr
	// 127.0.0.1:0 picked it with the listener, above.
	if cfg.Server.PublicURL == "" {
		cfg.Server.PublicURL = cfg.PublicBase(ln.Addr())
	}
	password := randomSecret()[:12]
	clientID, clientSecret := demoAccounts(forge, team, password, cfg.PublicBase(ln.Addr()))

	token := randomSecret()
	cfg.Database.URL = config.Secret(dbURL)
	cfg.Gitea = config.GiteaConfig{URL: forge.URL, Token: config.Secret(forge.Token()), WebhookSecret: config.Secret(secret),
		OAuthClientID: clientID, OAuthClientSecret: config.Secret(clientSecret)}
	cfg.Dashboard.TokenLinks = true // the banner's first link carries the token
	cfg.Projects = []string{forge.Repo()}
	cfg.Server.Addr = ln.Addr().String()
	if !opts.Deliver {
		// A demo's generated standups must not reach a real team's
		// webhook, chat or inbox because the shell happens to carry
		// their settings.
		cfg.Standup = config.StandupConfig{Time: cfg.Standup.Time, TimeZone: cfg.Standup.TimeZone}
	}
	cfg.Tokens = []config.TokenConfig{{Name: "demo", Scopes: []string{config.ScopeRead, config.ScopeWrite, config.ScopeApprove}, Secret: config.Secret(token)}}
	cfg.People = map[string]config.CalendarConfig{}
	for _, p := range team {
		cc := config.CalendarConfig{HoursPerDay: p.HoursPerDay, TimeZone: p.TimeZone}
		for _, d := range p.WorkingDays {
			cc.WorkingDays = append(cc.WorkingDays, strings.ToLower(d.String()[:3]))
		}
		for _, r := range p.TimeOff {
			from, _ := config.ParseDate(origin.AddDate(0, 0, r.From).Format(time.DateOnly))
			to, _ := config.ParseDate(origin.AddDate(0, 0, r.To).Format(time.DateOnly))
			cc.TimeOff = append(cc.TimeOff, config.DateRangeConfig{From: from, To: to})
		}
		cfg.People[p.Login] = cc
	}
	if err := cfg.ValidateFor("serve"); err != nil {
		return err
	}
	m.logger.Info("demo starting", slog.String("database", config.RedactDatabaseURL(dbURL)), slog.String("forge", forge.URL),
		slog.String("project", forge.Repo()), slog.String("clock", origin.Format(time.RFC3339)))

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
			issues := exampleIssues(ctx, s.Pool, s.Projects[0].ID, m.now())
			printDemoBanner(m.Stdout, demoBanner{
				Base: base, Token: token, Project: forge.Repo(), Database: opts.Database, DatabaseURL: dbURL,
				Forge: forge.URL, ForgeToken: forge.Token(), Issue: issues[0], ForgeIssue: issues[1],
				Password: password, Member: team[0].Login,
				Small: cfg.Models.Small.Model, Big: cfg.Models.Big.Model, Sinks: standupSinkNames(cfg),
				Seed: opts.Seed, Clock: origin, Took: time.Since(begin),
			})
		}()
	}
	return m.serveWith(ctx, cfg, serveOptions{Role: RoleAll, Listener: ln}, started)
}

// demoOrigin is where the demo's clock starts: 09:00 UTC on date, or on
// today's date (UTC) when date is empty.
func demoOrigin(date string, now time.Time) (time.Time, error) {
	day := now.UTC()
	if date != "" {
		d, err := time.Parse(time.DateOnly, date)
		if err != nil {
			return time.Time{}, usageError{fmt.Sprintf("demo: --date %q: want a day as YYYY-MM-DD", date)}
		}
		day = d
	}
	return time.Date(day.Year(), day.Month(), day.Day(), demoHour, 0, 0, 0, time.UTC), nil
}

// demoProject is the generated project of a seed whose history ends at
// origin: nothing else goes into it, so equal arguments give equal data.
func demoProject(seed uint64, origin time.Time, team []giteafake.Person) *giteafake.Project {
	return &giteafake.Project{Seed: seed, Team: team, Now: origin}
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
// its hour, so the dashboard's standup page has one to show; unless run
// with --deliver the demo has no sinks, so nothing is delivered. On a day
// off there is none.
func (m *Main) demoStandup(ctx context.Context, cfg config.Config, pool *store.Pool, projectID int64) error {
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

// exampleIssues picks two open, unassigned est/s issues of the first
// milestone: one for the printed apply_changes example and another for the
// forge curl, so that each moves the milestone's cone anew.
func exampleIssues(ctx context.Context, pool *store.Pool, projectID int64, now time.Time) [2]int64 {
	out := [2]int64{1, 2}
	cards, err := store.IssueCards(ctx, pool, projectID, now)
	if err != nil {
		return out
	}
	k := 0
	for _, c := range cards {
		if k < 2 && c.State == "open" && c.Milestone != nil && *c.Milestone == 1 && len(c.Assignees) == 0 && slices.Contains(c.Labels, "est/s") {
			out[k] = c.Number
			k++
		}
	}
	return out
}

// demoBanner is what demo prints once it is ready.
type demoBanner struct {
	Base, Token, Project, Database, DatabaseURL string
	Forge, ForgeToken                           string
	// Issue is apply_changes' example, ForgeIssue the forge curl's.
	Issue, ForgeIssue int64
	// Password is the demo forge's password of ceo, Member (someone of
	// the team) and the guest, for "Sign in with Gitea".
	Password, Member string
	// Small and Big are the configured models ("" for none), Sinks the
	// standup sinks the demo delivers to.
	Small, Big string
	Sinks      []string
	Seed       uint64
	Clock      time.Time
	Took       time.Duration
}

// standupSinkNames are the sinks standups go to under cfg.
func standupSinkNames(cfg config.Config) []string {
	var out []string
	for _, s := range standupSinks(cfg, nil)(store.Project{}) {
		out = append(out, s.Name())
	}
	if len(cfg.Standup.GiteaIssues) > 0 {
		out = append(out, "gitea")
	}
	return out
}

// modelLines say which models the demo runs with, and what the missing
// ones leave out.
func (b demoBanner) modelLines() string {
	small := "small  none: answers (ask) say MODEL_UNAVAILABLE and standups are the template; set COMMITEA_SMALL_MODEL"
	if b.Small != "" {
		small = "small  " + b.Small + " (phrases standups and answers ask; checked against the data)"
	}
	big := "big    none: capture_work, and record_directive without params, answer MODEL_UNAVAILABLE; set COMMITEA_BIG_MODEL"
	if b.Big != "" {
		big = "big    " + b.Big + " (capture_work interviews and proposals, directive params)"
	}
	sinks := "standups are delivered nowhere (demo --deliver uses the COMMITEA_STANDUP_* sinks)"
	if len(b.Sinks) > 0 {
		sinks = "standups are delivered to: " + strings.Join(b.Sinks, ", ")
	}
	return "Models:\n  " + small + "\n  " + big + "\n  " + sinks
}

// printDemoBanner tells the newcomer what is running and how to use it:
// the dashboard, the shell variables the CLI reads, a curl per tool, a
// change to make in the forge, and an MCP client configuration.
func printDemoBanner(w io.Writer, b demoBanner) {
	base, token := b.Base, b.Token
	auth := fmt.Sprintf("-H 'Authorization: Bearer %s' -H 'Content-Type: application/json'", token)
	tool := func(name, body string) string {
		return fmt.Sprintf("curl -s %s %s/v1/tools/%s -d '%s'", auth, base, name, body)
	}
	fmt.Fprintf(w, `
CommiTea demo is ready in %s.
  project   %s (a generated year of history, seed %d)
  clock     %s UTC, running (--date %s; the same --seed and --date give the same project)
  forge     %s (in-process, Gitea API; token %s)
  database  %s (dropped and created afresh on every run; never while in use)

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

%s

For the CLI (commitea tool, ask, standup, usage), in another shell:
  export COMMITEA_URL=%s
  export COMMITEA_TOKEN=%s
  export DATABASE_URL=%s
  commitea tool query_project '{"view":"runway"}'

Tools:
  %s
  %s
  %s
  %s
  %s

Change the plan in the forge, as a person would in Gitea: this makes #%d, another launch issue,
an XL; the webhook reaches CommiTea and the launch's cone moves on the dashboard within a second
or two:
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
`, b.Took.Round(100*time.Millisecond), b.Project, b.Seed, b.Clock.Format("2006-01-02 15:04"), b.Clock.Format(time.DateOnly),
		b.Forge, b.ForgeToken, b.Database,
		base, token, base, token, b.Password, base, b.Member, demoGuest, base, token, b.modelLines(),
		base, token, shellDatabaseURL(b.DatabaseURL),
		tool("query_project", `{"view":"runway"}`),
		tool("query_project", `{"view":"milestone","filters":{"milestoneId":1}}`),
		tool("apply_changes", fmt.Sprintf(`{"ops":[{"op":"set_estimate","issue":%d,"estimate":"est/xl"}]}`, b.Issue)),
		tool("record_directive", fmt.Sprintf(`{"kind":"reprioritize","quote":"The launch comes first: make this urgent.","target":{"issue":%d},"params":{"priority":0}}`, b.Issue)),
		tool("capture_work", `{"braindump":"Customers want CSV export of invoices, and the export must respect team permissions."}`),
		b.ForgeIssue, b.ForgeToken, b.Forge, b.Project, b.ForgeIssue,
		base, token, base, token)
}

// shellDatabaseURL is the demo database's URL as a quoted shell word; a
// password stays out of the banner and is read from $PGPASSWORD instead.
func shellDatabaseURL(u string) string {
	parsed, err := url.Parse(u)
	if err != nil || !strings.Contains(u, "://") {
		return "'" + u + "'"
	}
	if _, has := parsed.User.Password(); has {
		user := parsed.User.Username()
		parsed.User = nil
		rest := strings.TrimPrefix(parsed.String(), parsed.Scheme+"://")
		return `"` + parsed.Scheme + "://" + user + `:${PGPASSWORD}@` + rest + `"`
	}
	return "'" + u + "'"
}
