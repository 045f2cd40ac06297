package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"strings"
	"time"

	"github.com/commitea/commitea/api/mcpstdio"
)

// runMCP speaks MCP on standard input and output for a client that
// launches a local process, relaying to a running instance's /mcp (or
// /mcp/readonly with --read-only). Like tool and ask it needs no
// configuration file: the URL and token come from flags or COMMITEA_URL
// and COMMITEA_TOKEN. It logs to standard error only; standard output is
// the protocol.
func (m *Main) runMCP(ctx context.Context, g globalOptions, args []string) error {
	var url string
	var readOnly bool
	var poll time.Duration
	fs := m.newFlagSet("mcp", "[--url URL] [--read-only] [--poll D]", &g)
	fs.StringVar(&url, "url", m.Getenv("COMMITEA_URL"), "base `URL` of the running instance (env COMMITEA_URL; default http://localhost:8080)")
	fs.BoolVar(&readOnly, "read-only", false, "relay to /mcp/readonly: query_project and the resources only, at read scope")
	fs.DurationVar(&poll, "poll", mcpstdio.DefaultPoll, "how often to check for a new snapshot, announced as notifications/resources/list_changed (0: never)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usageError{"mcp: takes no arguments"}
	}
	token := m.Getenv("COMMITEA_TOKEN")
	if token == "" {
		return usageError{"mcp: set COMMITEA_TOKEN to a bearer token of the instance"}
	}
	if url == "" {
		url = "http://localhost:8080"
	}
	endpoint := strings.TrimRight(url, "/") + "/mcp"
	if readOnly {
		endpoint += "/readonly"
	}
	if poll == 0 {
		poll = -1 // the Proxy's "never"
	}
	log := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	log.Info("relaying MCP on stdio", slog.String("endpoint", endpoint))
	p := &mcpstdio.Proxy{Endpoint: endpoint, Token: token, Poll: poll, Log: log}
	return p.Serve(ctx, m.Stdin, m.Stdout)
}
