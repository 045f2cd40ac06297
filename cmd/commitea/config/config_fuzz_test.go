package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commitea/commitea/cmd/commitea/config/configtest"
)

// FuzzLoadConfig: the TOML file and the environment are an operator's
// input; none may panic the loader or the validation, and what loads
// never prints a secret.
func FuzzLoadConfig(f *testing.F) {
	f.Add(fileConfig, "COMMITEA_ADDR", ":9090")
	// The example file without its comments: every key, in a tenth of the
	// bytes, so minimizing an input grown from it takes seconds, not the
	// whole run (13 KB at a millisecond a decode stalled the workers).
	if example, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "commitea.example.toml")); err == nil {
		f.Add(withoutComments(string(example)), "COMMITEA_MAX_BUFFERED_BYTES", "1")
	}
	f.Add("[server]\nmax_body_bytes = -1\nmax_buffered_bytes = 9223372036854775807\n", "COMMITEA_TOKENS", "a:read+write+approve:x,::,b:nope:0123456789abcdef")
	f.Add("projects = [1, 2]\n[[tokens]]\nname = \"\"\n[people.ann]\nhours_per_day = 1e400\n", "COMMITEA_CALENDAR_HOLIDAYS", "2026-02-30")
	f.Add("[calendar]\ntime_zone = \"Mars/Olympus\"\nworking_days = [\"caturday\"]\n", "COMMITEA_STANDUP_TIME", "25:61")
	f.Add("\x00[[[", "COMMITEA_RECONCILE_INTERVAL", "-1h")
	f.Fuzz(func(t *testing.T, toml, name, value string) {
		env := configtest.ValidEnv()
		if !strings.HasSuffix(name, "_FILE") { // no reading of arbitrary files
			env[name] = value
		}
		cfg, err := load("commitea.toml", []byte(toml), configtest.Getenv(env))
		if err != nil {
			return
		}
		_ = cfg.Validate()
		if s := cfg.String(); strings.Contains(s, "webhook-secret-0123456789") || strings.Contains(s, "pg-password-123") {
			t.Fatalf("config printed a secret: %s", s)
		}
	})
}

// withoutComments drops a TOML file's comment and blank lines.
func withoutComments(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
