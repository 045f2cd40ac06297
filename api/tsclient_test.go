package api

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The official MCP TypeScript SDK, run by testdata/mcpclient/client.mjs
// (see its comment for the plan it reads). .ci/run installs it with npm ci
// from the committed package-lock.json.

// pinnedTSSDK is the @modelcontextprotocol/sdk version the lockfile pins.
// It validates structured content against a tool's output schema even on
// an isError result (a known upstream bug); the tests assert the server's
// wire form as well, so a later, more lenient SDK cannot make them pass
// by accident.
const pinnedTSSDK = "1.32.2"

const tsClientDir = "testdata/mcpclient"

type tsPlan struct {
	Connections map[string]tsConn `json:"connections,omitempty"`
	Steps       []tsStep          `json:"steps"`
}

// tsConn is an MCP endpoint (URL and token) or a command speaking MCP on
// stdio.
type tsConn struct {
	URL     string            `json:"url,omitempty"`
	Token   string            `json:"token,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

type tsStep struct {
	Conn      string          `json:"conn,omitempty"`
	Op        string          `json:"op"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	URI       string          `json:"uri,omitempty"`
	Method    string          `json:"method,omitempty"`
	TimeoutMs int             `json:"timeoutMs,omitempty"`
}

// tsRecord is one line the driver printed: a connection opened, or a step.
type tsRecord struct {
	Step         *int            `json:"step"`
	Conn         string          `json:"conn"`
	Connected    bool            `json:"connected"`
	SDK          string          `json:"sdk"`
	Capabilities json.RawMessage `json:"capabilities"`
	Tools        []string        `json:"tools"`
	Result       json.RawMessage `json:"result"`
	Threw        string          `json:"threw"`
	Wire         []tsWire        `json:"wire"`
}

// tsWire is one HTTP exchange as the driver saw it on the wire.
type tsWire struct {
	Method string          `json:"method"`
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
}

// tsRun is what a plan produced.
type tsRun struct {
	Connected map[string]tsRecord
	Steps     []tsRecord // in plan order
}

// runTSClient runs the driver with the default connection at url with
// token, and returns its records. Every connection must report the pinned
// SDK.
func runTSClient(t *testing.T, url, token string, plan tsPlan) tsRun {
	t.Helper()
	dir, err := filepath.Abs(tsClientDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("the TypeScript SDK is not installed: run `npm ci` in api/%s (.ci/run does): %v", tsClientDir, err)
	}
	in, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "client.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "COMMITEA_URL="+url, "COMMITEA_TOKEN="+token)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("TypeScript SDK client: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	run := tsRun{Connected: map[string]tsRecord{}}
	for line := range strings.Lines(stdout.String()) {
		var r tsRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("driver printed %q: %v", line, err)
		}
		if r.Connected {
			if r.SDK != pinnedTSSDK {
				t.Fatalf("@modelcontextprotocol/sdk %s is installed, the test pins %s: run npm ci in api/%s", r.SDK, pinnedTSSDK, tsClientDir)
			}
			run.Connected[r.Conn] = r
			continue
		}
		run.Steps = append(run.Steps, r)
	}
	if len(run.Steps) != len(plan.Steps) {
		t.Fatalf("driver answered %d of %d steps\nstderr:\n%s", len(run.Steps), len(plan.Steps), stderr.String())
	}
	return run
}

// tsToolResult is a tools/call result as the SDK delivered it.
type tsToolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

// toolOutcome checks one tools/call step, both as the SDK delivered it
// (a result, never an exception) and as it came over the wire, and
// returns the outcome.
func (r tsRecord) toolOutcome(t *testing.T) outcome {
	t.Helper()
	if r.Threw != "" {
		t.Fatalf("the TypeScript SDK threw instead of returning a result: %s", r.Threw)
	}
	var res tsToolResult
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatalf("result %s: %v", r.Result, err)
	}
	if len(res.Content) != 1 || res.Content[0].Type != "text" {
		t.Fatalf("content = %s", r.Result)
	}
	o := decodeOutcome(t, []byte(res.Content[0].Text))
	if res.IsError != (o.code != "") {
		t.Fatalf("isError %v with text %s", res.IsError, res.Content[0].Text)
	}
	assertWireForm(t, r.Wire, "tools/call")
	return o
}

// assertWireForm holds the server's own form of a tools/call answer as it
// came over HTTP: a success is structuredContent equal to the text
// content; a failure is isError with the error envelope as text and no
// structuredContent at all.
func assertWireForm(t *testing.T, wire []tsWire, method string) {
	t.Helper()
	var found bool
	for _, w := range wire {
		if w.Method != method {
			continue
		}
		found = true
		var rpc struct {
			Result map[string]json.RawMessage `json:"result"`
			Error  json.RawMessage            `json:"error"`
		}
		if err := json.Unmarshal(w.Body, &rpc); err != nil || rpc.Result == nil {
			t.Fatalf("%s answered %d %s, not a result", method, w.Status, w.Body)
		}
		var isError bool
		if raw, ok := rpc.Result["isError"]; ok {
			_ = json.Unmarshal(raw, &isError)
		}
		var content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(rpc.Result["content"], &content); err != nil || len(content) != 1 || content[0].Type != "text" {
			t.Fatalf("wire content = %s", rpc.Result["content"])
		}
		structured, hasStructured := rpc.Result["structuredContent"]
		if isError {
			if hasStructured {
				t.Fatalf("an isError result carries structuredContent on the wire: %s", w.Body)
			}
			var f struct {
				Error *struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(content[0].Text), &f); err != nil || f.Error == nil || f.Error.Code == "" || f.Error.Message == "" {
				t.Fatalf("an isError result's text is not the error envelope: %s", content[0].Text)
			}
			continue
		}
		if !hasStructured || !jsonEqual(t, structured, []byte(content[0].Text)) {
			t.Fatalf("a success's structuredContent differs from its text: %s", w.Body)
		}
	}
	if !found {
		t.Fatalf("no %s exchange on the wire", method)
	}
}

// tsTransport calls the tools through the TypeScript SDK. One driver run
// makes every call of a runCases list, in order, one connection per token;
// outcome then hands out each call's outcome.
type tsTransport struct {
	s     toolStack
	steps []tsRecord // one per case
}

func (*tsTransport) name() string { return "ts-sdk" }

func (ts *tsTransport) call(t *testing.T, secret, tool, input string) outcome {
	t.Helper()
	run := runTSClient(t, ts.s.srv.URL+"/mcp", secret, tsPlan{Steps: []tsStep{{Op: "callTool", Name: tool, Arguments: json.RawMessage(input)}}})
	return run.Steps[0].toolOutcome(t)
}

func (ts *tsTransport) prepare(t *testing.T, cases []toolCase) {
	t.Helper()
	plan := tsPlan{Connections: map[string]tsConn{}}
	for _, c := range cases {
		secret := caseSecret(c)
		plan.Connections[secret] = tsConn{URL: ts.s.srv.URL + "/mcp", Token: secret}
		plan.Steps = append(plan.Steps, tsStep{Conn: secret, Op: "callTool", Name: caseTool(c), Arguments: json.RawMessage(c.input)})
	}
	ts.steps = runTSClient(t, ts.s.srv.URL+"/mcp", readerSecret, plan).Steps
}

func (ts *tsTransport) outcome(t *testing.T, i int) outcome {
	t.Helper()
	return ts.steps[i].toolOutcome(t)
}
