package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// toolError is a tool call a running instance refused; its body was
// printed already, so the exit status is all that is left to say.
type toolError struct{ status int }

func (e toolError) Error() string {
	return fmt.Sprintf("the tool call failed with HTTP status %d", e.status)
}

// runTool calls one tool of a running instance over POST /v1/tools/NAME
// and prints the answer (or the error body) as indented JSON. It needs no
// configuration file: the URL and token come from flags or COMMITEA_URL and
// COMMITEA_TOKEN.
func (m *Main) runTool(ctx context.Context, g globalOptions, args []string) error {
	var url, idemKey string
	fs := m.newFlagSet("tool", "[--url URL] [--idempotency-key KEY] NAME ['{json input}']", &g)
	fs.StringVar(&url, "url", m.Getenv("COMMITEA_URL"), "base `URL` of the running instance (env COMMITEA_URL; default http://localhost:8080)")
	fs.StringVar(&idemKey, "idempotency-key", "", "send this Idempotency-Key header (apply_changes)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fs.Usage()
		return usageError{"tool: want NAME and at most one JSON input"}
	}
	name, input := fs.Arg(0), "{}"
	if fs.NArg() == 2 {
		input = fs.Arg(1)
	}
	if !json.Valid([]byte(input)) {
		return usageError{"tool: the input is not valid JSON"}
	}
	token := m.Getenv("COMMITEA_TOKEN")
	if token == "" {
		return usageError{"tool: set COMMITEA_TOKEN to a bearer token of the instance"}
	}
	if url == "" {
		url = "http://localhost:8080"
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var header map[string]string
	if idemKey != "" {
		header = map[string]string{"Idempotency-Key": idemKey}
	}
	status, body, err := callInstance(ctx, url, "/v1/tools/"+name, token, header, []byte(input))
	if err != nil {
		return fmt.Errorf("tool: %w", err)
	}
	return m.printAnswer(status, body)
}

// callInstance posts a JSON body to a running instance with a bearer token
// and returns the status and the (capped) answer.
func callInstance(ctx context.Context, base, path, token string, header map[string]string, body []byte) (int, []byte, error) {
	url := strings.TrimRight(base, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, usageError{err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("call %s: %w", base, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return 0, nil, fmt.Errorf("read answer: %w", err)
	}
	return resp.StatusCode, answer, nil
}

// printAnswer prints an answer as indented JSON, on stderr with a
// toolError when the instance refused.
func (m *Main) printAnswer(status int, body []byte) error {
	var pretty bytes.Buffer
	if json.Indent(&pretty, body, "", "  ") != nil {
		pretty.Reset()
		pretty.Write(body)
	}
	out := m.Stdout
	if status != http.StatusOK {
		out = m.Stderr
	}
	fmt.Fprintln(out, strings.TrimSpace(pretty.String()))
	if status != http.StatusOK {
		return toolError{status: status}
	}
	return nil
}
