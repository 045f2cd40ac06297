// Command commitea runs CommiTea, the project manager's assistant that sits
// next to a Gitea: it mirrors issues into Postgres, infers their lifecycle,
// forecasts milestones and answers agent tools. This package is wiring only:
// configuration, logging and subcommands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	// Embedded zone data: calendars name IANA zones and the container image
	// has no /usr/share/zoneinfo.
	_ "time/tzdata"

	"github.com/commitea/commitea/cmd/commitea/config"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3"; when
// empty, the module version from the build info is shown.
var version string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, restore default handling so a second one
	// kills a shutdown that hangs.
	go func() { <-ctx.Done(); stop() }()

	m := &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	err := m.Run(ctx, os.Args[1:])
	err = errors.Join(err, m.Close())
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "commitea:", err)
		os.Exit(exitCode(err))
	}
}

// Main is one run of the commitea command. Its I/O and environment are
// injected so tests can run it in-process.
type Main struct {
	Stdin  io.Reader // read only by mcp, which speaks MCP on it
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string

	// logger is built from the configuration by loadConfig; before that,
	// commands have nothing to log.
	logger  *slog.Logger
	closers []func() error
	// clock is the process's notion of now, handed to every part that
	// reads the time; nil is the wall clock. demo --date pins it.
	clock func() time.Time
}

// now is the process clock.
func (m *Main) now() time.Time {
	if m.clock != nil {
		return m.clock()
	}
	return time.Now()
}

// command is one subcommand. run parses its own flags from args.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, g globalOptions, args []string) error
}

// globalOptions are the flags given before the subcommand.
type globalOptions struct {
	configPath string
}

// usageError marks a mistake in how commitea was called (exit status 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func exitCode(err error) int {
	if errors.As(err, new(usageError)) {
		return 2
	}
	return 1
}

func (m *Main) commands() []command {
	return []command{
		{"serve", "run the HTTP API and/or the background worker", m.runServe},
		{"migrate", "apply database migrations and exit", m.runMigrate},
		{"sync", "import or repair the mirror of projects from Gitea", m.runSync},
		{"demo", "run everything against a built-in forge with a generated project", m.runDemo},
		{"tool", "call a tool of a running instance: tool NAME '{json}'", m.runTool},
		{"ask", "ask Reginald, the assistant of a running instance: ask \"question\"", m.runAsk},
		{"mcp", "speak MCP on stdio, relayed to a running instance (--read-only: /mcp/readonly)", m.runMCP},
		{"standup", "print today's standup of a project (--dry-run: without storing it)", m.runStandup},
		{"backtest", "replay history and score past forecasts (flags passed through)", m.runBacktest},
		{"usage", "print language-model usage and today's budgets", m.runUsage},
		{"sessions", "list or revoke the sessions of people signed in with Gitea", m.runSessions},
		{"version", "print version and build information", m.runVersion},
		{"help", "show help for commitea or one command", m.runHelp},
	}
}

// Run parses args (without the program name) and runs one subcommand.
func (m *Main) Run(ctx context.Context, args []string) error {
	if m.Getenv == nil {
		m.Getenv = func(string) string { return "" }
	}
	if m.Stdin == nil {
		m.Stdin = strings.NewReader("")
	}
	if m.Stdout == nil {
		m.Stdout = io.Discard
	}
	if m.Stderr == nil {
		m.Stderr = io.Discard
	}

	g := globalOptions{}
	fs := flag.NewFlagSet("commitea", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.Usage = func() { m.printUsage(m.Stderr) }
	fs.StringVar(&g.configPath, "config", m.Getenv("COMMITEA_CONFIG"), "TOML configuration `file` (env COMMITEA_CONFIG)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	if fs.NArg() == 0 {
		m.printUsage(m.Stderr)
		return usageError{"no command given"}
	}
	name := fs.Arg(0)
	for _, c := range m.commands() {
		if c.name == name {
			return c.run(ctx, g, fs.Args()[1:])
		}
	}
	return usageError{fmt.Sprintf("unknown command %q (run 'commitea help')", name)}
}

// Close releases what the commands registered with addCloser, newest first.
// It is safe to call more than once.
func (m *Main) Close() error {
	var errs []error
	for i := len(m.closers) - 1; i >= 0; i-- {
		errs = append(errs, m.closers[i]())
	}
	m.closers = nil
	return errors.Join(errs...)
}

// addCloser registers cleanup for Close, e.g. a database pool.
func (m *Main) addCloser(fn func() error) { m.closers = append(m.closers, fn) }

func (m *Main) printUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: commitea [--config FILE] <command> [flags]")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range m.commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nConfiguration comes from --config FILE (or COMMITEA_CONFIG) and environment")
	fmt.Fprintln(w, "variables, which win over the file. Run 'commitea help <command>' for its flags.")
}

// newFlagSet makes a subcommand's flag set; --config is accepted after the
// subcommand too, so "commitea serve --config x.toml" works.
func (m *Main) newFlagSet(name, usage string, g *globalOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("commitea "+name, flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(m.Stderr, "Usage: commitea %s %s\n\nFlags:\n", name, usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&g.configPath, "config", g.configPath, "TOML configuration `file` (env COMMITEA_CONFIG)")
	return fs
}

// parseFlags parses a subcommand's flags. It returns done=true when help was
// shown and the command should stop without error.
func parseFlags(fs *flag.FlagSet, args []string) (done bool, err error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return true, nil
		}
		return false, usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return false, usageError{fmt.Sprintf("%s: unexpected arguments: %s", fs.Name(), strings.Join(fs.Args(), " "))}
	}
	return false, nil
}

// loadConfig loads and validates the configuration for one command and
// sets up the logger from it.
func (m *Main) loadConfig(path, command string) (config.Config, error) {
	cfg, err := config.Load(path, m.Getenv)
	if err != nil {
		return config.Config{}, err
	}
	if err := cfg.ValidateFor(command); err != nil {
		return config.Config{}, err
	}
	m.logger = newLogger(cfg.Log, m.Stderr)
	m.logger.Info("configuration loaded", "command", command, "config_file", path, "config", cfg)
	return cfg, nil
}

// newLogger builds the slog logger the configuration asks for. The config is
// validated, so an unknown level cannot reach here; it falls back to info.
func newLogger(c config.LogConfig, w io.Writer) *slog.Logger {
	level, _ := config.ParseLogLevel(c.Level)
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// Role selects what a serve process runs, so the API and the worker can be
// scaled separately.
type Role string

// The roles of serve.
const (
	RoleAll    Role = "all"
	RoleAPI    Role = "api"
	RoleWorker Role = "worker"
)

// RunsAPI reports whether the process serves HTTP.
func (r Role) RunsAPI() bool { return r == RoleAll || r == RoleAPI }

// RunsWorker reports whether the process works River jobs.
func (r Role) RunsWorker() bool { return r == RoleAll || r == RoleWorker }

func (r *Role) String() string { return string(*r) }

// Set validates a --role value.
func (r *Role) Set(s string) error {
	if !slices.Contains([]Role{RoleAll, RoleAPI, RoleWorker}, Role(s)) {
		return fmt.Errorf("must be all, api or worker")
	}
	*r = Role(s)
	return nil
}

// serveOptions are serve's flags.
type serveOptions struct {
	Role Role
	// Listener, when set, is the listener to serve on instead of
	// server.addr: demo opens it first, to know its address and to bind it
	// before it touches the database.
	Listener net.Listener
}

func (m *Main) runServe(ctx context.Context, g globalOptions, args []string) error {
	opts := serveOptions{Role: RoleAll}
	fs := m.newFlagSet("serve", "[--role all|api|worker]", &g)
	fs.Var(&opts.Role, "role", "run `all` (API and worker), api (HTTP only) or worker (jobs only)")
	if done, err := parseFlags(fs, args); done || err != nil {
		return err
	}
	cfg, err := m.loadConfig(g.configPath, "serve")
	if err != nil {
		return err
	}
	return m.serve(ctx, cfg, opts)
}

func (m *Main) runMigrate(ctx context.Context, g globalOptions, args []string) error {
	fs := m.newFlagSet("migrate", "", &g)
	if done, err := parseFlags(fs, args); done || err != nil {
		return err
	}
	cfg, err := m.loadConfig(g.configPath, "migrate")
	if err != nil {
		return err
	}
	return m.migrate(ctx, cfg)
}

// syncOptions are sync's flags.
type syncOptions struct {
	// Projects to sync; when --project is not given, every configured one.
	Projects []string
}

func (m *Main) runSync(ctx context.Context, g globalOptions, args []string) error {
	var project string
	fs := m.newFlagSet("sync", "[--project owner/repo]", &g)
	fs.StringVar(&project, "project", "", "sync only this `owner/repo` (default: every configured project)")
	if done, err := parseFlags(fs, args); done || err != nil {
		return err
	}
	if project != "" {
		if err := config.CheckProject(project); err != nil {
			return usageError{"sync: --project: " + err.Error()}
		}
	}
	cfg, err := m.loadConfig(g.configPath, "sync")
	if err != nil {
		return err
	}
	opts := syncOptions{Projects: cfg.Projects}
	if project != "" {
		opts.Projects = []string{project}
	}
	if len(opts.Projects) == 0 {
		return usageError{"sync: no project: pass --project owner/repo or configure projects (COMMITEA_PROJECTS)"}
	}
	return m.syncProjects(ctx, cfg, opts)
}

// runBacktest hands every argument to backtest, which owns its flags.
func (m *Main) runBacktest(ctx context.Context, g globalOptions, args []string) error {
	cfg, err := m.loadConfig(g.configPath, "backtest")
	if err != nil {
		return err
	}
	return m.backtest(ctx, cfg, args)
}

func (m *Main) runVersion(_ context.Context, g globalOptions, args []string) error {
	fs := m.newFlagSet("version", "", &g)
	if done, err := parseFlags(fs, args); done || err != nil {
		return err
	}
	fmt.Fprint(m.Stdout, versionText())
	return nil
}

// versionString is the version alone: the build-time one, else the
// module's, else "(devel)".
func versionString() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

// versionText describes the build: version, Go release and VCS revision.
func versionText() string {
	var b strings.Builder
	info, ok := debug.ReadBuildInfo()
	fmt.Fprintf(&b, "commitea %s\n", versionString())
	if !ok {
		return b.String()
	}
	fmt.Fprintf(&b, "go: %s\n", info.GoVersion)
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		if settings["vcs.modified"] == "true" {
			rev += " (modified)"
		}
		fmt.Fprintf(&b, "revision: %s\n", rev)
	}
	if t := settings["vcs.time"]; t != "" {
		fmt.Fprintf(&b, "commit time: %s\n", t)
	}
	return b.String()
}

func (m *Main) runHelp(ctx context.Context, g globalOptions, args []string) error {
	if len(args) == 0 || args[0] == "help" {
		m.printUsage(m.Stdout)
		return nil
	}
	// Flag usage goes to stderr when a command is misused, but help was
	// asked for: print it to stdout through a copy of m.
	helper := &Main{Stdout: m.Stdout, Stderr: m.Stdout, Getenv: m.Getenv}
	for _, c := range helper.commands() {
		if c.name != args[0] {
			continue
		}
		if c.name == "backtest" {
			// backtest owns its flags; asking it for help must need no config.
			fmt.Fprintf(m.Stdout, "Usage: commitea backtest [flags]\n\nbacktest: %s.\nRun 'commitea backtest -h' for its flags.\n", c.summary)
			return nil
		}
		return c.run(ctx, g, []string{"-h"})
	}
	return usageError{fmt.Sprintf("help: unknown command %q", args[0])}
}
