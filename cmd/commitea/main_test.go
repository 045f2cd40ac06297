package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commitea/commitea/cmd/commitea/config/configtest"
)

// run runs commitea in-process with env and returns its output and error.
func run(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &errOut, Getenv: configtest.Getenv(env)}
	err = m.Run(context.Background(), args)
	if cerr := m.Close(); cerr != nil {
		t.Errorf("Close: %v", cerr)
	}
	return out.String(), errOut.String(), err
}

func TestRunDispatch(t *testing.T) {
	full := configtest.ValidEnv()
	cases := []struct {
		name      string
		env       map[string]string
		args      []string
		wantErr   string // substring; "" means success
		usage     bool   // the error is a usage error (exit status 2)
		wantOut   string
		wantStder string
	}{
		{name: "no command", args: nil, wantErr: "no command given", usage: true, wantStder: "Usage: commitea"},
		{name: "unknown command", args: []string{"frobnicate"}, wantErr: `unknown command "frobnicate"`, usage: true},
		{name: "unknown global flag", args: []string{"--nope", "serve"}, wantErr: "flag provided but not defined", usage: true},
		{name: "global help flag", args: []string{"-h"}, wantStder: "Usage: commitea"},
		{name: "help", args: []string{"help"}, wantOut: "backtest"},
		{name: "help serve", args: []string{"help", "serve"}, wantOut: "-role"},
		{name: "help sync", args: []string{"help", "sync"}, wantOut: "-project"},
		{name: "help backtest", args: []string{"help", "backtest"}, wantOut: "commitea backtest"},
		{name: "help usage", args: []string{"help", "usage"}, wantOut: "-days"},
		{name: "usage bad days", env: full, args: []string{"usage", "--days", "400"}, wantErr: "--days must be between 1 and 366", usage: true},
		{name: "help unknown", args: []string{"help", "nope"}, wantErr: `unknown command "nope"`, usage: true},
		{name: "version", args: []string{"version"}, wantOut: "commitea "},
		{name: "version extra args", args: []string{"version", "x"}, wantErr: "unexpected arguments: x", usage: true},
		{name: "serve bad role", env: full, args: []string{"serve", "--role", "boss"}, wantErr: "must be all, api or worker", usage: true},
		{name: "serve missing config", env: map[string]string{}, args: []string{"serve"}, wantErr: "config: DATABASE_URL (database.url): required for serve"},
		{name: "serve", env: full, args: []string{"serve"}, wantErr: "database", wantStder: "configuration loaded"},
		{name: "serve api", env: full, args: []string{"serve", "--role=api"}, wantErr: "database"},
		{name: "serve worker", env: full, args: []string{"serve", "-role", "worker"}, wantErr: "database"},
		{name: "migrate needs only db", env: map[string]string{"DATABASE_URL": full["DATABASE_URL"]}, args: []string{"migrate"}, wantErr: "database"},
		{name: "migrate without db", env: map[string]string{}, args: []string{"migrate"}, wantErr: "DATABASE_URL (database.url): required for migrate"},
		{name: "sync bad project", env: full, args: []string{"sync", "--project", "nope"}, wantErr: `"nope" is not in owner/repo form`, usage: true},
		{name: "sync one project", env: full, args: []string{"sync", "--project", "acme/widgets"}, wantErr: "database"},
		{name: "sync configured projects", env: full, args: []string{"sync"}, wantErr: "database"},
		{name: "sync nothing to sync", env: map[string]string{"DATABASE_URL": "postgres://x@db/x", "GITEA_URL": "http://gitea"}, args: []string{"sync"}, wantErr: "no project", usage: true},
		{name: "backtest owns its flags", env: map[string]string{}, args: []string{"backtest", "--cutoffs", "30"}, wantErr: "flag provided but not defined: -cutoffs", usage: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := run(t, tc.env, tc.args...)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if err != nil {
				if got, want := exitCode(err), map[bool]int{true: 2, false: 1}[tc.usage]; got != want {
					t.Errorf("exit code %d, want %d", got, want)
				}
			}
			if !strings.Contains(out, tc.wantOut) {
				t.Errorf("stdout %q, want it to contain %q", out, tc.wantOut)
			}
			if !strings.Contains(errOut, tc.wantStder) {
				t.Errorf("stderr %q, want it to contain %q", errOut, tc.wantStder)
			}
		})
	}
}

func TestRunConfigFlagAndEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(path, []byte(`projects = ["file/one"]
[database]
url = "postgres://file@127.0.0.1:1/file"
[gitea]
url = "http://gitea"
webhook_secret = "file-webhook-secret-0123"
[log]
format = "json"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--config", path, "serve"},
		{"serve", "--config", path},
	} {
		_, errOut, err := run(t, nil, args...)
		if err == nil || !strings.Contains(err.Error(), "reach database") {
			t.Errorf("%v: %v", args, err)
		}
		if !strings.Contains(errOut, `"msg":"configuration loaded"`) {
			t.Errorf("%v: want JSON logs from the file's log.format, got %q", args, errOut)
		}
	}
	_, _, err := run(t, map[string]string{"COMMITEA_CONFIG": path}, "migrate")
	if err == nil || !strings.Contains(err.Error(), "reach database") {
		t.Errorf("COMMITEA_CONFIG: %v", err)
	}
}

func TestRunLogsWithoutSecrets(t *testing.T) {
	env := configtest.ValidEnv()
	env["COMMITEA_LOG_FORMAT"] = "json"
	env["COMMITEA_LOG_LEVEL"] = "debug"
	_, errOut, _ := run(t, env, "serve")
	line := strings.SplitN(strings.TrimSpace(errOut), "\n", 2)[0]
	var rec map[string]any
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatalf("log line is not JSON: %q: %v", line, err)
	}
	if rec["command"] != "serve" {
		t.Errorf("log record = %v", rec)
	}
	for _, s := range []string{"pg-password-123", "gitea-token-abcdef0123456789", "webhook-secret-0123456789"} {
		if strings.Contains(errOut, s) {
			t.Errorf("log leaks %q: %s", s, errOut)
		}
	}

	env["COMMITEA_LOG_FORMAT"] = "text"
	env["COMMITEA_LOG_LEVEL"] = "warn"
	_, errOut, _ = run(t, env, "serve")
	if errOut != "" {
		t.Errorf("info record logged at warn level: %q", errOut)
	}
}

func TestCloseRunsClosersNewestFirst(t *testing.T) {
	m := &Main{}
	var order []string
	m.addCloser(func() error { order = append(order, "pool"); return nil })
	m.addCloser(func() error { order = append(order, "river"); return errors.New("river stuck") })
	err := m.Close()
	if err == nil || !strings.Contains(err.Error(), "river stuck") {
		t.Errorf("Close error = %v", err)
	}
	if strings.Join(order, ",") != "river,pool" {
		t.Errorf("order = %v", order)
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestRoleFlag(t *testing.T) {
	for _, tc := range []struct {
		role        Role
		api, worker bool
	}{{RoleAll, true, true}, {RoleAPI, true, false}, {RoleWorker, false, true}} {
		if tc.role.RunsAPI() != tc.api || tc.role.RunsWorker() != tc.worker {
			t.Errorf("%s: api=%v worker=%v", tc.role, tc.role.RunsAPI(), tc.role.RunsWorker())
		}
	}
}
