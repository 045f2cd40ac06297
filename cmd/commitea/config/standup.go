package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
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
		project, _, err := ParseGiteaIssue(g)
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

// ParseGiteaIssue reads "owner/repo#N".
func ParseGiteaIssue(s string) (string, int64, error) {
	project, num, ok := strings.Cut(strings.TrimSpace(s), "#")
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil || n <= 0 || CheckProject(project) != nil {
		return "", 0, fmt.Errorf("%q is not in owner/repo#number form", s)
	}
	return project, n, nil
}
