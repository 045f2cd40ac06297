// Package configtest holds what the tests of the configuration and of the
// commands that load it share: the smallest environment serve accepts and
// a getenv over a map, so no test reads the process's environment.
package configtest

// Getenv is a getenv backed by a map.
func Getenv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// ValidEnv is the smallest environment serve accepts. Its secrets are
// recognisable, so a test can check that none is printed.
func ValidEnv() map[string]string {
	return map[string]string{
		"DATABASE_URL":            "postgres://commitea:pg-password-123@127.0.0.1:1/commitea?sslmode=disable",
		"GITEA_URL":               "http://gitea:3000",
		"GITEA_TOKEN":             "gitea-token-abcdef0123456789",
		"COMMITEA_WEBHOOK_SECRET": "webhook-secret-0123456789",
		"COMMITEA_PROJECTS":       "acme/widgets, acme/gadgets",
	}
}
