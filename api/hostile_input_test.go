package api

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestToolInputsWithNUL: search with a NUL in its query answered 500, and
// every tool that stores its input (jsonb) or searches with it could fail
// the same way. Each is a 400 naming the field now, over every route.
func TestToolInputsWithNUL(t *testing.T) {
	t.Parallel()
	srv := askStack(t, nil)
	cases := []struct{ path, body, field string }{
		{"/v1/tools/query_project", `{"view":"search","filters":{"query":"keychain\u0000safari"}}`, "filters.query"},
		{"/v1/tools/record_directive", `{"kind":"note","quote":"ship\u0000it"}`, "quote"},
		{"/v1/tools/capture_work", `{"braindump":"fix the\u0000login"}`, "braindump"},
		{"/v1/tools/apply_changes", `{"ops":[{"op":"comment","issue":1,"body":"\u0000"}]}`, "ops.body"},
		{"/v1/tools/ask", `{"question":"what\u0000next?"}`, "question"},
		{"/v1/ask", `{"question":"what\u0000next?"}`, "question"},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+c.path, strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer "+approverSecret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"INVALID_INPUT"`) || !strings.Contains(string(body), `"field":"`+c.field+`"`) {
			t.Errorf("%s %s: %d %s; want 400 INVALID_INPUT on %s", c.path, c.body, resp.StatusCode, body, c.field)
		}
	}
}
