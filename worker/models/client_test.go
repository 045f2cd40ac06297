package models_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/commitea/commitea/worker/models"
	"github.com/commitea/commitea/worker/models/modeltest"
)

func openClient(t *testing.T, ep models.Endpoint) *models.Client {
	t.Helper()
	c, err := models.Open(ep, &http.Client{})
	if err != nil {
		t.Fatalf("Open(%s): %v", ep.Name(), err)
	}
	return c
}

func TestOpenAICompatibleAnswer(t *testing.T) {
	srv := modeltest.NewOpenAI(t, modeltest.Text("Two issues are late.", 42, 7))
	c := openClient(t, models.Endpoint{Provider: models.ProviderOpenAI, Model: "gemma-3-4b-it", BaseURL: srv.BaseURL()})
	resp, err := c.Generate(context.Background(), models.Request{
		Messages:  []models.Message{{Role: models.System, Content: "You are terse."}, {Role: models.User, Content: "Status?"}},
		MaxTokens: 200,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Two issues are late." || resp.Model != "openai:gemma-3-4b-it" {
		t.Errorf("resp = %+v", resp)
	}
	if resp.Usage.PromptTokens != 42 || resp.Usage.CompletionTokens != 7 || resp.Usage.Estimated {
		t.Errorf("usage = %+v", resp.Usage)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Model != "gemma-3-4b-it" || r.System != "You are terse." || r.LastUser() != "Status?" {
		t.Errorf("request = %+v", r)
	}
	// A local server gets max_tokens (not max_completion_tokens) and a
	// placeholder key.
	if !strings.Contains(string(r.Body), `"max_tokens":200`) || r.Key == "" {
		t.Errorf("body %s, key %q", r.Body, r.Key)
	}
	if r.ResponseFormat != nil {
		t.Errorf("response_format sent without a schema: %s", r.ResponseFormat)
	}
}

func TestOpenAIEstimatesUsageWhenServerReportsNone(t *testing.T) {
	srv := modeltest.NewOpenAI(t, modeltest.Text("ok then", 0, 0))
	c := openClient(t, models.Endpoint{Provider: models.ProviderOpenAI, Model: "m", BaseURL: srv.BaseURL()})
	resp, err := c.Generate(context.Background(), models.Request{Messages: []models.Message{{Role: models.User, Content: "hello there"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Usage.Estimated || resp.Usage.PromptTokens == 0 || resp.Usage.CompletionTokens == 0 {
		t.Errorf("usage = %+v", resp.Usage)
	}
	if got := srv.Requests()[0].MaxTokens; got != models.DefaultMaxTokens {
		t.Errorf("max_tokens = %d, want the default %d", got, models.DefaultMaxTokens)
	}
}

func TestOllamaGoesThroughOpenAICompatibleV1(t *testing.T) {
	srv := modeltest.NewOpenAI(t, modeltest.Text("hi", 3, 1))
	// Given the bare Ollama address, the client appends /v1.
	base := strings.TrimSuffix(srv.BaseURL(), "/v1")
	c := openClient(t, models.Endpoint{Provider: models.ProviderOllama, Model: "qwen3:4b", BaseURL: base})
	resp, err := c.Generate(context.Background(), models.Request{Messages: []models.Message{{Role: models.User, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Model != "ollama:qwen3:4b" || srv.Requests()[0].Model != "qwen3:4b" {
		t.Errorf("model %q, sent %q", resp.Model, srv.Requests()[0].Model)
	}
}

func TestOpenAIToolCalls(t *testing.T) {
	srv := modeltest.NewOpenAI(t,
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "query_project", Arguments: `{"view":"focus"}`}}, PromptTokens: 50, CompletionTokens: 9},
		modeltest.Text("Focus on #12.", 80, 5),
	)
	c := openClient(t, models.Endpoint{Provider: models.ProviderOpenAI, Model: "m", BaseURL: srv.BaseURL()})
	fn := models.Function{Name: "query_project", Description: "Read the project.", Parameters: models.Object(map[string]*models.Schema{
		"view": models.Enum("focus", "board"),
	})}
	msgs := []models.Message{{Role: models.User, Content: "What now?"}}
	resp, err := c.Generate(context.Background(), models.Request{Messages: msgs, Functions: []models.Function{fn}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Calls) != 1 || resp.Calls[0].Name != "query_project" || string(resp.Calls[0].Arguments) != `{"view":"focus"}` || resp.Calls[0].ID != "c1" {
		t.Fatalf("calls = %+v", resp.Calls)
	}
	msgs = append(msgs,
		models.Message{Role: models.Assistant, Calls: resp.Calls},
		models.Message{Role: models.ToolResult, CallID: "c1", Name: "query_project", Content: `{"now":[12]}`},
	)
	resp, err = c.Generate(context.Background(), models.Request{Messages: msgs, Functions: []models.Function{fn}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Focus on #12." {
		t.Errorf("text = %q", resp.Text)
	}
	second := srv.Requests()[1]
	if len(second.Tools) != 1 || second.Tools[0] != "query_project" {
		t.Errorf("tools = %v", second.Tools)
	}
	if len(second.Messages) != 3 || second.Messages[1].Calls[0] != "query_project" || second.Messages[2].ToolCallID != "c1" || second.Messages[2].Content != `{"now":[12]}` {
		t.Errorf("messages = %+v", second.Messages)
	}
}

func TestAnthropicAnswerAndToolCall(t *testing.T) {
	srv := modeltest.NewAnthropic(t, modeltest.Reply{
		Text:         "Let me look.",
		Calls:        []modeltest.Call{{ID: "toolu_1", Name: "query_project", Arguments: `{"view":"board"}`}},
		PromptTokens: 120, CompletionTokens: 30,
	})
	c := openClient(t, models.Endpoint{Provider: models.ProviderAnthropic, Model: "claude-sonnet-4-5", BaseURL: srv.BaseURL(), APIKey: "sk-ant-test"})
	resp, err := c.Generate(context.Background(), models.Request{
		Messages:  []models.Message{{Role: models.System, Content: "Be brief."}, {Role: models.User, Content: "Board?"}},
		Functions: []models.Function{{Name: "query_project", Parameters: models.Object(map[string]*models.Schema{"view": models.Enum("board")})}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Let me look." || len(resp.Calls) != 1 || resp.Calls[0].ID != "toolu_1" {
		t.Errorf("resp = %+v", resp)
	}
	var args map[string]string
	if err := json.Unmarshal(resp.Calls[0].Arguments, &args); err != nil || args["view"] != "board" {
		t.Errorf("arguments %s: %v", resp.Calls[0].Arguments, err)
	}
	if resp.Usage.PromptTokens != 120 || resp.Usage.CompletionTokens != 30 {
		t.Errorf("usage = %+v", resp.Usage)
	}
	r := srv.Requests()[0]
	if r.Key != "sk-ant-test" || r.System != "Be brief." || r.Model != "claude-sonnet-4-5" || r.Tools[0] != "query_project" {
		t.Errorf("request = %+v", r)
	}
}

func TestOpenRefusesMissingKeys(t *testing.T) {
	for _, ep := range []models.Endpoint{
		{Provider: models.ProviderOpenAI, Model: "gpt-4.1"},
		{Provider: models.ProviderAnthropic, Model: "claude"},
	} {
		if _, err := models.Open(ep, nil); err == nil || !strings.Contains(err.Error(), "API key") {
			t.Errorf("Open(%s) = %v, want a missing-key error", ep.Name(), err)
		}
	}
}

func TestParseEndpoint(t *testing.T) {
	ep, err := models.ParseEndpoint("ollama:qwen3:4b")
	if err != nil || ep.Provider != models.ProviderOllama || ep.Model != "qwen3:4b" {
		t.Errorf("ParseEndpoint = %+v, %v", ep, err)
	}
	for _, bad := range []string{"gemma", "openai:", ":x", "gemini:pro"} {
		if _, err := models.ParseEndpoint(bad); err == nil {
			t.Errorf("ParseEndpoint(%q) accepted", bad)
		}
	}
}

func TestKeysAreNeverPrinted(t *testing.T) {
	ep := models.Endpoint{Provider: models.ProviderAnthropic, Model: "claude", BaseURL: "https://api.anthropic.com/v1", APIKey: "sk-ant-secret-123"}
	c := openClient(t, ep)
	var logged strings.Builder
	log := slog.New(slog.NewTextHandler(&logged, nil))
	log.Info("x", "endpoint", ep, "client", c)
	for _, s := range []string{fmt.Sprintf("%v %+v %#v %s", ep, ep, ep, ep), fmt.Sprintf("%v %+v %s", c, c, c), logged.String()} {
		if strings.Contains(s, "sk-ant-secret") {
			t.Errorf("key printed: %s", s)
		}
	}
	if ep.KeyEnv() != "ANTHROPIC_API_KEY" {
		t.Errorf("KeyEnv of Anthropic's API = %q", ep.KeyEnv())
	}
	if local := (models.Endpoint{Provider: models.ProviderOpenAI, BaseURL: "http://127.0.0.1:8081/v1"}); local.KeyEnv() != "" {
		t.Errorf("KeyEnv of a local server = %q", local.KeyEnv())
	}
}

func TestStrictSchemaWhenEveryKeyIsRequired(t *testing.T) {
	srv := modeltest.NewOpenAI(t, modeltest.Text(`{"ok":true}`, 5, 2))
	c := openClient(t, models.Endpoint{Provider: models.ProviderOpenAI, Model: "m", BaseURL: srv.BaseURL()})
	schema := models.Object(map[string]*models.Schema{"ok": {Type: "boolean"}})
	if _, err := c.Generate(context.Background(), models.Request{Schema: schema, Messages: []models.Message{{Role: models.User, Content: "ok?"}}}); err != nil {
		t.Fatal(err)
	}
	if rf := string(srv.Requests()[0].ResponseFormat); !strings.Contains(rf, `"strict":true`) || !strings.Contains(rf, `"name":"answer"`) {
		t.Errorf("response_format = %s", rf)
	}
}
