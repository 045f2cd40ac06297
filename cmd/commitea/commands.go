package main

import (
	"context"
	"errors"
)

// The subcommands' bodies. main.go has already parsed flags, loaded and
// validated cfg for the command, and set m.logger; register resources that
// must outlive the call (a database pool, say) with m.addCloser.

// serve runs the HTTP API (opts.Role.RunsAPI) and/or the River worker
// (opts.Role.RunsWorker) until ctx is cancelled, then shuts down gracefully.
func (m *Main) serve(ctx context.Context, cfg Config, opts serveOptions) error {
	return errors.New("serve: not wired yet")
}

// migrate applies the embedded migrations under an advisory lock and exits.
func (m *Main) migrate(ctx context.Context, cfg Config) error {
	return errors.New("migrate: not wired yet")
}

// syncProjects imports (first time) or repairs (afterwards) the mirror of
// opts.Projects from the Gitea API.
func (m *Main) syncProjects(ctx context.Context, cfg Config, opts syncOptions) error {
	return errors.New("sync: not wired yet")
}

// backtest replays history and scores past forecasts. It parses args itself.
func (m *Main) backtest(ctx context.Context, cfg Config, args []string) error {
	return errors.New("backtest: not wired yet")
}
