// Package config is CommiTea's configuration: the plain Config struct, read
// from an optional TOML file and from environment variables, and its
// validation per command. It lives apart from the commands so that its
// tests and its fuzz target build and run small.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/models"
)

// Config is everything CommiTea reads at start-up. It comes from an optional
// TOML file and from environment variables, which win over the file so that a
// container needs no file at all. Call Load to build one and
// ValidateFor before using it.
type Config struct {
	// Projects are the Gitea repositories served, as "owner/repo".
	Projects  []string        `toml:"projects"`
	Database  DatabaseConfig  `toml:"database"`
	Gitea     GiteaConfig     `toml:"gitea"`
	Server    ServerConfig    `toml:"server"`
	Dashboard DashboardConfig `toml:"dashboard"`
	Sessions  SessionsConfig  `toml:"sessions"`
	Log       LogConfig       `toml:"log"`
	Reconcile ReconcileConfig `toml:"reconcile"`
	Retention RetentionConfig `toml:"retention"`
	Forecast  ForecastConfig  `toml:"forecast"`
	Lifecycle LifecycleConfig `toml:"lifecycle"`
	Flow      FlowConfig      `toml:"flow"`
	// Calendar is the working calendar of everyone not listed in People.
	Calendar CalendarConfig `toml:"calendar"`
	// People overrides the calendar per Gitea login; fields left out are
	// taken from Calendar.
	People  map[string]CalendarConfig `toml:"people"`
	Standup StandupConfig             `toml:"standup"`
	Tokens  []TokenConfig             `toml:"tokens"`
	Models  ModelsConfig              `toml:"models"`
}

// DatabaseConfig locates the Postgres database shared by every replica.
type DatabaseConfig struct {
	// URL is a pgx connection string (postgres://… or key=value form). It is
	// a Secret because it usually carries a password.
	URL Secret `toml:"url"`
}

// GiteaConfig locates the Gitea (or Forgejo) instance.
type GiteaConfig struct {
	URL   string `toml:"url"`
	Token Secret `toml:"token"`
	// WebhookSecret is the shared secret Gitea signs webhook bodies with.
	WebhookSecret Secret `toml:"webhook_secret"`
	// BrowserURL is where people's browsers reach Gitea, when that is not
	// URL (docker compose: CommiTea calls http://gitea:3000, browsers
	// http://localhost:3000). Sign-in sends browsers there.
	BrowserURL string `toml:"browser_url"`
	// OAuthClientID and OAuthClientSecret are the OAuth2 application
	// registered in Gitea for "Sign in with Gitea"; both set turn sign-in
	// on. Its redirect URI is server.public_url + /auth/callback.
	OAuthClientID     string `toml:"oauth_client_id"`
	OAuthClientSecret Secret `toml:"oauth_client_secret"`
	// MaxConcurrentRequests bounds CommiTea's requests in flight to Gitea
	// at once; a backfill reads that many issues' details at a time. Zero
	// means the default (configurations built in code, like the demo's).
	MaxConcurrentRequests int `toml:"max_concurrent_requests"`
}

// DashboardConfig is how people reach the pages.
type DashboardConfig struct {
	// TokenLinks lets the dashboard and the River UI take a bearer token
	// once in the address (?token=…, then a cookie). Anyone holding such a
	// link holds the token, so it is off unless asked for (the demo asks).
	TokenLinks bool `toml:"token_links"`
}

// SessionsConfig bounds the sessions of people signed in with Gitea.
type SessionsConfig struct {
	// IdleTimeout ends a session not used for this long; MaxAge ends any
	// session this long after sign-in.
	IdleTimeout time.Duration `toml:"idle_timeout"`
	MaxAge      time.Duration `toml:"max_age"`
	// PermissionRefresh is how old a session's Gitea permissions may get
	// before a request reads them again: a downgrade in Gitea takes effect
	// within it.
	PermissionRefresh time.Duration `toml:"permission_refresh"`
}

// ServerConfig is the HTTP listener.
type ServerConfig struct {
	Addr string `toml:"addr"`
	// MaxBodyBytes caps every request body (webhooks and tool calls).
	MaxBodyBytes int64 `toml:"max_body_bytes"`
	// MaxBufferedBytes bounds the request bytes held at once across all
	// requests (webhook bodies before their signature is checked, tool
	// inputs); beyond it a request is answered 503 with Retry-After.
	MaxBufferedBytes int64 `toml:"max_buffered_bytes"`
	// MetricsToken, when set, is the bearer token GET /metrics requires.
	MetricsToken Secret `toml:"metrics_token"`
	// PublicURL is the address people and Gitea reach CommiTea at, when it
	// is not the listen address (a TLS-terminating proxy): an origin such
	// as https://commitea.example.com. With https, cookies are Secure; the
	// links CommiTea prints start with it.
	PublicURL string `toml:"public_url"`
}

// LogConfig picks the slog handler.
type LogConfig struct {
	Format string `toml:"format"` // "text" or "json"
	Level  string `toml:"level"`  // "debug", "info", "warn" or "error"
}

// ReconcileConfig drives the periodic repair of the mirror.
type ReconcileConfig struct {
	Interval time.Duration `toml:"interval"`
}

// RetentionConfig says how long stored history that grows without bound
// is kept; zero keeps it forever.
type RetentionConfig struct {
	// Deliveries is how long a webhook delivery (its whole body) is kept.
	// Its id dedupes Gitea's redeliveries only while it is kept.
	Deliveries time.Duration `toml:"deliveries"`
	// Conversations is how long a conversation with Reginald may sit idle
	// before its turn summaries are deleted.
	Conversations time.Duration `toml:"conversations"`
}

// ForecastConfig drives the Monte Carlo forecast.
type ForecastConfig struct {
	Trials int `toml:"trials"`
	// MaxLag is how long a project's snapshot may lack a change of its
	// mirror before /readyz?fresh=1 answers 503.
	MaxLag time.Duration `toml:"max_lag"`
}

// LifecycleConfig tunes lifecycle inference.
type LifecycleConfig struct {
	// StaleWorkingDays is how long a steeping issue may go without activity
	// before it is flagged stale.
	StaleWorkingDays int `toml:"stale_working_days"`
}

// FlowConfig tunes the flow metrics (cycle time, throughput, the service
// level expectation and the aging flag).
type FlowConfig struct {
	// WindowDays is how many calendar days back the flow metrics look.
	WindowDays int `toml:"window_days"`
	// SLEPercentile is the share of finished work, in percent, whose cycle
	// time sets the service level expectation; older open work is aging.
	SLEPercentile int `toml:"sle_percentile"`
}

// CalendarConfig is one working calendar as written in the file. In People
// entries, zero fields mean "as in the default calendar".
type CalendarConfig struct {
	HoursPerDay float64 `toml:"hours_per_day,omitempty"`
	// WorkingDays are weekday names: "mon".."sun" (full names also accepted).
	WorkingDays []string `toml:"working_days,omitempty"`
	// TimeZone is an IANA name such as "Europe/Berlin".
	TimeZone string `toml:"time_zone,omitempty"`
	// Holidays are local dates not worked. A person's own list replaces the
	// default list (someone abroad keeps other holidays).
	Holidays []Date `toml:"holidays,omitempty"`
	// TimeOff are inclusive ranges of local dates not worked; they are never
	// inherited from the default calendar.
	TimeOff []DateRangeConfig `toml:"time_off,omitempty"`
}

// DateRangeConfig is an inclusive range of dates.
type DateRangeConfig struct {
	From Date `toml:"from"`
	To   Date `toml:"to"`
}

// StandupConfig is when the daily standup is produced and where it goes.
type StandupConfig struct {
	Time     string `toml:"time"`      // "HH:MM", 24-hour
	TimeZone string `toml:"time_zone"` // defaults to the calendar's time zone
	// Sinks (standup.go); each one is used when configured.
	Webhook StandupWebhookConfig `toml:"webhook"`
	Slack   StandupSlackConfig   `toml:"slack"`
	Matrix  StandupMatrixConfig  `toml:"matrix"`
	Email   StandupEmailConfig   `toml:"email"`
	// GiteaIssues opt projects in to a standup comment on one issue each:
	// "owner/repo#N".
	GiteaIssues []string `toml:"gitea_issues"`
}

// TokenConfig is one bearer token accepted by the tool API.
type TokenConfig struct {
	Name   string   `toml:"name"`
	Scopes []string `toml:"scopes"` // read, write, approve
	Secret Secret   `toml:"secret"`
}

// ModelsConfig routes language-model work to two roles and bounds its spend.
type ModelsConfig struct {
	Small ModelRoleConfig `toml:"small"`
	Big   ModelRoleConfig `toml:"big"`
	// Daily budgets across both roles stop model calls hard when reached;
	// 0 means no limit. Days follow the default calendar's time zone.
	DailyRequests int     `toml:"daily_requests"`
	DailyTokens   int     `toml:"daily_tokens"`
	DailyCostUSD  float64 `toml:"daily_cost_usd"`
	// Timeout bounds one model request.
	Timeout time.Duration `toml:"timeout"`
	// AskMaxToolCalls bounds the tool calls Reginald (ask) makes for one
	// question; 0 means reginald.DefaultMaxToolCalls (4).
	AskMaxToolCalls int `toml:"ask_max_tool_calls"`
}

// ModelRoleConfig names the model behind one role. An empty Model means the
// role is not configured and the features needing it degrade.
type ModelRoleConfig struct {
	Model   string `toml:"model"`    // "provider:model"
	BaseURL string `toml:"base_url"` // OpenAI-compatible or Ollama endpoint
	// APIKey defaults to the provider's variable (OPENAI_API_KEY,
	// ANTHROPIC_API_KEY).
	APIKey   Secret `toml:"api_key"`
	Fallback string `toml:"fallback"` // "provider:model", tried once on a model error
	// FallbackBaseURL and FallbackAPIKey locate the fallback; unset, it
	// uses its provider's default endpoint and key variable.
	FallbackBaseURL string `toml:"fallback_base_url"`
	FallbackAPIKey  Secret `toml:"fallback_api_key"`
	// The role's own daily budgets, on top of the shared ones; 0 means no
	// limit of its own.
	DailyRequests int     `toml:"daily_requests"`
	DailyTokens   int     `toml:"daily_tokens"`
	DailyCostUSD  float64 `toml:"daily_cost_usd"`
	// Prices in USD per million tokens turn usage into cost; 0 for local
	// models. Each model has its own: a request the fallback served is
	// priced at the fallback's.
	InputUSDPerMTok          float64 `toml:"input_usd_per_mtok"`
	OutputUSDPerMTok         float64 `toml:"output_usd_per_mtok"`
	FallbackInputUSDPerMTok  float64 `toml:"fallback_input_usd_per_mtok"`
	FallbackOutputUSDPerMTok float64 `toml:"fallback_output_usd_per_mtok"`
}

// Token scopes.
const (
	ScopeRead    = "read"
	ScopeWrite   = "write"
	ScopeApprove = "approve"
)

// Limits and defaults that the README and the example file document.
const (
	DefaultAddr              = ":8080"
	DefaultMaxBodyBytes      = 10 << 20
	DefaultMaxBufferedBytes  = 32 << 20
	DefaultReconcileInterval = 10 * time.Minute
	DefaultForecastTrials    = 2000
	MaxForecastTrials        = 100000
	DefaultMaxLag            = 2 * time.Minute
	MinMaxLag                = time.Second
	MaxMaxLag                = 24 * time.Hour
	DefaultStaleWorkingDays  = 3
	DefaultFlowWindowDays    = 90
	MaxFlowWindowDays        = 730
	DefaultSLEPercentile     = 85
	DefaultHoursPerDay       = 6
	DefaultStandupTime       = "09:00"
	DefaultDailyRequests     = 2000
	DefaultDailyTokens       = 5_000_000
	// DefaultModelTimeout leaves a 4B model on a CPU time for a long
	// answer.
	DefaultModelTimeout = 2 * time.Minute
	// MinSecretLen applies to the webhook secret and to bearer tokens: short
	// secrets are guessable, and `openssl rand -hex 16` is easy to run.
	MinSecretLen = 16
	// MinReconcileInterval keeps reconcile from hammering Gitea.
	MinReconcileInterval = time.Minute
	// DefaultDeliveryRetention and DefaultConversationRetention bound the
	// two tables that grow with use.
	DefaultDeliveryRetention     = 30 * 24 * time.Hour
	DefaultConversationRetention = 90 * 24 * time.Hour
	// MinDeliveryRetention stays far behind Gitea's redelivery of a
	// webhook, which a pruned id would no longer dedupe.
	MinDeliveryRetention = 24 * time.Hour
	// Sessions of people signed in with Gitea.
	DefaultSessionIdleTimeout = 12 * time.Hour
	DefaultSessionMaxAge      = 7 * 24 * time.Hour
	DefaultPermissionRefresh  = 10 * time.Minute
)

// maxGiteaConcurrency caps gitea.max_concurrent_requests: beyond it a
// backfill gains nothing a forge would not refuse.
const maxGiteaConcurrency = 64

// Default is the configuration before any file or environment is read.
func Default() Config {
	return Config{
		Gitea:     GiteaConfig{MaxConcurrentRequests: gitea.DefaultMaxConcurrent},
		Server:    ServerConfig{Addr: DefaultAddr, MaxBodyBytes: DefaultMaxBodyBytes, MaxBufferedBytes: DefaultMaxBufferedBytes},
		Sessions:  SessionsConfig{IdleTimeout: DefaultSessionIdleTimeout, MaxAge: DefaultSessionMaxAge, PermissionRefresh: DefaultPermissionRefresh},
		Log:       LogConfig{Format: "text", Level: "info"},
		Reconcile: ReconcileConfig{Interval: DefaultReconcileInterval},
		Retention: RetentionConfig{Deliveries: DefaultDeliveryRetention, Conversations: DefaultConversationRetention},
		Forecast:  ForecastConfig{Trials: DefaultForecastTrials, MaxLag: DefaultMaxLag},
		Lifecycle: LifecycleConfig{StaleWorkingDays: DefaultStaleWorkingDays},
		Flow:      FlowConfig{WindowDays: DefaultFlowWindowDays, SLEPercentile: DefaultSLEPercentile},
		Calendar: CalendarConfig{
			HoursPerDay: DefaultHoursPerDay,
			WorkingDays: []string{"mon", "tue", "wed", "thu", "fri"},
			TimeZone:    "UTC",
		},
		Standup: StandupConfig{Time: DefaultStandupTime},
		Models:  ModelsConfig{DailyRequests: DefaultDailyRequests, DailyTokens: DefaultDailyTokens, Timeout: DefaultModelTimeout},
	}
}

// Error lists every problem found in a configuration, one per line.
type Error struct {
	Problems []string
}

func (e *Error) Error() string { return strings.Join(e.Problems, "\n") }

// problems collects configuration problems; each names the environment
// variable (when there is one) and the file key.
type problems []string

func (p *problems) add(env, key, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if env != "" {
		*p = append(*p, fmt.Sprintf("config: %s (%s): %s", env, key, msg))
		return
	}
	*p = append(*p, fmt.Sprintf("config: %s: %s", key, msg))
}

func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return &Error{Problems: p}
}

// Load builds the configuration: defaults, then the TOML file at path
// (skipped when path is empty), then environment variables read through
// getenv. An empty variable counts as unset. For secrets, NAME_FILE names a
// file holding the value (Docker and systemd credentials). Every unreadable
// value is reported, not only the first; semantic checks are left to
// ValidateFor.
func Load(path string, getenv func(string) string) (Config, error) {
	var data []byte
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return Config{}, fmt.Errorf("config: read %s: %w", path, err)
		}
	}
	return load(path, data, getenv)
}

// load is Load on the file's contents, already read (no file when path is
// empty). The fuzz target calls it directly: a file written and removed
// per input made every input, and minimizing a large one, cost disk I/O.
func load(path string, data []byte, getenv func(string) string) (Config, error) {
	cfg := Default()
	var probs problems
	if path != "" {
		md, err := toml.Decode(string(data), &cfg)
		if err != nil {
			return Config{}, fmt.Errorf("config: parse %s: %w", path, err)
		}
		for _, k := range md.Undecoded() {
			probs.add("", k.String(), "unknown key in %s", path)
		}
	}
	for _, b := range envBindings() {
		val, ok, err := lookupEnv(getenv, b)
		if err != nil {
			probs.add(b.env, b.key, "%v", err)
			continue
		}
		if !ok {
			continue
		}
		if err := b.apply(&cfg, val); err != nil {
			probs.add(b.env, b.key, "%v", err)
		}
	}
	if err := probs.err(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// envBinding ties one environment variable to one file key.
type envBinding struct {
	env    string
	key    string
	secret bool // NAME_FILE is accepted too
	apply  func(*Config, string) error
}

func lookupEnv(getenv func(string) string, b envBinding) (string, bool, error) {
	val := getenv(b.env)
	if b.secret {
		if file := getenv(b.env + "_FILE"); file != "" {
			if val != "" {
				return "", false, fmt.Errorf("both %s and %s_FILE are set; set one", b.env, b.env)
			}
			data, err := os.ReadFile(file)
			if err != nil {
				return "", false, fmt.Errorf("read %s_FILE: %w", b.env, err)
			}
			val = strings.TrimRight(string(data), "\r\n")
			if val == "" {
				return "", false, fmt.Errorf("%s_FILE %s is empty", b.env, file)
			}
		}
	}
	return val, val != "", nil
}

// envBindings lists every environment variable CommiTea reads, in the order
// the README documents them.
func envBindings() []envBinding {
	str := func(dst func(*Config) *string) func(*Config, string) error {
		return func(c *Config, v string) error { *dst(c) = v; return nil }
	}
	secret := func(dst func(*Config) *Secret) func(*Config, string) error {
		return func(c *Config, v string) error { *dst(c) = Secret(v); return nil }
	}
	integer := func(dst func(*Config) *int) func(*Config, string) error {
		return func(c *Config, v string) error {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("not an integer: %q", v)
			}
			*dst(c) = n
			return nil
		}
	}
	float := func(dst func(*Config) *float64) func(*Config, string) error {
		return func(c *Config, v string) error {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return fmt.Errorf("not a number: %q", v)
			}
			*dst(c) = f
			return nil
		}
	}
	duration := func(dst func(*Config) *time.Duration) func(*Config, string) error {
		return func(c *Config, v string) error {
			d, err := time.ParseDuration(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("not a duration such as 10m: %q", v)
			}
			*dst(c) = d
			return nil
		}
	}
	list := func(dst func(*Config) *[]string) func(*Config, string) error {
		return func(c *Config, v string) error { *dst(c) = splitList(v); return nil }
	}
	role := func(prefix, key string, r func(*Config) *ModelRoleConfig) []envBinding {
		return []envBinding{
			{env: prefix + "_MODEL", key: key + ".model", apply: str(func(c *Config) *string { return &r(c).Model })},
			{env: prefix + "_BASE_URL", key: key + ".base_url", apply: str(func(c *Config) *string { return &r(c).BaseURL })},
			{env: prefix + "_FALLBACK", key: key + ".fallback", apply: str(func(c *Config) *string { return &r(c).Fallback })},
			{env: prefix + "_API_KEY", key: key + ".api_key", secret: true, apply: secret(func(c *Config) *Secret { return &r(c).APIKey })},
			{env: prefix + "_FALLBACK_BASE_URL", key: key + ".fallback_base_url", apply: str(func(c *Config) *string { return &r(c).FallbackBaseURL })},
			{env: prefix + "_FALLBACK_API_KEY", key: key + ".fallback_api_key", secret: true, apply: secret(func(c *Config) *Secret { return &r(c).FallbackAPIKey })},
			{env: prefix + "_DAILY_REQUESTS", key: key + ".daily_requests", apply: integer(func(c *Config) *int { return &r(c).DailyRequests })},
			{env: prefix + "_DAILY_TOKENS", key: key + ".daily_tokens", apply: integer(func(c *Config) *int { return &r(c).DailyTokens })},
			{env: prefix + "_DAILY_COST_USD", key: key + ".daily_cost_usd", apply: float(func(c *Config) *float64 { return &r(c).DailyCostUSD })},
			{env: prefix + "_INPUT_USD_PER_MTOK", key: key + ".input_usd_per_mtok", apply: float(func(c *Config) *float64 { return &r(c).InputUSDPerMTok })},
			{env: prefix + "_OUTPUT_USD_PER_MTOK", key: key + ".output_usd_per_mtok", apply: float(func(c *Config) *float64 { return &r(c).OutputUSDPerMTok })},
			{env: prefix + "_FALLBACK_INPUT_USD_PER_MTOK", key: key + ".fallback_input_usd_per_mtok", apply: float(func(c *Config) *float64 { return &r(c).FallbackInputUSDPerMTok })},
			{env: prefix + "_FALLBACK_OUTPUT_USD_PER_MTOK", key: key + ".fallback_output_usd_per_mtok", apply: float(func(c *Config) *float64 { return &r(c).FallbackOutputUSDPerMTok })},
		}
	}
	bs := []envBinding{
		{env: "DATABASE_URL", key: "database.url", secret: true, apply: secret(func(c *Config) *Secret { return &c.Database.URL })},
		{env: "GITEA_URL", key: "gitea.url", apply: str(func(c *Config) *string { return &c.Gitea.URL })},
		{env: "GITEA_TOKEN", key: "gitea.token", secret: true, apply: secret(func(c *Config) *Secret { return &c.Gitea.Token })},
		{env: "COMMITEA_WEBHOOK_SECRET", key: "gitea.webhook_secret", secret: true, apply: secret(func(c *Config) *Secret { return &c.Gitea.WebhookSecret })},
		{env: "GITEA_BROWSER_URL", key: "gitea.browser_url", apply: str(func(c *Config) *string { return &c.Gitea.BrowserURL })},
		// The client id is no secret, but compose-init writes it to a file
		// beside the secret, so it takes _FILE too.
		{env: "GITEA_OAUTH_CLIENT_ID", key: "gitea.oauth_client_id", secret: true, apply: str(func(c *Config) *string { return &c.Gitea.OAuthClientID })},
		{env: "GITEA_OAUTH_CLIENT_SECRET", key: "gitea.oauth_client_secret", secret: true, apply: secret(func(c *Config) *Secret { return &c.Gitea.OAuthClientSecret })},
		{env: "GITEA_MAX_CONCURRENT_REQUESTS", key: "gitea.max_concurrent_requests", apply: integer(func(c *Config) *int { return &c.Gitea.MaxConcurrentRequests })},
		{env: "COMMITEA_PROJECTS", key: "projects", apply: list(func(c *Config) *[]string { return &c.Projects })},
		{env: "COMMITEA_ADDR", key: "server.addr", apply: str(func(c *Config) *string { return &c.Server.Addr })},
		{env: "COMMITEA_MAX_BODY_BYTES", key: "server.max_body_bytes", apply: func(c *Config, v string) error {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return fmt.Errorf("not an integer: %q", v)
			}
			c.Server.MaxBodyBytes = n
			return nil
		}},
		{env: "COMMITEA_MAX_BUFFERED_BYTES", key: "server.max_buffered_bytes", apply: func(c *Config, v string) error {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return fmt.Errorf("not an integer: %q", v)
			}
			c.Server.MaxBufferedBytes = n
			return nil
		}},
		{env: "COMMITEA_METRICS_TOKEN", key: "server.metrics_token", secret: true, apply: secret(func(c *Config) *Secret { return &c.Server.MetricsToken })},
		{env: "COMMITEA_PUBLIC_URL", key: "server.public_url", apply: str(func(c *Config) *string { return &c.Server.PublicURL })},
		{env: "COMMITEA_DASHBOARD_TOKEN_LINKS", key: "dashboard.token_links", apply: func(c *Config, v string) error {
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("not true or false: %q", v)
			}
			c.Dashboard.TokenLinks = b
			return nil
		}},
		{env: "COMMITEA_SESSION_IDLE_TIMEOUT", key: "sessions.idle_timeout", apply: duration(func(c *Config) *time.Duration { return &c.Sessions.IdleTimeout })},
		{env: "COMMITEA_SESSION_MAX_AGE", key: "sessions.max_age", apply: duration(func(c *Config) *time.Duration { return &c.Sessions.MaxAge })},
		{env: "COMMITEA_PERMISSION_REFRESH", key: "sessions.permission_refresh", apply: duration(func(c *Config) *time.Duration { return &c.Sessions.PermissionRefresh })},
		{env: "COMMITEA_LOG_FORMAT", key: "log.format", apply: str(func(c *Config) *string { return &c.Log.Format })},
		{env: "COMMITEA_LOG_LEVEL", key: "log.level", apply: str(func(c *Config) *string { return &c.Log.Level })},
		{env: "COMMITEA_RECONCILE_INTERVAL", key: "reconcile.interval", apply: duration(func(c *Config) *time.Duration { return &c.Reconcile.Interval })},
		{env: "COMMITEA_RETENTION_DELIVERIES", key: "retention.deliveries", apply: duration(func(c *Config) *time.Duration { return &c.Retention.Deliveries })},
		{env: "COMMITEA_RETENTION_CONVERSATIONS", key: "retention.conversations", apply: duration(func(c *Config) *time.Duration { return &c.Retention.Conversations })},
		{env: "COMMITEA_FORECAST_TRIALS", key: "forecast.trials", apply: integer(func(c *Config) *int { return &c.Forecast.Trials })},
		{env: "COMMITEA_FORECAST_MAX_LAG", key: "forecast.max_lag", apply: duration(func(c *Config) *time.Duration { return &c.Forecast.MaxLag })},
		{env: "COMMITEA_STALE_WORKING_DAYS", key: "lifecycle.stale_working_days", apply: integer(func(c *Config) *int { return &c.Lifecycle.StaleWorkingDays })},
		{env: "COMMITEA_FLOW_WINDOW_DAYS", key: "flow.window_days", apply: integer(func(c *Config) *int { return &c.Flow.WindowDays })},
		{env: "COMMITEA_FLOW_SLE_PERCENTILE", key: "flow.sle_percentile", apply: integer(func(c *Config) *int { return &c.Flow.SLEPercentile })},
		{env: "COMMITEA_CALENDAR_HOURS_PER_DAY", key: "calendar.hours_per_day", apply: float(func(c *Config) *float64 { return &c.Calendar.HoursPerDay })},
		{env: "COMMITEA_CALENDAR_WORKING_DAYS", key: "calendar.working_days", apply: list(func(c *Config) *[]string { return &c.Calendar.WorkingDays })},
		{env: "COMMITEA_CALENDAR_TIME_ZONE", key: "calendar.time_zone", apply: str(func(c *Config) *string { return &c.Calendar.TimeZone })},
		{env: "COMMITEA_CALENDAR_HOLIDAYS", key: "calendar.holidays", apply: func(c *Config, v string) error {
			var ds []Date
			for _, s := range splitList(v) {
				d, err := ParseDate(s)
				if err != nil {
					return err
				}
				ds = append(ds, d)
			}
			c.Calendar.Holidays = ds
			return nil
		}},
		{env: "COMMITEA_STANDUP_TIME", key: "standup.time", apply: str(func(c *Config) *string { return &c.Standup.Time })},
		{env: "COMMITEA_STANDUP_TIME_ZONE", key: "standup.time_zone", apply: str(func(c *Config) *string { return &c.Standup.TimeZone })},
		{env: "COMMITEA_TOKENS", key: "tokens", secret: true, apply: func(c *Config, v string) error {
			ts, err := parseTokens(v)
			if err != nil {
				return err
			}
			c.Tokens = ts
			return nil
		}},
	}
	bs = append(bs, role("COMMITEA_SMALL", "models.small", func(c *Config) *ModelRoleConfig { return &c.Models.Small })...)
	bs = append(bs, role("COMMITEA_BIG", "models.big", func(c *Config) *ModelRoleConfig { return &c.Models.Big })...)
	bs = append(bs,
		envBinding{env: "COMMITEA_MODEL_DAILY_REQUESTS", key: "models.daily_requests", apply: integer(func(c *Config) *int { return &c.Models.DailyRequests })},
		envBinding{env: "COMMITEA_MODEL_DAILY_TOKENS", key: "models.daily_tokens", apply: integer(func(c *Config) *int { return &c.Models.DailyTokens })},
		envBinding{env: "COMMITEA_MODEL_DAILY_COST_USD", key: "models.daily_cost_usd", apply: float(func(c *Config) *float64 { return &c.Models.DailyCostUSD })},
		envBinding{env: "COMMITEA_MODEL_TIMEOUT", key: "models.timeout", apply: func(c *Config, v string) error {
			d, err := time.ParseDuration(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("not a duration such as 2m: %q", v)
			}
			c.Models.Timeout = d
			return nil
		}},
		envBinding{env: "COMMITEA_ASK_MAX_TOOL_CALLS", key: "models.ask_max_tool_calls", apply: integer(func(c *Config) *int { return &c.Models.AskMaxToolCalls })},
	)
	bs = append(bs, standupSinkBindings()...)
	return bs
}

// envFor returns the environment variable bound to a file key, or "".
func envFor(key string) string {
	for _, b := range envBindings() {
		if b.key == key {
			return b.env
		}
	}
	return ""
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// parseTokens reads COMMITEA_TOKENS: comma-separated name:scopes:secret with
// scopes joined by "+". The secret is everything after the second colon, so
// it may itself contain colons (but not commas).
func parseTokens(v string) ([]TokenConfig, error) {
	var ts []TokenConfig
	for i, item := range splitList(v) {
		parts := strings.SplitN(item, ":", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("token %d: want name:scopes:secret (scopes joined by +)", i+1)
		}
		ts = append(ts, TokenConfig{
			Name:   strings.TrimSpace(parts[0]),
			Scopes: strings.Split(strings.TrimSpace(parts[1]), "+"),
			Secret: Secret(parts[2]),
		})
	}
	return ts, nil
}

// Validate checks the configuration for the strictest command, serve.
func (c Config) Validate() error { return c.ValidateFor("serve") }

// ValidateFor checks the configuration for one subcommand and reports every
// problem at once. Values that are set are always checked; which values must
// be set depends on the command: serve needs the database, Gitea, the webhook
// secret and at least one project; sync needs the database and Gitea; migrate
// only the database.
func (c Config) ValidateFor(command string) error {
	var p problems
	key := func(k string) (string, string) { return envFor(k), k }

	need := map[string]bool{}
	switch command {
	case "serve":
		need = map[string]bool{"database.url": true, "gitea.url": true, "gitea.webhook_secret": true, "projects": true}
	case "sync":
		need = map[string]bool{"database.url": true, "gitea.url": true}
	case "migrate", "usage", "standup", "sessions":
		need = map[string]bool{"database.url": true}
	}
	required := func(k string, set bool) bool {
		if !set && need[k] {
			e, k := key(k)
			p.add(e, k, "required for %s", command)
		}
		return set
	}

	if required("database.url", c.Database.URL != "") {
		if err := checkDatabaseURL(string(c.Database.URL)); err != nil {
			e, k := key("database.url")
			p.add(e, k, "%v", err)
		}
	}
	if required("gitea.url", c.Gitea.URL != "") {
		if err := checkHTTPURL(c.Gitea.URL); err != nil {
			e, k := key("gitea.url")
			p.add(e, k, "%v", err)
		}
	}
	if required("gitea.webhook_secret", c.Gitea.WebhookSecret != "") && len(c.Gitea.WebhookSecret) < MinSecretLen {
		e, k := key("gitea.webhook_secret")
		p.add(e, k, "must be at least %d characters", MinSecretLen)
	}
	if required("projects", len(c.Projects) > 0) {
		seen := map[string]bool{}
		for _, pr := range c.Projects {
			e, k := key("projects")
			if err := CheckProject(pr); err != nil {
				p.add(e, k, "%v", err)
			} else if seen[strings.ToLower(pr)] {
				p.add(e, k, "%q is listed twice", pr)
			}
			seen[strings.ToLower(pr)] = true
		}
	}

	if _, port, err := net.SplitHostPort(c.Server.Addr); err != nil {
		e, k := key("server.addr")
		p.add(e, k, "must be host:port or :port, got %q", c.Server.Addr)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		e, k := key("server.addr")
		p.add(e, k, "port must be a number from 0 to 65535, got %q", port)
	}
	if n := c.Gitea.MaxConcurrentRequests; n < 0 || n > maxGiteaConcurrency {
		e, k := key("gitea.max_concurrent_requests")
		p.add(e, k, "must be between 1 and %d (0: the default %d), got %d", maxGiteaConcurrency, gitea.DefaultMaxConcurrent, n)
	}
	if c.Server.MaxBodyBytes < 1024 || c.Server.MaxBodyBytes > 1<<30 {
		e, k := key("server.max_body_bytes")
		p.add(e, k, "must be between 1024 and %d, got %d", 1<<30, c.Server.MaxBodyBytes)
	}
	if c.Server.MaxBufferedBytes < c.Server.MaxBodyBytes || c.Server.MaxBufferedBytes > 1<<34 {
		e, k := key("server.max_buffered_bytes")
		p.add(e, k, "must be at least server.max_body_bytes (%d) and at most %d, got %d", c.Server.MaxBodyBytes, int64(1)<<34, c.Server.MaxBufferedBytes)
	}
	if t := c.Server.MetricsToken; t != "" && len(t) < MinSecretLen {
		e, k := key("server.metrics_token")
		p.add(e, k, "must be at least %d characters when set, got %d", MinSecretLen, len(t))
	}
	if c.Server.PublicURL != "" {
		if err := checkPublicURL(c.Server.PublicURL); err != nil {
			e, k := key("server.public_url")
			p.add(e, k, "%v", err)
		}
	}
	checkSignIn(&p, c)
	if !slices.Contains([]string{"text", "json"}, c.Log.Format) {
		e, k := key("log.format")
		p.add(e, k, "must be text or json, got %q", c.Log.Format)
	}
	if _, err := ParseLogLevel(c.Log.Level); err != nil {
		e, k := key("log.level")
		p.add(e, k, "%v", err)
	}
	if c.Reconcile.Interval < MinReconcileInterval {
		e, k := key("reconcile.interval")
		p.add(e, k, "must be at least %s, got %s", MinReconcileInterval, c.Reconcile.Interval)
	}
	if d := c.Retention.Deliveries; d != 0 && d < MinDeliveryRetention {
		e, k := key("retention.deliveries")
		p.add(e, k, "must be 0 (keep forever) or at least %s, got %s", MinDeliveryRetention, d)
	}
	if c.Retention.Conversations < 0 {
		e, k := key("retention.conversations")
		p.add(e, k, "must be 0 (keep forever) or more, got %s", c.Retention.Conversations)
	}
	if c.Forecast.Trials < 1 || c.Forecast.Trials > MaxForecastTrials {
		e, k := key("forecast.trials")
		p.add(e, k, "must be between 1 and %d, got %d", MaxForecastTrials, c.Forecast.Trials)
	}
	if c.Forecast.MaxLag < MinMaxLag || c.Forecast.MaxLag > MaxMaxLag {
		e, k := key("forecast.max_lag")
		p.add(e, k, "must be between %s and %s, got %s", MinMaxLag, MaxMaxLag, c.Forecast.MaxLag)
	}
	if c.Lifecycle.StaleWorkingDays < 1 || c.Lifecycle.StaleWorkingDays > 365 {
		e, k := key("lifecycle.stale_working_days")
		p.add(e, k, "must be between 1 and 365, got %d", c.Lifecycle.StaleWorkingDays)
	}
	if c.Flow.WindowDays < 7 || c.Flow.WindowDays > MaxFlowWindowDays {
		e, k := key("flow.window_days")
		p.add(e, k, "must be between 7 and %d, got %d", MaxFlowWindowDays, c.Flow.WindowDays)
	}
	if c.Flow.SLEPercentile < 50 || c.Flow.SLEPercentile > 99 {
		e, k := key("flow.sle_percentile")
		p.add(e, k, "must be between 50 and 99, got %d", c.Flow.SLEPercentile)
	}

	checkCalendar(&p, "calendar", c.Calendar, true)
	for _, login := range sortedKeys(c.People) {
		checkCalendar(&p, "people."+login, c.People[login], false)
	}

	if _, err := parseClock(c.Standup.Time); err != nil {
		e, k := key("standup.time")
		p.add(e, k, "%v", err)
	}
	if c.Standup.TimeZone != "" {
		if _, err := time.LoadLocation(c.Standup.TimeZone); err != nil {
			e, k := key("standup.time_zone")
			p.add(e, k, "unknown time zone %q", c.Standup.TimeZone)
		}
	}
	checkStandupSinks(&p, c)

	checkTokens(&p, c.Tokens)
	checkModelRole(&p, "models.small", "COMMITEA_SMALL", c.Models.Small)
	checkModelRole(&p, "models.big", "COMMITEA_BIG", c.Models.Big)
	if c.Models.DailyRequests < 0 {
		e, k := key("models.daily_requests")
		p.add(e, k, "must not be negative")
	}
	if c.Models.DailyTokens < 0 {
		e, k := key("models.daily_tokens")
		p.add(e, k, "must not be negative")
	}
	if c.Models.DailyCostUSD < 0 {
		e, k := key("models.daily_cost_usd")
		p.add(e, k, "must not be negative")
	}
	if c.Models.Timeout < time.Second {
		e, k := key("models.timeout")
		p.add(e, k, "must be at least 1s, got %s", c.Models.Timeout)
	}
	if n := c.Models.AskMaxToolCalls; n < 0 || n > 10 {
		e, k := key("models.ask_max_tool_calls")
		p.add(e, k, "must be between 1 and 10 (0 for the default 4), got %d", n)
	}
	return p.err()
}

// CheckProject reports whether s is a repository named as "owner/repo".
// Gitea allows letters, digits, '-', '_' and '.' in both parts.
func CheckProject(s string) error {
	owner, repo, ok := strings.Cut(s, "/")
	if !ok || !isRepoNamePart(owner) || !isRepoNamePart(repo) {
		return fmt.Errorf("%q is not in owner/repo form", s)
	}
	return nil
}

func isRepoNamePart(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
		if !ok {
			return false
		}
	}
	return true
}

func checkHTTPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("must be an absolute http(s) URL")
	}
	return nil
}

// checkSignIn checks "Sign in with Gitea": the application's id and
// secret come together, and Gitea must be able to send browsers back to
// CommiTea's public URL.
func checkSignIn(p *problems, c Config) {
	key := func(k string) (string, string) { return envFor(k), k }
	g := c.Gitea
	if g.BrowserURL != "" {
		if err := checkHTTPURL(g.BrowserURL); err != nil {
			e, k := key("gitea.browser_url")
			p.add(e, k, "%v", err)
		}
	}
	switch {
	case g.OAuthClientID != "" && g.OAuthClientSecret == "":
		e, k := key("gitea.oauth_client_secret")
		p.add(e, k, "required with gitea.oauth_client_id (the OAuth2 application's secret)")
	case g.OAuthClientID == "" && g.OAuthClientSecret != "":
		e, k := key("gitea.oauth_client_id")
		p.add(e, k, "required with gitea.oauth_client_secret (the OAuth2 application's client id)")
	case g.OAuthClientID != "" && c.Server.PublicURL == "":
		e, k := key("server.public_url")
		p.add(e, k, "required for sign-in with Gitea: Gitea sends people back to server.public_url + /auth/callback")
	case g.OAuthClientID != "" && g.Token == "":
		e, k := key("gitea.token")
		p.add(e, k, "required for sign-in with Gitea: CommiTea reads each person's permissions with it")
	}
	s := c.Sessions
	if s.IdleTimeout < time.Minute {
		e, k := key("sessions.idle_timeout")
		p.add(e, k, "must be at least 1m, got %s", s.IdleTimeout)
	}
	if s.MaxAge < time.Minute {
		e, k := key("sessions.max_age")
		p.add(e, k, "must be at least 1m, got %s", s.MaxAge)
	}
	if s.PermissionRefresh < time.Second || s.PermissionRefresh > s.MaxAge {
		e, k := key("sessions.permission_refresh")
		p.add(e, k, "must be at least 1s and at most sessions.max_age, got %s", s.PermissionRefresh)
	}
}

// SignInEnabled reports whether "Sign in with Gitea" is configured.
func (c Config) SignInEnabled() bool { return c.Gitea.OAuthClientID != "" }

// checkPublicURL accepts an origin, with an optional trailing slash:
// CommiTea serves its pages, cookies and redirects from the root of its
// address, so a path (a proxy that strips a prefix) would break every link.
func checkPublicURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
		return errors.New("must be an absolute http(s) URL such as https://commitea.example.com")
	case u.User != nil:
		return errors.New("must not carry a user or password")
	case u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "#"):
		return errors.New("must not have a query or fragment")
	case u.Path != "" && u.Path != "/":
		return fmt.Errorf("must be an origin without a path (CommiTea serves from the root of its address), got path %q", u.Path)
	}
	return nil
}

// PublicBase is where CommiTea is reached, without a trailing slash: the
// configured public URL, else http:// and the listen address (a wildcard
// host shown as 127.0.0.1). Call it on a validated Config.
func (c Config) PublicBase(listen net.Addr) string {
	if c.Server.PublicURL != "" {
		return strings.TrimSuffix(c.Server.PublicURL, "/")
	}
	hostPort := c.Server.Addr
	if listen != nil {
		hostPort = listen.String()
	}
	if h, p, err := net.SplitHostPort(hostPort); err == nil && (h == "" || h == "::" || h == "0.0.0.0") {
		hostPort = net.JoinHostPort("127.0.0.1", p)
	}
	return "http://" + hostPort
}

func checkDatabaseURL(s string) error {
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			// The value may carry a password: never echo it.
			return errors.New("must be a postgres:// URL or a key=value connection string")
		}
		return nil
	}
	if !strings.Contains(s, "=") {
		return errors.New("must be a postgres:// URL or a key=value connection string")
	}
	return nil
}

func checkCalendar(p *problems, prefix string, c CalendarConfig, isDefault bool) {
	key := func(k string) (string, string) {
		if !isDefault {
			return "", prefix + "." + k
		}
		return envFor(prefix + "." + k), prefix + "." + k
	}
	if c.HoursPerDay < 0 || c.HoursPerDay > 24 || (isDefault && c.HoursPerDay == 0) {
		e, k := key("hours_per_day")
		p.add(e, k, "must be more than 0 and at most 24, got %g", c.HoursPerDay)
	}
	if isDefault && len(c.WorkingDays) == 0 {
		e, k := key("working_days")
		p.add(e, k, "must name at least one weekday")
	}
	if _, err := parseWeekdays(c.WorkingDays); err != nil {
		e, k := key("working_days")
		p.add(e, k, "%v", err)
	}
	if c.TimeZone != "" || isDefault {
		if _, err := time.LoadLocation(c.TimeZone); err != nil || c.TimeZone == "" {
			e, k := key("time_zone")
			p.add(e, k, "unknown time zone %q", c.TimeZone)
		}
	}
	for i, r := range c.TimeOff {
		if r.From.IsZero() || r.To.IsZero() {
			e, k := key("time_off")
			p.add(e, k, "range %d needs both from and to", i+1)
		} else if r.To.Before(r.From) {
			e, k := key("time_off")
			p.add(e, k, "range %d ends (%s) before it starts (%s)", i+1, r.To, r.From)
		}
	}
}

func checkTokens(p *problems, ts []TokenConfig) {
	e := envFor("tokens")
	names := map[string]bool{}
	secrets := map[Secret]bool{}
	for i, t := range ts {
		label := fmt.Sprintf("token %d", i+1)
		if t.Name == "" {
			p.add(e, "tokens", "%s has no name", label)
		} else {
			label = fmt.Sprintf("token %q", t.Name)
			if names[t.Name] {
				p.add(e, "tokens", "%s is defined twice", label)
			}
			names[t.Name] = true
		}
		if len(t.Scopes) == 0 {
			p.add(e, "tokens", "%s has no scopes (use read, write, approve)", label)
		}
		for _, s := range t.Scopes {
			if s != ScopeRead && s != ScopeWrite && s != ScopeApprove {
				p.add(e, "tokens", "%s has unknown scope %q (use read, write, approve)", label, s)
			}
		}
		if len(t.Secret) < MinSecretLen {
			p.add(e, "tokens", "%s secret must be at least %d characters", label, MinSecretLen)
		} else if secrets[t.Secret] {
			p.add(e, "tokens", "%s reuses another token's secret", label)
		}
		secrets[t.Secret] = true
	}
}

func checkModelRole(p *problems, key, envPrefix string, r ModelRoleConfig) {
	if r.Model != "" {
		if err := checkModelName(r.Model); err != nil {
			p.add(envPrefix+"_MODEL", key+".model", "%v", err)
		}
	} else if r.BaseURL != "" || r.Fallback != "" || r.APIKey != "" {
		p.add(envPrefix+"_MODEL", key+".model", "required when %s has other settings", key)
	}
	if r.Fallback != "" {
		if err := checkModelName(r.Fallback); err != nil {
			p.add(envPrefix+"_FALLBACK", key+".fallback", "%v", err)
		}
	} else if r.FallbackBaseURL != "" || r.FallbackAPIKey != "" {
		p.add(envPrefix+"_FALLBACK", key+".fallback", "required when fallback_base_url or fallback_api_key is set")
	}
	for _, u := range []struct{ suffix, value string }{{"base_url", r.BaseURL}, {"fallback_base_url", r.FallbackBaseURL}} {
		if u.value == "" {
			continue
		}
		if err := checkHTTPURL(u.value); err != nil {
			p.add(envPrefix+"_"+strings.ToUpper(u.suffix), key+"."+u.suffix, "%v", err)
		}
	}
	for _, n := range []struct {
		suffix string
		value  float64
	}{
		{"daily_requests", float64(r.DailyRequests)}, {"daily_tokens", float64(r.DailyTokens)}, {"daily_cost_usd", r.DailyCostUSD},
		{"input_usd_per_mtok", r.InputUSDPerMTok}, {"output_usd_per_mtok", r.OutputUSDPerMTok},
		{"fallback_input_usd_per_mtok", r.FallbackInputUSDPerMTok}, {"fallback_output_usd_per_mtok", r.FallbackOutputUSDPerMTok},
	} {
		if n.value < 0 {
			p.add(envPrefix+"_"+strings.ToUpper(n.suffix), key+"."+n.suffix, "must not be negative")
		}
	}
}

func checkModelName(s string) error {
	provider, model, ok := strings.Cut(s, ":")
	if !ok || strings.TrimSpace(provider) == "" || strings.TrimSpace(model) == "" {
		return fmt.Errorf("%q is not in provider:model form", s)
	}
	if _, err := models.ParseEndpoint(s); err != nil {
		return fmt.Errorf("%q: unknown provider %q (use openai, anthropic or ollama)", s, provider)
	}
	return nil
}

// HasScope reports whether the token grants scope.
func (t TokenConfig) HasScope(scope string) bool { return slices.Contains(t.Scopes, scope) }

// StandupLocation is the standup's time zone: its own, else the default
// calendar's. Call it on a validated Config.
func (c Config) StandupLocation() (*time.Location, error) {
	tz := c.Standup.TimeZone
	if tz == "" {
		tz = c.Calendar.TimeZone
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("standup time zone: %w", err)
	}
	return loc, nil
}

// StandupClock returns the standup's local time as hours and minutes.
func (c Config) StandupClock() (hour, minute int, err error) {
	d, err := parseClock(c.Standup.Time)
	if err != nil {
		return 0, 0, err
	}
	return int(d / time.Hour), int(d % time.Hour / time.Minute), nil
}

func parseClock(s string) (time.Duration, error) {
	t, err := time.Parse("15:04", s)
	if err != nil {
		return 0, fmt.Errorf("must be HH:MM (24-hour), got %q", s)
	}
	return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute, nil
}

// ParseLogLevel reads log.level: debug, info (also empty), warn or error.
func ParseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info", "":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("must be debug, info, warn or error, got %q", s)
}

func parseWeekdays(names []string) ([7]bool, error) {
	var days [7]bool
	for _, n := range names {
		d, ok := weekdayByName(n)
		if !ok {
			return days, fmt.Errorf("unknown weekday %q (use mon..sun)", n)
		}
		days[d] = true
	}
	return days, nil
}

func weekdayByName(n string) (time.Weekday, bool) {
	n = strings.ToLower(strings.TrimSpace(n))
	for d := time.Sunday; d <= time.Saturday; d++ {
		full := strings.ToLower(d.String())
		if n == full || n == full[:3] {
			return d, true
		}
	}
	return 0, false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// DefaultCalendar is the engine calendar of everyone without their own entry.
// Call it on a validated Config.
func (c Config) DefaultCalendar() (scheduler.Calendar, error) {
	return c.calendar(CalendarConfig{})
}

// CalendarFor is the engine calendar of one Gitea login: the default
// calendar with the person's own settings laid over it.
func (c Config) CalendarFor(login string) (scheduler.Calendar, error) {
	return c.calendar(c.People[login])
}

// ConfiguredPeople lists everyone with a calendar entry, sorted by login.
func (c Config) ConfiguredPeople() ([]scheduler.Person, error) {
	var out []scheduler.Person
	for _, login := range sortedKeys(c.People) {
		cal, err := c.CalendarFor(login)
		if err != nil {
			return nil, fmt.Errorf("calendar of %s: %w", login, err)
		}
		out = append(out, scheduler.Person{Login: login, Calendar: cal})
	}
	return out, nil
}

func (c Config) calendar(person CalendarConfig) (scheduler.Calendar, error) {
	merged := c.Calendar
	if person.HoursPerDay > 0 {
		merged.HoursPerDay = person.HoursPerDay
	}
	if len(person.WorkingDays) > 0 {
		merged.WorkingDays = person.WorkingDays
	}
	if person.TimeZone != "" {
		merged.TimeZone = person.TimeZone
	}
	if len(person.Holidays) > 0 {
		merged.Holidays = person.Holidays
	}
	merged.TimeOff = person.TimeOff

	loc, err := time.LoadLocation(merged.TimeZone)
	if err != nil {
		return scheduler.Calendar{}, fmt.Errorf("time zone: %w", err)
	}
	days, err := parseWeekdays(merged.WorkingDays)
	if err != nil {
		return scheduler.Calendar{}, err
	}
	cal := scheduler.Calendar{HoursPerDay: merged.HoursPerDay, WorkingDays: days, Location: loc}
	for _, h := range merged.Holidays {
		cal.Holidays = append(cal.Holidays, h.In(loc))
	}
	for _, r := range merged.TimeOff {
		cal.TimeOff = append(cal.TimeOff, scheduler.DateRange{From: r.From.In(loc), To: r.To.In(loc)})
	}
	return cal, nil
}

// Date is a calendar date without a time of day. In TOML it may be written
// as a local date (2026-12-24) or as a string ("2026-12-24").
type Date struct {
	t time.Time // midnight UTC
}

// ParseDate reads a YYYY-MM-DD date.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, strings.TrimSpace(s))
	if err != nil {
		return Date{}, fmt.Errorf("not a date in YYYY-MM-DD form: %q", s)
	}
	return Date{t}, nil
}

// IsZero reports whether the date is unset.
func (d Date) IsZero() bool { return d.t.IsZero() }

// Before reports whether d is an earlier date than e.
func (d Date) Before(e Date) bool { return d.t.Before(e.t) }

// UnmarshalTOML accepts a TOML local date or a YYYY-MM-DD string.
func (d *Date) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case time.Time:
		*d = Date{time.Date(v.Year(), v.Month(), v.Day(), 0, 0, 0, 0, time.UTC)}
		return nil
	case string:
		p, err := ParseDate(v)
		if err != nil {
			return err
		}
		*d = p
		return nil
	}
	return fmt.Errorf("not a date: %v", v)
}

// MarshalText writes the date as YYYY-MM-DD.
func (d Date) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

func (d Date) String() string {
	if d.IsZero() {
		return ""
	}
	return d.t.Format(time.DateOnly)
}

// In is local midnight of the date in loc.
func (d Date) In(loc *time.Location) time.Time {
	return time.Date(d.t.Year(), d.t.Month(), d.t.Day(), 0, 0, 0, 0, loc)
}

// Secret is a configuration value that must never be printed or logged:
// every formatting path (fmt, slog, TOML, JSON) shows "[redacted]", or ""
// when unset. Use Reveal where the value is needed.
type Secret string

const redacted = "[redacted]"

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return string(s) }

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString keeps %#v from printing the value.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// LogValue keeps slog from printing the value.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText keeps encoders from writing the value.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText stores the value as given; it exists so that decoders pair
// with MarshalText.
func (s *Secret) UnmarshalText(b []byte) error { *s = Secret(b); return nil }

// String renders the configuration as TOML with every secret redacted, so
// it is safe to print.
func (c Config) String() string {
	var b strings.Builder
	if err := toml.NewEncoder(&b).Encode(c); err != nil {
		return fmt.Sprintf("config: %v", err)
	}
	return b.String()
}

// GoString keeps %#v as safe as %v.
func (c Config) GoString() string { return c.String() }

// LogValue is the configuration as logged at start-up: what an operator
// needs to recognise the deployment, with secrets shown only as set or not.
func (c Config) LogValue() slog.Value {
	isSet := func(s Secret) string {
		if s == "" {
			return "unset"
		}
		return "set"
	}
	return slog.GroupValue(
		slog.String("database", RedactDatabaseURL(string(c.Database.URL))),
		slog.String("gitea_url", c.Gitea.URL),
		slog.String("gitea_token", isSet(c.Gitea.Token)),
		slog.String("webhook_secret", isSet(c.Gitea.WebhookSecret)),
		slog.Any("projects", c.Projects),
		slog.String("addr", c.Server.Addr),
		slog.String("metrics_token", isSet(c.Server.MetricsToken)),
		slog.String("public_url", c.Server.PublicURL),
		slog.Bool("sign_in", c.SignInEnabled()),
		slog.Bool("token_links", c.Dashboard.TokenLinks),
		slog.Duration("reconcile_interval", c.Reconcile.Interval),
		slog.Int("forecast_trials", c.Forecast.Trials),
		slog.Duration("forecast_max_lag", c.Forecast.MaxLag),
		slog.Int("tokens", len(c.Tokens)),
		slog.String("small_model", c.Models.Small.Model),
		slog.String("big_model", c.Models.Big.Model),
	)
}

// RedactDatabaseURL keeps the host and database name of a URL-form
// connection string and drops its password; a key=value string is shown
// only as set.
func RedactDatabaseURL(s string) string {
	if s == "" {
		return "unset"
	}
	u, err := url.Parse(s)
	if err != nil || !strings.Contains(s, "://") {
		return "set"
	}
	u.RawQuery = "" // may hold password=…
	return u.Redacted()
}
