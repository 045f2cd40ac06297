package config

import (
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/cmd/commitea/config/configtest"
)

// Sign-in's keys: read from the environment with their defaults, and each
// missing piece named with its variable and key.
func TestSignInConfig(t *testing.T) {
	env := configtest.ValidEnv()
	cfg, err := Load("", configtest.Getenv(env))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SignInEnabled() || cfg.Dashboard.TokenLinks || cfg.Sessions.IdleTimeout != 12*time.Hour ||
		cfg.Sessions.MaxAge != 7*24*time.Hour || cfg.Sessions.PermissionRefresh != 10*time.Minute {
		t.Fatalf("defaults: %+v %+v", cfg.Dashboard, cfg.Sessions)
	}
	for k, v := range map[string]string{
		"GITEA_OAUTH_CLIENT_ID": "5f2f6d1e-3a63-4f53-9d7c-0b7f6d3c2a11", "GITEA_OAUTH_CLIENT_SECRET": "gto_client-secret",
		"COMMITEA_PUBLIC_URL": "https://commitea.example.com", "GITEA_BROWSER_URL": "https://gitea.example.com",
		"COMMITEA_DASHBOARD_TOKEN_LINKS": "true", "COMMITEA_SESSION_IDLE_TIMEOUT": "2h", "COMMITEA_SESSION_MAX_AGE": "24h",
		"COMMITEA_PERMISSION_REFRESH": "1s",
	} {
		env[k] = v
	}
	cfg, err = Load("", configtest.Getenv(env))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if !cfg.SignInEnabled() || !cfg.Dashboard.TokenLinks || cfg.Gitea.BrowserURL != "https://gitea.example.com" ||
		cfg.Sessions.PermissionRefresh != time.Second || cfg.Sessions.MaxAge != 24*time.Hour {
		t.Fatalf("from the environment: %+v %+v", cfg.Gitea, cfg.Sessions)
	}
	if s := cfg.String(); strings.Contains(s, "gto_client-secret") {
		t.Fatal("the client secret is printed")
	}
	env["COMMITEA_DASHBOARD_TOKEN_LINKS"] = "sometimes"
	if _, err := Load("", configtest.Getenv(env)); err == nil || !strings.Contains(err.Error(), "COMMITEA_DASHBOARD_TOKEN_LINKS (dashboard.token_links): not true or false") {
		t.Errorf("token links: %v", err)
	}

	for _, tc := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Gitea.OAuthClientSecret = "" }, "GITEA_OAUTH_CLIENT_SECRET (gitea.oauth_client_secret): required with gitea.oauth_client_id"},
		{func(c *Config) { c.Gitea.OAuthClientID = "" }, "GITEA_OAUTH_CLIENT_ID (gitea.oauth_client_id): required with gitea.oauth_client_secret"},
		{func(c *Config) { c.Server.PublicURL = "" }, "COMMITEA_PUBLIC_URL (server.public_url): required for sign-in with Gitea"},
		{func(c *Config) { c.Gitea.Token = "" }, "GITEA_TOKEN (gitea.token): required for sign-in with Gitea"},
		{func(c *Config) { c.Gitea.BrowserURL = "gitea.example.com" }, "GITEA_BROWSER_URL (gitea.browser_url): must be an absolute http(s) URL"},
		{func(c *Config) { c.Sessions.IdleTimeout = time.Second }, "COMMITEA_SESSION_IDLE_TIMEOUT (sessions.idle_timeout): must be at least 1m"},
		{func(c *Config) { c.Sessions.MaxAge = 0 }, "COMMITEA_SESSION_MAX_AGE (sessions.max_age): must be at least 1m"},
		{func(c *Config) { c.Sessions.PermissionRefresh = 0 }, "COMMITEA_PERMISSION_REFRESH (sessions.permission_refresh): must be at least 1s"},
	} {
		c := cfg
		tc.change(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "config: "+tc.want) {
			t.Errorf("%v, want %q", err, tc.want)
		}
	}
}
