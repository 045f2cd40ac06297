package main

import (
	"os"
	"path/filepath"
	"testing"
)

// envMap is a getenv backed by a map.
func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// validEnv is the smallest environment serve accepts (the config
// package's tests hold the same one for its own checks).
func validEnv() map[string]string {
	return map[string]string{
		"DATABASE_URL":            "postgres://commitea:pg-password-123@127.0.0.1:1/commitea?sslmode=disable",
		"GITEA_URL":               "http://gitea:3000",
		"GITEA_TOKEN":             "gitea-token-abcdef0123456789",
		"COMMITEA_WEBHOOK_SECRET": "webhook-secret-0123456789",
		"COMMITEA_PROJECTS":       "acme/widgets, acme/gadgets",
	}
}
