package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The OpenAPI document is checked by testdata/mcpclient/openapi.mjs (see
// its comment): the document by an OpenAPI 3.1 validator from npm, and
// every /v1 exchange of the tests that start their server with
// toolServer against it, when the test ends.

// exchange is one /v1 request and its response as the server saw them.
type exchange struct {
	Method       string            `json:"method"`
	Path         string            `json:"path"`
	Authorized   bool              `json:"authorized"`
	Headers      map[string]string `json:"headers,omitempty"`
	RequestType  string            `json:"requestType,omitempty"`
	Request      string            `json:"request"`
	Status       int               `json:"status"`
	ResponseType string            `json:"responseType"`
	Response     string            `json:"response"`
}

// ordinaryHeaders are the request headers every client sends; any other a
// server accepts must be in the document.
var ordinaryHeaders = []string{"Accept", "Accept-Encoding", "Authorization", "Content-Length", "Content-Type", "User-Agent"}

// traffic records exchanges.
type traffic struct {
	mu        sync.Mutex
	exchanges []exchange
}

func (tr *traffic) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/v1/") {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())

		x := exchange{Method: r.Method, Path: r.URL.Path, Authorized: r.Header.Get("Authorization") != "",
			RequestType: r.Header.Get("Content-Type"), Request: string(body),
			Status: rec.Code, ResponseType: rec.Header().Get("Content-Type"), Response: rec.Body.String()}
		for k := range r.Header {
			if !slices.Contains(ordinaryHeaders, k) {
				if x.Headers == nil {
					x.Headers = map[string]string{}
				}
				x.Headers[k] = r.Header.Get(k)
			}
		}
		tr.mu.Lock()
		tr.exchanges = append(tr.exchanges, x)
		tr.mu.Unlock()
	})
}

// openAPIVerdict is what openapi.mjs printed.
type openAPIVerdict struct {
	Valid    bool            `json:"valid"`
	Version  string          `json:"version"`
	Errors   json.RawMessage `json:"errors"`
	Checked  int             `json:"checked"`
	Problems []struct {
		I        int    `json:"i"`
		Method   string `json:"method"`
		Path     string `json:"path"`
		Status   int    `json:"status"`
		Problem  string `json:"problem"`
		Request  string `json:"request"`
		Response string `json:"response"`
	} `json:"problems"`
}

// checkOpenAPI runs openapi.mjs over a document and exchanges.
func checkOpenAPI(t *testing.T, doc []byte, exchanges []exchange) openAPIVerdict {
	t.Helper()
	dir, err := filepath.Abs(tsClientDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@seriousme", "openapi-schema-validator", "package.json")); err != nil {
		t.Fatalf("the OpenAPI validator is not installed: run `npm ci` in api/%s (.ci/run does): %v", tsClientDir, err)
	}
	in, err := json.Marshal(map[string]any{"document": json.RawMessage(doc), "exchanges": exchanges})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "openapi.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("openapi.mjs: %v\nstderr:\n%s", err, stderr.String())
	}
	var v openAPIVerdict
	if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
		t.Fatalf("openapi.mjs printed %q: %v", stdout.String(), err)
	}
	return v
}

// toolServer is the router for cfg on a loopback server whose /v1
// traffic is checked against its OpenAPI document when the test ends.
func toolServer(t *testing.T, cfg Config) *httptest.Server {
	t.Helper()
	tr := &traffic{}
	srv := httptest.NewServer(tr.wrap(NewRouter(cfg)))
	t.Cleanup(func() {
		srv.Close()
		tr.mu.Lock()
		exchanges := slices.Clone(tr.exchanges)
		tr.mu.Unlock()
		if len(exchanges) == 0 {
			return
		}
		doc, err := json.Marshal(openAPIDocument(cfg))
		if err != nil {
			t.Fatal(err)
		}
		v := checkOpenAPI(t, doc, exchanges)
		if !v.Valid {
			t.Errorf("the OpenAPI document is not valid OpenAPI %s: %s", v.Version, v.Errors)
		}
		for _, p := range v.Problems {
			t.Errorf("%s %s answered %d, which the OpenAPI document does not describe: %s\nrequest:  %s\nresponse: %s",
				p.Method, p.Path, p.Status, p.Problem, p.Request, p.Response)
		}
		if v.Checked != len(exchanges) {
			t.Errorf("openapi.mjs checked %d of %d exchanges", v.Checked, len(exchanges))
		}
		t.Logf("%d /v1 exchanges checked against the OpenAPI document", v.Checked)
	})
	return srv
}

// TestOpenAPIDocument: GET /v1/openapi.json is valid OpenAPI 3.1 by a
// validator from npm and says what GET /v1/tools says: one operation per
// tool, named for it, with its description, scope, annotations and
// schemas unchanged, and nothing else under /v1/tools/.
func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	srv := toolServer(t, Config{Tools: servedRegistry(), Tokens: testTokens, Version: "test", Log: quietLog(),
		PublicURL: "https://commitea.example.com/"})
	get := func(path, secret string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if secret != "" {
			req.Header.Set("Authorization", "Bearer "+secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}
	if status, _ := get("/v1/openapi.json", ""); status != http.StatusUnauthorized {
		t.Fatalf("the document without a token: %d", status)
	}
	status, raw := get("/v1/openapi.json", readerSecret)
	if status != http.StatusOK {
		t.Fatalf("GET /v1/openapi.json = %d %s", status, raw)
	}
	v := checkOpenAPI(t, raw, nil)
	if !v.Valid || v.Version != "3.1" {
		t.Fatalf("the validator says valid %v for OpenAPI %q: %s", v.Valid, v.Version, v.Errors)
	}
	t.Logf("GET /v1/openapi.json: %d bytes, valid OpenAPI %s", len(raw), v.Version)
	// The checks can fail: a document without info is not OpenAPI, and a
	// tool list without tools is not what it declares.
	var broken map[string]json.RawMessage
	if err := json.Unmarshal(raw, &broken); err != nil {
		t.Fatal(err)
	}
	delete(broken, "info")
	brokenRaw, _ := json.Marshal(broken)
	bad := checkOpenAPI(t, brokenRaw, []exchange{{Method: "GET", Path: "/v1/tools", Authorized: true, Status: 200,
		ResponseType: "application/json", Response: `{}`}})
	if bad.Valid || len(bad.Problems) != 1 {
		t.Fatalf("a document without info: valid %v; an empty tool list: %+v", bad.Valid, bad.Problems)
	}

	var doc struct {
		OpenAPI string              `json:"openapi"`
		Servers []map[string]string `json:"servers"`
		Paths   map[string]map[string]struct {
			OperationID string          `json:"operationId"`
			Description string          `json:"description"`
			Scope       string          `json:"x-commitea-scope"`
			Annotations json.RawMessage `json:"x-mcp-annotations"`
			Parameters  []openAPIParam  `json:"parameters"`
			RequestBody *struct {
				Content map[string]struct{ Schema map[string]any }
			}
			Responses map[string]struct {
				Ref     string `json:"$ref"`
				Content map[string]struct{ Schema map[string]any }
			}
		} `json:"paths"`
		Components struct {
			Schemas         map[string]json.RawMessage `json:"schemas"`
			SecuritySchemes map[string]map[string]string
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" || len(doc.Servers) != 1 || doc.Servers[0]["url"] != "https://commitea.example.com" ||
		doc.Components.SecuritySchemes["bearer"]["scheme"] != "bearer" {
		t.Fatalf("openapi %q, servers %v, security schemes %v", doc.OpenAPI, doc.Servers, doc.Components.SecuritySchemes)
	}

	_, listed := get("/v1/tools", readerSecret)
	var list struct {
		Tools []struct {
			Name         string          `json:"name"`
			Description  string          `json:"description"`
			Scope        string          `json:"scope"`
			Annotations  json.RawMessage `json:"annotations"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(listed, &list); err != nil || len(list.Tools) != 5 {
		t.Fatalf("GET /v1/tools = %s (%v)", listed, err)
	}
	var toolPaths []string
	for p := range doc.Paths {
		if strings.HasPrefix(p, "/v1/tools/") {
			toolPaths = append(toolPaths, p)
		}
	}
	slices.Sort(toolPaths)
	var want []string
	for _, tl := range list.Tools {
		want = append(want, "/v1/tools/"+tl.Name)
		op, ok := doc.Paths["/v1/tools/"+tl.Name]["post"]
		if !ok {
			t.Errorf("no POST /v1/tools/%s in the document", tl.Name)
			continue
		}
		if op.OperationID != tl.Name || op.Description != tl.Description || op.Scope != tl.Scope || !jsonEqual(t, op.Annotations, tl.Annotations) {
			t.Errorf("%s: operation %q, description %q, scope %q, annotations %s; GET /v1/tools says %q, %q, %s",
				tl.Name, op.OperationID, op.Description, op.Scope, op.Annotations, tl.Description, tl.Scope, tl.Annotations)
		}
		in, _ := op.RequestBody.Content["application/json"].Schema["$ref"].(string)
		out, _ := op.Responses["200"].Content["application/json"].Schema["$ref"].(string)
		if in != "#/components/schemas/"+tl.Name+"Input" || out != "#/components/schemas/"+tl.Name+"Output" {
			t.Errorf("%s: request %q, response %q", tl.Name, in, out)
		}
		if !jsonEqual(t, doc.Components.Schemas[tl.Name+"Input"], tl.InputSchema) || !jsonEqual(t, doc.Components.Schemas[tl.Name+"Output"], tl.OutputSchema) {
			t.Errorf("%s: the document's schemas differ from GET /v1/tools'", tl.Name)
		}
		for _, status := range []string{"400", "401", "403", "404", "409", "500", "503"} {
			if op.Responses[status].Ref != "#/components/responses/Error"+status {
				t.Errorf("%s: %s answers %+v, not the error envelope", tl.Name, status, op.Responses[status])
			}
		}
		idem := slices.ContainsFunc(op.Parameters, func(p openAPIParam) bool { return p.Name == "Idempotency-Key" && p.In == "header" })
		if idem != (tl.Name == "apply_changes") {
			t.Errorf("%s: Idempotency-Key declared %v", tl.Name, idem)
		}
	}
	slices.Sort(want)
	if !slices.Equal(toolPaths, want) {
		t.Errorf("the document's tool paths %v, GET /v1/tools has %v", toolPaths, want)
	}
	if op := doc.Paths["/v1/ask"]["post"]; op.Description != doc.Paths["/v1/tools/ask"]["post"].Description {
		t.Errorf("POST /v1/ask is not ask: %+v", op)
	}
}
