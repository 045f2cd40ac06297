package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/commitea/commitea/api"
	"github.com/commitea/commitea/cmd/commitea/config/configtest"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker/tools"
)

// TestMCPCommand: `commitea mcp` is an MCP server on stdio for a client
// that launches it (the Go SDK's client here), relaying to the instance
// COMMITEA_URL names with COMMITEA_TOKEN; --read-only relays to
// /mcp/readonly. Logs go to stderr, never into the protocol.
func TestMCPCommand(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(context.Background(), pool, "ceo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewService(pool, []store.Project{p}, log).Registry()
	srv := httptest.NewServer(api.NewRouter(api.Config{Tools: reg, Log: log,
		Tokens: []api.Token{{Name: "agent", Scopes: []string{"read", "write"}, Secret: "agent-secret-0123456789"}}}))
	defer srv.Close()
	env := map[string]string{"COMMITEA_URL": srv.URL, "COMMITEA_TOKEN": "agent-secret-0123456789"}

	listTools := func(args ...string) ([]string, string) {
		t.Helper()
		toCommand, fromClient := io.Pipe()
		toClient, fromCommand := io.Pipe()
		var stderr bytes.Buffer
		m := &Main{Stdin: toCommand, Stdout: fromCommand, Stderr: &stderr, Getenv: configtest.Getenv(env)}
		done := make(chan error, 1)
		go func() {
			done <- m.Run(context.Background(), append([]string{"mcp"}, args...))
			_ = fromCommand.Close()
		}()
		client := mcp.NewClient(&mcp.Implementation{Name: "cmd-test", Version: "1"}, nil)
		cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: toClient, Writer: fromClient}, nil)
		if err != nil {
			t.Fatalf("connect to commitea mcp %v: %v\nstderr: %s", args, err, stderr.String())
		}
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = cs.Close()
		if err := <-done; err != nil {
			t.Fatalf("commitea mcp %v: %v", args, err)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		slices.Sort(names)
		return names, stderr.String()
	}
	names, stderr := listTools()
	if !slices.Equal(names, []string{"apply_changes", "capture_work", "query_project", "record_directive"}) {
		t.Fatalf("commitea mcp lists %v", names)
	}
	if !strings.Contains(stderr, srv.URL+"/mcp") {
		t.Fatalf("stderr = %q", stderr)
	}
	names, _ = listTools("--read-only", "--poll", "0")
	if !slices.Contains(names, "query_project") || slices.Contains(names, "apply_changes") {
		t.Fatalf("commitea mcp --read-only lists %v", names)
	}

	for _, c := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"COMMITEA_URL": srv.URL}, []string{"mcp"}, "COMMITEA_TOKEN"},
		{env, []string{"mcp", "extra"}, "takes no arguments"},
	} {
		_, _, err := run(t, c.env, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, new(usageError)) {
			t.Fatalf("%v: err %v, want a usage error with %q", c.args, err, c.want)
		}
	}
}
