package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/cmd/commitea/config/configtest"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const fileConfig = `
projects = ["file/one"]

[database]
url = "postgres://file@127.0.0.1/file"

[gitea]
url = "https://gitea.example.com"
token = "file-token-0123456789"
webhook_secret = "file-webhook-secret-0123"

[server]
addr = "127.0.0.1:9090"
max_body_bytes = 2048

[log]
format = "json"
level = "debug"

[reconcile]
interval = "15m"

[retention]
deliveries = "168h"
conversations = "0s"

[forecast]
trials = 500

[lifecycle]
stale_working_days = 5

[flow]
window_days = 60
sle_percentile = 90

[calendar]
hours_per_day = 7
working_days = ["mon", "tue", "wed", "thu"]
time_zone = "Europe/Berlin"
holidays = [2026-12-25, "2026-12-26"]

[people.alice]
hours_per_day = 4
time_off = [{ from = 2026-12-28, to = "2027-01-01" }]

[people.bob]
time_zone = "America/New_York"
holidays = [2026-11-26]
working_days = ["sunday", "Mon"]

[standup]
time = "10:30"
time_zone = "Asia/Tokyo"

[[tokens]]
name = "planner"
scopes = ["read", "write"]
secret = "planner-secret-0123456789"

[models]
daily_requests = 10
daily_tokens = 20
daily_cost_usd = 1.5

[models.small]
model = "openai:gemma-3-4b-it"
base_url = "http://127.0.0.1:11434/v1"

[models.big]
model = "openai:gpt-4.1"
fallback = "openai:gpt-4.1-mini"
api_key = "sk-file-key"
`

func TestLoadConfigFileOnly(t *testing.T) {
	path := writeFile(t, "c.toml", fileConfig)
	cfg, err := Load(path, configtest.Getenv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("valid file rejected: %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"projects", cfg.Projects, []string{"file/one"}},
		{"database.url", cfg.Database.URL.Reveal(), "postgres://file@127.0.0.1/file"},
		{"gitea.url", cfg.Gitea.URL, "https://gitea.example.com"},
		{"gitea.token", cfg.Gitea.Token.Reveal(), "file-token-0123456789"},
		{"gitea.webhook_secret", cfg.Gitea.WebhookSecret.Reveal(), "file-webhook-secret-0123"},
		{"server.addr", cfg.Server.Addr, "127.0.0.1:9090"},
		{"server.max_body_bytes", cfg.Server.MaxBodyBytes, int64(2048)},
		{"log", cfg.Log, LogConfig{Format: "json", Level: "debug"}},
		{"reconcile.interval", cfg.Reconcile.Interval, 15 * time.Minute},
		{"retention", cfg.Retention, RetentionConfig{Deliveries: 7 * 24 * time.Hour, Conversations: 0}},
		{"forecast.trials", cfg.Forecast.Trials, 500},
		{"lifecycle.stale_working_days", cfg.Lifecycle.StaleWorkingDays, 5},
		{"flow", cfg.Flow, FlowConfig{WindowDays: 60, SLEPercentile: 90}},
		{"calendar.hours_per_day", cfg.Calendar.HoursPerDay, 7.0},
		{"calendar.holidays", fmt.Sprint(cfg.Calendar.Holidays), "[2026-12-25 2026-12-26]"},
		{"standup", cfg.Standup, StandupConfig{Time: "10:30", TimeZone: "Asia/Tokyo"}},
		{"tokens", len(cfg.Tokens), 1},
		{"tokens[0].scopes", cfg.Tokens[0].Scopes, []string{"read", "write"}},
		{"tokens[0].secret", cfg.Tokens[0].Secret.Reveal(), "planner-secret-0123456789"},
		{"models.small.base_url", cfg.Models.Small.BaseURL, "http://127.0.0.1:11434/v1"},
		{"models.big.fallback", cfg.Models.Big.Fallback, "openai:gpt-4.1-mini"},
		{"models.big.api_key", cfg.Models.Big.APIKey.Reveal(), "sk-file-key"},
		{"models budgets", []any{cfg.Models.DailyRequests, cfg.Models.DailyTokens, cfg.Models.DailyCostUSD}, []any{10, 20, 1.5}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

func TestLoadConfigEnvOnly(t *testing.T) {
	env := configtest.ValidEnv()
	env["COMMITEA_ADDR"] = ":9999"
	env["COMMITEA_RECONCILE_INTERVAL"] = "2m"
	env["COMMITEA_METRICS_TOKEN"] = "metrics-token-0123456789"
	env["COMMITEA_RETENTION_DELIVERIES"] = "48h"
	env["COMMITEA_RETENTION_CONVERSATIONS"] = "720h"
	env["COMMITEA_FORECAST_TRIALS"] = "100000"
	env["COMMITEA_STALE_WORKING_DAYS"] = "4"
	env["COMMITEA_MAX_BODY_BYTES"] = "4096"
	env["COMMITEA_MAX_BUFFERED_BYTES"] = "65536"
	env["GITEA_MAX_CONCURRENT_REQUESTS"] = "3"
	env["COMMITEA_LOG_FORMAT"] = "json"
	env["COMMITEA_LOG_LEVEL"] = "warn"
	env["COMMITEA_CALENDAR_HOURS_PER_DAY"] = "5.5"
	env["COMMITEA_CALENDAR_WORKING_DAYS"] = "mon,wed,fri"
	env["COMMITEA_CALENDAR_TIME_ZONE"] = "Europe/Paris"
	env["COMMITEA_CALENDAR_HOLIDAYS"] = "2026-07-14, 2026-08-15"
	env["COMMITEA_STANDUP_TIME"] = "08:15"
	env["COMMITEA_STANDUP_TIME_ZONE"] = "Europe/London"
	env["COMMITEA_TOKENS"] = "planner:read+write:s3cr3t-s3cr3t-s3cr3t, pm:read+write+approve:with:colons:0123456789"
	env["COMMITEA_SMALL_MODEL"] = "openai:gemma-3-4b-it"
	env["COMMITEA_SMALL_BASE_URL"] = "http://llm:8000/v1"
	env["COMMITEA_SMALL_FALLBACK"] = "ollama:qwen3:4b"
	env["COMMITEA_BIG_MODEL"] = "anthropic:claude"
	env["COMMITEA_BIG_API_KEY"] = "sk-env-key"
	env["COMMITEA_MODEL_DAILY_REQUESTS"] = "0"
	env["COMMITEA_MODEL_DAILY_TOKENS"] = "123"
	env["COMMITEA_MODEL_DAILY_COST_USD"] = "2.25"
	env["COMMITEA_MODEL_TIMEOUT"] = "45s"
	env["COMMITEA_SMALL_FALLBACK_BASE_URL"] = "http://ollama:11434"
	env["COMMITEA_BIG_FALLBACK"] = "openai:gpt-4.1-mini"
	env["COMMITEA_BIG_FALLBACK_API_KEY"] = "sk-fallback-key"
	env["COMMITEA_BIG_DAILY_REQUESTS"] = "50"
	env["COMMITEA_BIG_DAILY_TOKENS"] = "90000"
	env["COMMITEA_BIG_DAILY_COST_USD"] = "1.5"
	env["COMMITEA_BIG_INPUT_USD_PER_MTOK"] = "3"
	env["COMMITEA_BIG_OUTPUT_USD_PER_MTOK"] = "15"

	cfg, err := Load("", configtest.Getenv(env))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("valid env rejected: %v", err)
	}
	want := Default()
	want.Projects = []string{"acme/widgets", "acme/gadgets"}
	want.Database.URL = Secret(env["DATABASE_URL"])
	want.Gitea = GiteaConfig{URL: "http://gitea:3000", Token: "gitea-token-abcdef0123456789", WebhookSecret: "webhook-secret-0123456789", MaxConcurrentRequests: 3}
	want.Server = ServerConfig{Addr: ":9999", MaxBodyBytes: 4096, MaxBufferedBytes: 65536, MetricsToken: "metrics-token-0123456789"}
	want.Log = LogConfig{Format: "json", Level: "warn"}
	want.Reconcile.Interval = 2 * time.Minute
	want.Retention = RetentionConfig{Deliveries: 48 * time.Hour, Conversations: 720 * time.Hour}
	want.Forecast.Trials = 100000
	want.Lifecycle.StaleWorkingDays = 4
	want.Calendar = CalendarConfig{HoursPerDay: 5.5, WorkingDays: []string{"mon", "wed", "fri"}, TimeZone: "Europe/Paris",
		Holidays: []Date{mustDate(t, "2026-07-14"), mustDate(t, "2026-08-15")}}
	want.Standup = StandupConfig{Time: "08:15", TimeZone: "Europe/London"}
	want.Tokens = []TokenConfig{
		{Name: "planner", Scopes: []string{"read", "write"}, Secret: "s3cr3t-s3cr3t-s3cr3t"},
		{Name: "pm", Scopes: []string{"read", "write", "approve"}, Secret: "with:colons:0123456789"},
	}
	want.Models = ModelsConfig{
		Small: ModelRoleConfig{Model: "openai:gemma-3-4b-it", BaseURL: "http://llm:8000/v1", Fallback: "ollama:qwen3:4b", FallbackBaseURL: "http://ollama:11434"},
		Big: ModelRoleConfig{Model: "anthropic:claude", APIKey: "sk-env-key", Fallback: "openai:gpt-4.1-mini", FallbackAPIKey: "sk-fallback-key",
			DailyRequests: 50, DailyTokens: 90000, DailyCostUSD: 1.5, InputUSDPerMTok: 3, OutputUSDPerMTok: 15},
		DailyRequests: 0, DailyTokens: 123, DailyCostUSD: 2.25, Timeout: 45 * time.Second,
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("env config:\n got %#v\nwant %#v", fmt.Sprintf("%+v", cfg.Tokens), fmt.Sprintf("%+v", want.Tokens))
		t.Errorf("got  %s\nwant %s", cfg, want) // redacted, so only the non-secret part helps
	}
}

func mustDate(t *testing.T, s string) Date {
	t.Helper()
	d, err := ParseDate(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestLoadConfigEnvOverridesFile(t *testing.T) {
	path := writeFile(t, "c.toml", fileConfig)
	env := map[string]string{
		"GITEA_URL":                "http://override:3000",
		"GITEA_TOKEN":              "env-token-0123456789",
		"COMMITEA_PROJECTS":        "env/one,env/two",
		"COMMITEA_TOKENS":          "ci:read:ci-secret-0123456789",
		"COMMITEA_SMALL_MODEL":     "ollama:gemma3:4b",
		"COMMITEA_LOG_FORMAT":      "text",
		"COMMITEA_FORECAST_TRIALS": "", // empty counts as unset
	}
	cfg, err := Load(path, configtest.Getenv(env))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Gitea.URL != "http://override:3000" || cfg.Gitea.Token.Reveal() != "env-token-0123456789" {
		t.Errorf("gitea not overridden: %+v", cfg.Gitea)
	}
	if cfg.Gitea.WebhookSecret.Reveal() != "file-webhook-secret-0123" {
		t.Errorf("file webhook secret lost")
	}
	if !reflect.DeepEqual(cfg.Projects, []string{"env/one", "env/two"}) {
		t.Errorf("projects = %v", cfg.Projects)
	}
	if len(cfg.Tokens) != 1 || cfg.Tokens[0].Name != "ci" {
		t.Errorf("env tokens must replace file tokens, got %d", len(cfg.Tokens))
	}
	if cfg.Models.Small.Model != "ollama:gemma3:4b" || cfg.Models.Small.BaseURL != "http://127.0.0.1:11434/v1" {
		t.Errorf("models.small = %+v", cfg.Models.Small)
	}
	if cfg.Log.Format != "text" || cfg.Log.Level != "debug" {
		t.Errorf("log = %+v", cfg.Log)
	}
	if cfg.Forecast.Trials != 500 {
		t.Errorf("empty env must not override: trials = %d", cfg.Forecast.Trials)
	}
}

func TestLoadConfigSecretFromFile(t *testing.T) {
	tokenFile := writeFile(t, "token", "file-held-token-0123\n")
	env := configtest.ValidEnv()
	delete(env, "GITEA_TOKEN")
	env["GITEA_TOKEN_FILE"] = tokenFile
	cfg, err := Load("", configtest.Getenv(env))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Gitea.Token.Reveal(); got != "file-held-token-0123" {
		t.Errorf("token = %q", got)
	}

	env["GITEA_TOKEN"] = "also-set"
	env["COMMITEA_WEBHOOK_SECRET_FILE"] = filepath.Join(t.TempDir(), "missing")
	delete(env, "COMMITEA_WEBHOOK_SECRET")
	_, err = Load("", configtest.Getenv(env))
	for _, want := range []string{
		"config: GITEA_TOKEN (gitea.token): both GITEA_TOKEN and GITEA_TOKEN_FILE are set",
		"config: COMMITEA_WEBHOOK_SECRET (gitea.webhook_secret): read COMMITEA_WEBHOOK_SECRET_FILE",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v\nmissing %q", err, want)
		}
	}
}

func TestLoadConfigReportsEveryUnreadableValue(t *testing.T) {
	path := writeFile(t, "c.toml", "[gitea]\nurl = \"http://x\"\ntokn = \"typo\"\n[nonsense]\nx = 1\n")
	env := map[string]string{
		"COMMITEA_FORECAST_TRIALS":        "many",
		"COMMITEA_RECONCILE_INTERVAL":     "often",
		"COMMITEA_RETENTION_DELIVERIES":   "30d",
		"COMMITEA_MAX_BODY_BYTES":         "10MiB",
		"COMMITEA_STALE_WORKING_DAYS":     "3d",
		"COMMITEA_CALENDAR_HOURS_PER_DAY": "six",
		"COMMITEA_CALENDAR_HOLIDAYS":      "2026-12-25,Christmas",
		"COMMITEA_TOKENS":                 "no-colons-here",
		"COMMITEA_MODEL_DAILY_COST_USD":   "$5",
	}
	_, err := Load(path, configtest.Getenv(env))
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{
		`config: gitea.tokn: unknown key`,
		`config: nonsense.x: unknown key`,
		`config: COMMITEA_FORECAST_TRIALS (forecast.trials): not an integer`,
		`config: COMMITEA_RECONCILE_INTERVAL (reconcile.interval): not a duration`,
		`config: COMMITEA_RETENTION_DELIVERIES (retention.deliveries): not a duration`,
		`config: COMMITEA_MAX_BODY_BYTES (server.max_body_bytes): not an integer`,
		`config: COMMITEA_STALE_WORKING_DAYS (lifecycle.stale_working_days): not an integer`,
		`config: COMMITEA_CALENDAR_HOURS_PER_DAY (calendar.hours_per_day): not a number`,
		`config: COMMITEA_CALENDAR_HOLIDAYS (calendar.holidays): not a date`,
		`config: COMMITEA_TOKENS (tokens): token 1: want name:scopes:secret`,
		`config: COMMITEA_MODEL_DAILY_COST_USD (models.daily_cost_usd): not a number`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error misses %q; got:\n%v", want, err)
		}
	}
}

func TestLoadConfigFileErrors(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "absent.toml"), configtest.Getenv(nil)); err == nil || !strings.Contains(err.Error(), "absent.toml") {
		t.Errorf("missing file: %v", err)
	}
	path := writeFile(t, "bad.toml", "[gitea\nurl=")
	if _, err := Load(path, configtest.Getenv(nil)); err == nil || !strings.Contains(err.Error(), "parse") {
		t.Errorf("bad syntax: %v", err)
	}
	path = writeFile(t, "types.toml", "[forecast]\ntrials = \"lots\"\n")
	if _, err := Load(path, configtest.Getenv(nil)); err == nil || !strings.Contains(err.Error(), "trials") {
		t.Errorf("wrong type: %v", err)
	}
}

func TestValidateNamesEveryInvalidKey(t *testing.T) {
	base := func() Config {
		cfg, err := Load("", configtest.Getenv(configtest.ValidEnv()))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	if err := base().Validate(); err != nil {
		t.Fatalf("base config invalid: %v", err)
	}
	cases := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"database url missing", func(c *Config) { c.Database.URL = "" }, "config: DATABASE_URL (database.url): required for serve"},
		{"database url scheme", func(c *Config) { c.Database.URL = "mysql://u:p@h/db" }, "config: DATABASE_URL (database.url): must be a postgres:// URL"},
		{"database url garbage", func(c *Config) { c.Database.URL = "nonsense" }, "config: DATABASE_URL (database.url): must be a postgres:// URL"},
		{"gitea url missing", func(c *Config) { c.Gitea.URL = "" }, "config: GITEA_URL (gitea.url): required for serve"},
		{"gitea url relative", func(c *Config) { c.Gitea.URL = "gitea:3000" }, "config: GITEA_URL (gitea.url): must be an absolute http(s) URL"},
		{"gitea url ftp", func(c *Config) { c.Gitea.URL = "ftp://gitea" }, "config: GITEA_URL (gitea.url): must be an absolute http(s) URL"},
		{"webhook secret missing", func(c *Config) { c.Gitea.WebhookSecret = "" }, "config: COMMITEA_WEBHOOK_SECRET (gitea.webhook_secret): required for serve"},
		{"webhook secret short", func(c *Config) { c.Gitea.WebhookSecret = "short" }, "config: COMMITEA_WEBHOOK_SECRET (gitea.webhook_secret): must be at least 16 characters"},
		{"projects missing", func(c *Config) { c.Projects = nil }, "config: COMMITEA_PROJECTS (projects): required for serve"},
		{"project form", func(c *Config) { c.Projects = []string{"widgets"} }, `config: COMMITEA_PROJECTS (projects): "widgets" is not in owner/repo form`},
		{"project three parts", func(c *Config) { c.Projects = []string{"a/b/c"} }, `config: COMMITEA_PROJECTS (projects): "a/b/c" is not in owner/repo form`},
		{"project twice", func(c *Config) { c.Projects = []string{"a/b", "A/B"} }, `config: COMMITEA_PROJECTS (projects): "A/B" is listed twice`},
		{"addr", func(c *Config) { c.Server.Addr = "8080" }, "config: COMMITEA_ADDR (server.addr): must be host:port"},
		{"addr port", func(c *Config) { c.Server.Addr = ":http-alt" }, "config: COMMITEA_ADDR (server.addr): port must be a number"},
		{"max body", func(c *Config) { c.Server.MaxBodyBytes = 10 }, "config: COMMITEA_MAX_BODY_BYTES (server.max_body_bytes): must be between"},
		{"gitea concurrency", func(c *Config) { c.Gitea.MaxConcurrentRequests = 65 }, "config: GITEA_MAX_CONCURRENT_REQUESTS (gitea.max_concurrent_requests): must be between 1 and 64 (0: the default 8), got 65"},
		{"max buffered", func(c *Config) { c.Server.MaxBufferedBytes = c.Server.MaxBodyBytes - 1 }, "config: COMMITEA_MAX_BUFFERED_BYTES (server.max_buffered_bytes): must be at least server.max_body_bytes"},
		{"log format", func(c *Config) { c.Log.Format = "xml" }, "config: COMMITEA_LOG_FORMAT (log.format): must be text or json"},
		{"log level", func(c *Config) { c.Log.Level = "loud" }, "config: COMMITEA_LOG_LEVEL (log.level): must be debug, info, warn or error"},
		{"reconcile", func(c *Config) { c.Reconcile.Interval = time.Second }, "config: COMMITEA_RECONCILE_INTERVAL (reconcile.interval): must be at least 1m0s"},
		{"delivery retention", func(c *Config) { c.Retention.Deliveries = time.Hour }, "config: COMMITEA_RETENTION_DELIVERIES (retention.deliveries): must be 0 (keep forever) or at least 24h0m0s"},
		{"conversation retention", func(c *Config) { c.Retention.Conversations = -time.Hour }, "config: COMMITEA_RETENTION_CONVERSATIONS (retention.conversations): must be 0 (keep forever) or more"},
		{"metrics token", func(c *Config) { c.Server.MetricsToken = "short" }, "config: COMMITEA_METRICS_TOKEN (server.metrics_token): must be at least 16 characters when set, got 5"},
		{"trials zero", func(c *Config) { c.Forecast.Trials = 0 }, "config: COMMITEA_FORECAST_TRIALS (forecast.trials): must be between 1 and 100000"},
		{"trials too many", func(c *Config) { c.Forecast.Trials = 100001 }, "config: COMMITEA_FORECAST_TRIALS (forecast.trials): must be between 1 and 100000"},
		{"stale", func(c *Config) { c.Lifecycle.StaleWorkingDays = 0 }, "config: COMMITEA_STALE_WORKING_DAYS (lifecycle.stale_working_days): must be between 1 and 365"},
		{"flow window", func(c *Config) { c.Flow.WindowDays = 3 }, "config: COMMITEA_FLOW_WINDOW_DAYS (flow.window_days): must be between 7 and 730"},
		{"sle", func(c *Config) { c.Flow.SLEPercentile = 100 }, "config: COMMITEA_FLOW_SLE_PERCENTILE (flow.sle_percentile): must be between 50 and 99"},
		{"hours", func(c *Config) { c.Calendar.HoursPerDay = 25 }, "config: COMMITEA_CALENDAR_HOURS_PER_DAY (calendar.hours_per_day): must be more than 0"},
		{"working days empty", func(c *Config) { c.Calendar.WorkingDays = nil }, "config: COMMITEA_CALENDAR_WORKING_DAYS (calendar.working_days): must name at least one weekday"},
		{"working day name", func(c *Config) { c.Calendar.WorkingDays = []string{"mon", "funday"} }, `config: COMMITEA_CALENDAR_WORKING_DAYS (calendar.working_days): unknown weekday "funday"`},
		{"time zone", func(c *Config) { c.Calendar.TimeZone = "Mars/Olympus" }, `config: COMMITEA_CALENDAR_TIME_ZONE (calendar.time_zone): unknown time zone "Mars/Olympus"`},
		{"default time off", func(c *Config) {
			c.Calendar.TimeOff = []DateRangeConfig{{From: mustDate(t, "2026-02-02"), To: mustDate(t, "2026-02-01")}}
		}, "config: calendar.time_off: range 1 ends (2026-02-01) before it starts (2026-02-02)"},
		{"person hours", func(c *Config) { c.People = map[string]CalendarConfig{"alice": {HoursPerDay: -1}} }, "config: people.alice.hours_per_day: must be more than 0"},
		{"person day", func(c *Config) { c.People = map[string]CalendarConfig{"bob": {WorkingDays: []string{"xyz"}}} }, `config: people.bob.working_days: unknown weekday "xyz"`},
		{"person zone", func(c *Config) { c.People = map[string]CalendarConfig{"bob": {TimeZone: "Nowhere"}} }, `config: people.bob.time_zone: unknown time zone "Nowhere"`},
		{"person time off", func(c *Config) {
			c.People = map[string]CalendarConfig{"carol": {TimeOff: []DateRangeConfig{{From: mustDate(t, "2026-02-02")}}}}
		}, "config: people.carol.time_off: range 1 needs both from and to"},
		{"standup time", func(c *Config) { c.Standup.Time = "9am" }, `config: COMMITEA_STANDUP_TIME (standup.time): must be HH:MM (24-hour), got "9am"`},
		{"standup zone", func(c *Config) { c.Standup.TimeZone = "Atlantis" }, `config: COMMITEA_STANDUP_TIME_ZONE (standup.time_zone): unknown time zone "Atlantis"`},
		{"token name", func(c *Config) { c.Tokens = []TokenConfig{{Scopes: []string{"read"}, Secret: "0123456789abcdef"}} }, "config: COMMITEA_TOKENS (tokens): token 1 has no name"},
		{"token scope", func(c *Config) {
			c.Tokens = []TokenConfig{{Name: "x", Scopes: []string{"admin"}, Secret: "0123456789abcdef"}}
		}, `config: COMMITEA_TOKENS (tokens): token "x" has unknown scope "admin"`},
		{"token no scope", func(c *Config) { c.Tokens = []TokenConfig{{Name: "x", Secret: "0123456789abcdef"}} }, `config: COMMITEA_TOKENS (tokens): token "x" has no scopes`},
		{"token secret", func(c *Config) { c.Tokens = []TokenConfig{{Name: "x", Scopes: []string{"read"}, Secret: "short"}} }, `config: COMMITEA_TOKENS (tokens): token "x" secret must be at least 16 characters`},
		{"token twice", func(c *Config) {
			c.Tokens = []TokenConfig{{Name: "x", Scopes: []string{"read"}, Secret: "0123456789abcdef"}, {Name: "x", Scopes: []string{"read"}, Secret: "0123456789abcdef"}}
		}, `config: COMMITEA_TOKENS (tokens): token "x" is defined twice`},
		{"token secret reused", func(c *Config) {
			c.Tokens = []TokenConfig{{Name: "x", Scopes: []string{"read"}, Secret: "0123456789abcdef"}, {Name: "y", Scopes: []string{"read"}, Secret: "0123456789abcdef"}}
		}, `config: COMMITEA_TOKENS (tokens): token "y" reuses another token's secret`},
		{"small model form", func(c *Config) { c.Models.Small.Model = "gemma" }, `config: COMMITEA_SMALL_MODEL (models.small.model): "gemma" is not in provider:model form`},
		{"small model needed", func(c *Config) { c.Models.Small.BaseURL = "http://llm" }, "config: COMMITEA_SMALL_MODEL (models.small.model): required when models.small has other settings"},
		{"small base url", func(c *Config) { c.Models.Small = ModelRoleConfig{Model: "a:b", BaseURL: "llm:8000"} }, "config: COMMITEA_SMALL_BASE_URL (models.small.base_url): must be an absolute http(s) URL"},
		{"big fallback", func(c *Config) { c.Models.Big = ModelRoleConfig{Model: "a:b", Fallback: ":x"} }, `config: COMMITEA_BIG_FALLBACK (models.big.fallback): ":x" is not in provider:model form`},
		{"big api key alone", func(c *Config) { c.Models.Big.APIKey = "sk" }, "config: COMMITEA_BIG_MODEL (models.big.model): required when models.big has other settings"},
		{"daily requests", func(c *Config) { c.Models.DailyRequests = -1 }, "config: COMMITEA_MODEL_DAILY_REQUESTS (models.daily_requests): must not be negative"},
		{"daily tokens", func(c *Config) { c.Models.DailyTokens = -1 }, "config: COMMITEA_MODEL_DAILY_TOKENS (models.daily_tokens): must not be negative"},
		{"daily cost", func(c *Config) { c.Models.DailyCostUSD = -0.5 }, "config: COMMITEA_MODEL_DAILY_COST_USD (models.daily_cost_usd): must not be negative"},
		{"unknown provider", func(c *Config) { c.Models.Small.Model = "gemini:pro" }, `config: COMMITEA_SMALL_MODEL (models.small.model): "gemini:pro": unknown provider "gemini" (use openai, anthropic or ollama)`},
		{"fallback url without fallback", func(c *Config) { c.Models.Big = ModelRoleConfig{Model: "a:b", FallbackBaseURL: "http://x"} }, "config: COMMITEA_BIG_FALLBACK (models.big.fallback): required when fallback_base_url or fallback_api_key is set"},
		{"fallback base url", func(c *Config) {
			c.Models.Big = ModelRoleConfig{Model: "openai:b", Fallback: "openai:c", FallbackBaseURL: "x:1"}
		}, "config: COMMITEA_BIG_FALLBACK_BASE_URL (models.big.fallback_base_url): must be an absolute http(s) URL"},
		{"role budget", func(c *Config) { c.Models.Small = ModelRoleConfig{Model: "openai:b", DailyTokens: -1} }, "config: COMMITEA_SMALL_DAILY_TOKENS (models.small.daily_tokens): must not be negative"},
		{"role price", func(c *Config) { c.Models.Big = ModelRoleConfig{Model: "openai:b", OutputUSDPerMTok: -2} }, "config: COMMITEA_BIG_OUTPUT_USD_PER_MTOK (models.big.output_usd_per_mtok): must not be negative"},
		{"ask tool calls", func(c *Config) { c.Models.AskMaxToolCalls = 11 }, "config: COMMITEA_ASK_MAX_TOOL_CALLS (models.ask_max_tool_calls): must be between 1 and 10 (0 for the default 4), got 11"},
		{"model timeout", func(c *Config) { c.Models.Timeout = 0 }, "config: COMMITEA_MODEL_TIMEOUT (models.timeout): must be at least 1s, got 0s"},
	}
	all := base()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base()
			tc.mutate(&cfg)
			err := cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
	// Problems are reported together, not one at a time.
	all.Gitea.URL = "nope"
	all.Forecast.Trials = -1
	all.Log.Format = "yaml"
	err := all.Validate()
	if err == nil || len(err.(*Error).Problems) != 3 {
		t.Errorf("want 3 problems at once, got %v", err)
	}
}

func TestValidateForCommand(t *testing.T) {
	onlyDB := Config(Default())
	onlyDB.Database.URL = "host=/run/postgresql dbname=commitea"
	if err := onlyDB.ValidateFor("migrate"); err != nil {
		t.Errorf("migrate with a database: %v", err)
	}
	if err := onlyDB.ValidateFor("sync"); err == nil || !strings.Contains(err.Error(), "GITEA_URL (gitea.url): required for sync") {
		t.Errorf("sync without gitea: %v", err)
	}
	if err := Default().ValidateFor("migrate"); err == nil || !strings.Contains(err.Error(), "DATABASE_URL (database.url): required for migrate") {
		t.Errorf("migrate without a database: %v", err)
	}
	if err := Default().ValidateFor("version"); err != nil {
		t.Errorf("defaults must be valid for commands needing nothing: %v", err)
	}
}

func TestSecretsAreNeverPrinted(t *testing.T) {
	env := configtest.ValidEnv()
	env["COMMITEA_TOKENS"] = "planner:read:token-secret-0123456789"
	env["COMMITEA_BIG_MODEL"] = "openai:gpt"
	env["COMMITEA_BIG_API_KEY"] = "sk-model-key-0123"
	cfg, err := Load("", configtest.Getenv(env))
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{"pg-password-123", "gitea-token-abcdef0123456789", "webhook-secret-0123456789", "token-secret-0123456789", "sk-model-key-0123"}

	var logText, logJSON bytes.Buffer
	slog.New(slog.NewTextHandler(&logText, nil)).Info("x", "config", cfg, "gitea", cfg.Gitea, "token", cfg.Gitea.Token)
	slog.New(slog.NewJSONHandler(&logJSON, nil)).Info("x", "config", cfg, "tokens", cfg.Tokens)
	jsonBytes, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	renderings := map[string]string{
		"String":    cfg.String(),
		"%v":        fmt.Sprintf("%v", cfg),
		"%+v":       fmt.Sprintf("%+v", cfg),
		"%#v":       fmt.Sprintf("%#v", cfg),
		"%+v gitea": fmt.Sprintf("%+v", cfg.Gitea),
		"%#v gitea": fmt.Sprintf("%#v", cfg.Gitea),
		"%v tokens": fmt.Sprintf("%v", cfg.Tokens),
		//lint:ignore S1025 the test is about what the %s verb prints
		"%s secret": fmt.Sprintf("%s", cfg.Gitea.Token),
		"slog text": logText.String(),
		"slog json": logJSON.String(),
		"json":      string(jsonBytes),
	}
	for name, out := range renderings {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s leaks %q:\n%s", name, s, out)
			}
		}
	}
	if !strings.Contains(cfg.String(), "[redacted]") || !strings.Contains(cfg.String(), `url = "http://gitea:3000"`) {
		t.Errorf("String should show non-secrets and mark secrets:\n%s", cfg.String())
	}
	if !strings.Contains(logText.String(), "127.0.0.1:1/commitea") || !strings.Contains(logText.String(), "gitea_token=set") {
		t.Errorf("log should name the database host and say the token is set:\n%s", logText.String())
	}
	if Secret("").String() != "" {
		t.Error("an unset secret should print as empty")
	}
}

func TestCalendars(t *testing.T) {
	path := writeFile(t, "c.toml", fileConfig)
	cfg, err := Load(path, configtest.Getenv(nil))
	if err != nil {
		t.Fatal(err)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	ny, _ := time.LoadLocation("America/New_York")

	def, err := cfg.DefaultCalendar()
	if err != nil {
		t.Fatal(err)
	}
	if def.HoursPerDay != 7 || def.Location.String() != "Europe/Berlin" || def.WorkingDays != [7]bool{false, true, true, true, true, false, false} {
		t.Errorf("default calendar = %+v", def)
	}
	if len(def.Holidays) != 2 || !def.Holidays[0].Equal(time.Date(2026, 12, 25, 0, 0, 0, 0, berlin)) {
		t.Errorf("default holidays = %v", def.Holidays)
	}

	alice, err := cfg.CalendarFor("alice")
	if err != nil {
		t.Fatal(err)
	}
	if alice.HoursPerDay != 4 || alice.Location.String() != "Europe/Berlin" || len(alice.Holidays) != 2 || alice.WorkingDays != def.WorkingDays {
		t.Errorf("alice must inherit all but hours: %+v", alice)
	}
	if len(alice.TimeOff) != 1 || !alice.TimeOff[0].To.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, berlin)) {
		t.Errorf("alice time off = %+v", alice.TimeOff)
	}

	bob, err := cfg.CalendarFor("bob")
	if err != nil {
		t.Fatal(err)
	}
	if bob.Location.String() != "America/New_York" || bob.HoursPerDay != 7 || bob.WorkingDays != [7]bool{true, true, false, false, false, false, false} {
		t.Errorf("bob = %+v", bob)
	}
	if len(bob.Holidays) != 1 || !bob.Holidays[0].Equal(time.Date(2026, 11, 26, 0, 0, 0, 0, ny)) || len(bob.TimeOff) != 0 {
		t.Errorf("bob's holidays replace the default list and time off is not inherited: %+v", bob)
	}

	people, err := cfg.ConfiguredPeople()
	if err != nil || len(people) != 2 || people[0].Login != "alice" || people[1].Login != "bob" {
		t.Errorf("people = %+v, %v", people, err)
	}

	loc, err := cfg.StandupLocation()
	if err != nil || loc.String() != "Asia/Tokyo" {
		t.Errorf("standup location = %v, %v", loc, err)
	}
	h, m, err := cfg.StandupClock()
	if err != nil || h != 10 || m != 30 {
		t.Errorf("standup clock = %d:%d, %v", h, m, err)
	}
	cfg.Standup.TimeZone = ""
	if loc, _ := cfg.StandupLocation(); loc.String() != "Europe/Berlin" {
		t.Errorf("standup falls back to the calendar zone, got %v", loc)
	}
}

func TestTokenHasScope(t *testing.T) {
	tok := TokenConfig{Name: "pm", Scopes: []string{ScopeRead, ScopeApprove}}
	if !tok.HasScope(ScopeApprove) || tok.HasScope(ScopeWrite) {
		t.Errorf("HasScope wrong for %v", tok.Scopes)
	}
}

// The example file is documentation: it must load with no unknown key,
// validate for serve, and mention every environment variable.
func TestExampleConfigFile(t *testing.T) {
	path := filepath.Join("..", "..", "..", "deploy", "commitea.example.toml")
	cfg, err := Load(path, configtest.Getenv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("example config invalid: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range envBindings() {
		if !strings.Contains(string(data), b.env) {
			t.Errorf("example config does not mention %s (%s)", b.env, b.key)
		}
	}
}

// The README's configuration table must list every environment variable.
func TestReadmeDocumentsEveryVariable(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range envBindings() {
		if !strings.Contains(string(data), "`"+b.env+"`") {
			t.Errorf("README does not document %s (%s)", b.env, b.key)
		}
		if !strings.Contains(string(data), "`"+b.key+"`") {
			t.Errorf("README does not document key %s", b.key)
		}
	}
}

// Every model setting has its environment variable: each key of [models]
// and its roles is bound.
func TestEveryModelSettingHasAnEnvironmentVariable(t *testing.T) {
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			key := prefix + "." + f.Tag.Get("toml")
			if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(time.Duration(0)) {
				walk(key, f.Type)
				continue
			}
			if envFor(key) == "" {
				t.Errorf("%s has no environment variable", key)
			}
		}
	}
	walk("models", reflect.TypeOf(ModelsConfig{}))
}
