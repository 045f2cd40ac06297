package main

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestAskCommand(t *testing.T) {
	var gotPath, gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath = r.URL.Path
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(gotBody, "fire") {
			data := `[` + strings.Repeat(`{"data":{"view":"focus","filler":"`+strings.Repeat("x", 500)+`"}},`, 40) + `{}]`
			_, _ = w.Write([]byte(`{"data":{"conversationId":"c-3","answer":"I stopped after 4 tool calls.","confirmed":false,"stopped":"tool_call_limit",` +
				`"stats":{"toolCalls":4},"data":` + data + `},"instruction":"Narrow it."}`))
			return
		}
		if strings.Contains(gotBody, "push") {
			_, _ = w.Write([]byte(`{"data":{"conversationId":"c-2","answer":"I recorded this as directive 3, pending.","confirmed":true,` +
				`"proposal":{"tool":"apply_changes","input":{"ops":[{"op":"set_deadline_hard","milestone":1,"hard":true}],"directiveId":3},"consequence":"v1.0 p80 stays"}},"instruction":"Show it."}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":{"conversationId":"c-1","answer":"Work on #12 next.","confirmed":true},"instruction":"Relay."}`))
	}))
	defer srv.Close()
	env := map[string]string{"COMMITEA_URL": srv.URL, "COMMITEA_TOKEN": "tok"}
	out, stderr, err := run(t, env, "ask", "--conversation", "c-1", "What", "next?")
	if err != nil {
		t.Fatal(err)
	}
	if gotPath != "/v1/ask" || gotBody != `{"question":"What next?","conversationId":"c-1"}` {
		t.Fatalf("request %s %s", gotPath, gotBody)
	}
	if strings.TrimSpace(out) != "Work on #12 next." || !strings.Contains(stderr, "--conversation c-1") {
		t.Fatalf("stdout %q stderr %q", out, stderr)
	}
	out, _, err = run(t, env, "ask", "push v1.0 by a week")
	if err != nil || !strings.Contains(out, "Proposed apply_changes") || !strings.Contains(out, `"set_deadline_hard"`) {
		t.Fatalf("directive: %v %s", err, out)
	}
	// Stopped at the tool-call limit: status 1 and a short message, not the
	// data read.
	out, stderr, err = run(t, env, "ask", "anything on fire?")
	if err == nil || exitCode(err) != 1 || out != "" || len(stderr) > 600 || !strings.Contains(stderr, "stopped after 4 tool calls") {
		t.Fatalf("stopped: err %v, stdout %d bytes, stderr %q", err, len(out), stderr)
	}
	if out, _, err := run(t, env, "ask", "--json", "anything on fire?"); err == nil || !strings.Contains(out, `"tool_call_limit"`) {
		t.Fatalf("stopped with --json: err %v, out %.100s", err, out)
	}
	if _, _, err := run(t, env, "ask"); err == nil || !errors.As(err, new(usageError)) {
		t.Fatalf("no question: %v", err)
	}
}

// Without a small model on the instance, ask names the setting that gives
// it one and the command that reads the same data meanwhile.
func TestAskWithoutAModel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"code":"MODEL_UNAVAILABLE","message":"Reginald needs the small language model and none is configured; call query_project directly"}}`))
	}))
	defer srv.Close()
	_, stderr, err := run(t, map[string]string{"COMMITEA_URL": srv.URL, "COMMITEA_TOKEN": "tok"}, "ask", "What next?")
	if err == nil || !strings.Contains(stderr, "COMMITEA_SMALL_MODEL") || !strings.Contains(stderr, `commitea tool query_project '{"view":"focus"}'`) {
		t.Fatalf("ask without a model: %v\n%s", err, stderr)
	}
}
