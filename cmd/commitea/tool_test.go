package main

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestToolCommand(t *testing.T) {
	var gotAuth, gotPath, gotBody, gotKey string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotPath, gotKey = r.Header.Get("Authorization"), r.URL.Path, r.Header.Get("Idempotency-Key")
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(gotBody, "gantt") {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"code":"INVALID_INPUT","message":"unknown view","field":"view"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":{"now":[]},"instruction":"Go."}`))
	}))
	defer srv.Close()
	env := map[string]string{"COMMITEA_URL": srv.URL, "COMMITEA_TOKEN": "tok-123"}

	out, _, err := run(t, env, "tool", "--idempotency-key", "k1", "query_project", `{"view":"focus"}`)
	if err != nil {
		t.Fatal(err)
	}
	if gotAuth != "Bearer tok-123" || gotPath != "/v1/tools/query_project" || gotBody != `{"view":"focus"}` || gotKey != "k1" {
		t.Fatalf("request: auth %q path %q body %q key %q", gotAuth, gotPath, gotBody, gotKey)
	}
	if !strings.Contains(out, `"instruction": "Go."`) {
		t.Fatalf("stdout = %s", out)
	}

	_, stderr, err := run(t, env, "tool", "query_project", `{"view":"gantt"}`)
	var te toolError
	if !errors.As(err, &te) || te.status != 400 || !strings.Contains(stderr, `"code": "INVALID_INPUT"`) {
		t.Fatalf("refused call: err %v, stderr %s", err, stderr)
	}

	for _, c := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{env, []string{"tool"}, "want NAME"},
		{env, []string{"tool", "query_project", "{not json"}, "not valid JSON"},
		{map[string]string{"COMMITEA_URL": srv.URL}, []string{"tool", "query_project"}, "COMMITEA_TOKEN"},
	} {
		_, _, err := run(t, c.env, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, new(usageError)) {
			t.Fatalf("%v: err %v, want usage error with %q", c.args, err, c.want)
		}
	}
}
