package models

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/openai"
)

// This file is the only one that knows langchaingo. Swapping the client
// library means rewriting Open and Client.Generate, nothing else.

// Provider is the first half of a "provider:model" name.
type Provider string

// The providers CommiTea speaks to.
const (
	ProviderOpenAI    Provider = "openai"
	ProviderAnthropic Provider = "anthropic"
	ProviderOllama    Provider = "ollama"
)

// DefaultOllamaBaseURL is where an "ollama:" model is looked for when no
// base URL is given: Ollama's OpenAI-compatible endpoint on this host.
const DefaultOllamaBaseURL = "http://127.0.0.1:11434/v1"

// Endpoint is one model at one provider.
type Endpoint struct {
	Provider Provider
	// Model is the provider's model name; it may itself contain colons
	// ("ollama:qwen3:4b").
	Model string
	// BaseURL overrides the provider's endpoint, e.g.
	// http://127.0.0.1:8081/v1 for llama.cpp. It ends before the API path
	// (…/v1, not …/v1/chat/completions).
	BaseURL string
	// APIKey is sent as the provider expects. Never logged.
	APIKey string
}

// ParseEndpoint reads a "provider:model" name; base URL and key are left
// for the caller to fill in.
func ParseEndpoint(name string) (Endpoint, error) {
	p, m, ok := strings.Cut(strings.TrimSpace(name), ":")
	if !ok || p == "" || m == "" {
		return Endpoint{}, fmt.Errorf("model %q is not in provider:model form", name)
	}
	ep := Endpoint{Provider: Provider(strings.ToLower(p)), Model: m}
	switch ep.Provider {
	case ProviderOpenAI, ProviderAnthropic, ProviderOllama:
		return ep, nil
	}
	return Endpoint{}, fmt.Errorf("model %q: unknown provider %q (use openai, anthropic or ollama)", name, p)
}

// Name is the endpoint's "provider:model".
func (e Endpoint) Name() string { return string(e.Provider) + ":" + e.Model }

// LogValue shows the endpoint without its key.
func (e Endpoint) LogValue() slog.Value {
	return slog.GroupValue(slog.String("model", e.Name()), slog.String("base_url", e.BaseURL))
}

// String shows the endpoint without its key, for every fmt verb.
func (e Endpoint) String() string {
	if e.BaseURL == "" {
		return e.Name()
	}
	return e.Name() + " at " + e.BaseURL
}

// GoString keeps %#v from printing the key.
func (e Endpoint) GoString() string { return e.String() }

// KeyEnv is the environment variable holding the key for this endpoint
// when none is configured: OPENAI_API_KEY for OpenAI's own API,
// ANTHROPIC_API_KEY for Anthropic's. It is "" for every other endpoint, so
// that a provider's key is never sent to a local or third-party server that
// merely speaks its protocol.
func (e Endpoint) KeyEnv() string {
	base := strings.ToLower(e.BaseURL)
	switch {
	case e.Provider == ProviderOpenAI && (base == "" || strings.HasPrefix(base, "https://api.openai.com/")):
		return "OPENAI_API_KEY"
	case e.Provider == ProviderAnthropic && (base == "" || strings.HasPrefix(base, "https://api.anthropic.com/")):
		return "ANTHROPIC_API_KEY"
	}
	return ""
}

// placeholderKey is sent to OpenAI-compatible servers that were given no
// key: llama.cpp, vLLM, LM Studio and Ollama ignore it unless started with
// one, and langchaingo refuses to build a client without any.
const placeholderKey = "no-key"

// Client is one Endpoint behind langchaingo. It implements Model; a
// Router adds failover, budgets, usage records and validation.
type Client struct {
	ep         Endpoint
	httpClient *http.Client
	// legacyMaxTokens: servers other than OpenAI's own know max_tokens,
	// not max_completion_tokens.
	legacyMaxTokens bool
	anthropic       *anthropic.LLM
}

// Open builds the client for an endpoint. httpClient carries the timeout;
// nil means http.DefaultClient. Nothing is sent until Generate.
func Open(ep Endpoint, httpClient *http.Client) (*Client, error) {
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	c := &Client{ep: ep, httpClient: httpClient}
	switch ep.Provider {
	case ProviderOllama:
		base := strings.TrimRight(ep.BaseURL, "/")
		if base == "" {
			base = DefaultOllamaBaseURL
		} else if !strings.HasSuffix(base, "/v1") {
			base += "/v1"
		}
		c.ep.BaseURL = base
		c.legacyMaxTokens = true
		if c.ep.APIKey == "" {
			c.ep.APIKey = placeholderKey
		}
	case ProviderOpenAI:
		c.ep.BaseURL = strings.TrimRight(ep.BaseURL, "/")
		official := c.ep.BaseURL == "" || strings.Contains(c.ep.BaseURL, "api.openai.com")
		c.legacyMaxTokens = !official
		if c.ep.APIKey == "" {
			if official {
				return nil, fmt.Errorf("model %s: OpenAI needs an API key (OPENAI_API_KEY or the role's api_key)", ep.Name())
			}
			c.ep.APIKey = placeholderKey
		}
	case ProviderAnthropic:
		if ep.APIKey == "" {
			return nil, fmt.Errorf("model %s: Anthropic needs an API key (ANTHROPIC_API_KEY or the role's api_key)", ep.Name())
		}
		opts := []anthropic.Option{anthropic.WithToken(ep.APIKey), anthropic.WithModel(ep.Model), anthropic.WithHTTPClient(httpClient)}
		if ep.BaseURL != "" {
			opts = append(opts, anthropic.WithBaseURL(strings.TrimRight(ep.BaseURL, "/")))
		}
		llm, err := anthropic.New(opts...)
		if err != nil {
			return nil, fmt.Errorf("model %s: %w", ep.Name(), err)
		}
		c.anthropic = llm
	default:
		return nil, fmt.Errorf("model %s: unknown provider %q", ep.Name(), ep.Provider)
	}
	if c.anthropic == nil {
		// Fail now on a bad option rather than on the first request.
		if _, err := c.openai(nil, &wire{client: httpClient}); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// anthropicLLM builds a langchaingo Anthropic client sending through doer.
func (c *Client) anthropicLLM(doer *wire) (*anthropic.LLM, error) {
	opts := []anthropic.Option{anthropic.WithToken(c.ep.APIKey), anthropic.WithModel(c.ep.Model), anthropic.WithHTTPClient(doer)}
	if c.ep.BaseURL != "" {
		opts = append(opts, anthropic.WithBaseURL(strings.TrimRight(c.ep.BaseURL, "/")))
	}
	llm, err := anthropic.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", c.ep.Name(), err)
	}
	return llm, nil
}

// Name is the "provider:model" the client talks to.
func (c *Client) Name() string { return c.ep.Name() }

// String shows the client's endpoint without its key.
func (c *Client) String() string { return c.ep.String() }

// LogValue shows the client's endpoint without its key.
func (c *Client) LogValue() slog.Value { return c.ep.LogValue() }

// openai builds a langchaingo OpenAI client. langchaingo takes the
// response format and the HTTP client per client, not per call, so every
// request gets its own client; building one sends nothing.
func (c *Client) openai(format *openai.ResponseFormat, doer *wire) (*openai.LLM, error) {
	opts := []openai.Option{openai.WithToken(c.ep.APIKey), openai.WithModel(c.ep.Model), openai.WithHTTPClient(doer)}
	if c.ep.BaseURL != "" {
		opts = append(opts, openai.WithBaseURL(c.ep.BaseURL))
	}
	if format != nil {
		opts = append(opts, openai.WithResponseFormat(format))
	}
	llm, err := openai.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", c.ep.Name(), err)
	}
	return llm, nil
}

// Generate sends one request and returns the answer as the provider gave
// it: no retry, no validation.
func (c *Client) Generate(ctx context.Context, req Request) (Response, error) {
	msgs := req.Messages
	if req.Schema != nil {
		msgs = withSchemaInstruction(msgs, req.Schema)
	}
	isAnthropic := c.anthropic != nil
	content, err := toLLMMessages(msgs, isAnthropic)
	if err != nil {
		return Response{}, fmt.Errorf("model %s: %w", c.ep.Name(), err)
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	opts := []llms.CallOption{llms.WithMaxTokens(maxTokens)}
	if req.Temperature != nil {
		opts = append(opts, llms.WithTemperature(*req.Temperature))
	}
	if c.legacyMaxTokens {
		opts = append(opts, openai.WithLegacyMaxTokensField())
	}
	if len(req.Functions) > 0 {
		tools := make([]llms.Tool, len(req.Functions))
		for i, f := range req.Functions {
			params := map[string]any{"type": "object", "properties": map[string]any{}}
			if f.Parameters != nil {
				params = f.Parameters.Map()
			}
			tools[i] = llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: f.Name, Description: f.Description, Parameters: params}}
		}
		opts = append(opts, llms.WithTools(tools))
	}

	doer := &wire{client: c.httpClient}
	var llm llms.Model
	if isAnthropic {
		if llm, err = c.anthropicLLM(doer); err != nil {
			return Response{}, err
		}
	} else {
		var format *openai.ResponseFormat
		if req.Schema != nil {
			name := req.SchemaName
			if name == "" {
				name = "answer"
			}
			// The schema itself goes in whole on the wire (see wire); this
			// only makes langchaingo write the response_format field.
			format = &openai.ResponseFormat{Type: "json_schema", JSONSchema: &openai.ResponseFormatJSONSchema{
				Name: name, Schema: &openai.ResponseFormatJSONSchemaProperty{Type: "object"}, Strict: strictCompatible(req.Schema),
			}}
			doer.schema = []byte(req.Schema.String())
		}
		if llm, err = c.openai(format, doer); err != nil {
			return Response{}, err
		}
	}
	out, err := llm.GenerateContent(ctx, content, opts...)
	if err != nil {
		// A failed request still used what the provider says it used.
		return Response{Model: c.ep.Name(), Usage: doer.reported()}, fmt.Errorf("model %s: %w", c.ep.Name(), err)
	}
	resp, err := fromLLMResponse(out, isAnthropic)
	if err != nil {
		u := resp.Usage
		if u.Tokens() == 0 {
			u = doer.reported()
		}
		return Response{Model: c.ep.Name(), Usage: u}, fmt.Errorf("model %s: %w", c.ep.Name(), err)
	}
	resp.Model = c.ep.Name()
	if resp.Usage.PromptTokens == 0 && resp.Usage.CompletionTokens == 0 {
		resp.Usage.PromptTokens = MessagesTokens(msgs)
		resp.Usage.CompletionTokens = ApproxTokens(resp.Text)
		resp.Usage.Estimated = true
	}
	return resp, nil
}

// withSchemaInstruction tells the model the schema in words too: not every
// OpenAI-compatible server honours response_format, and Anthropic's API
// has no such field.
func withSchemaInstruction(msgs []Message, s *Schema) []Message {
	instr := "Answer with one JSON value and nothing else: no Markdown, no comments. It must match this JSON Schema:\n" + s.String()
	out := make([]Message, 0, len(msgs)+1)
	out = append(out, Message{Role: System, Content: instr})
	for _, m := range msgs {
		if m.Role == System && len(out) == 1 && out[0].Role == System {
			out[0].Content = m.Content + "\n\n" + instr
			continue
		}
		out = append(out, m)
	}
	return out
}

// toLLMMessages converts messages. langchaingo's Anthropic backend reads
// only the first part of an assistant message, so there each function call
// becomes its own assistant message.
func toLLMMessages(msgs []Message, isAnthropic bool) ([]llms.MessageContent, error) {
	out := make([]llms.MessageContent, 0, len(msgs))
	system := ""
	for _, m := range msgs {
		switch m.Role {
		case System:
			if isAnthropic {
				// Anthropic has one system prompt; langchaingo glues parts
				// without a separator.
				if system != "" {
					system += "\n\n"
				}
				system += m.Content
				continue
			}
			out = append(out, llms.TextParts(llms.ChatMessageTypeSystem, m.Content))
		case User:
			out = append(out, llms.TextParts(llms.ChatMessageTypeHuman, m.Content))
		case Assistant:
			calls := make([]llms.ContentPart, 0, len(m.Calls))
			for _, fc := range m.Calls {
				args := string(fc.Arguments)
				if args == "" {
					args = "{}"
				}
				calls = append(calls, llms.ToolCall{ID: fc.ID, Type: "function", FunctionCall: &llms.FunctionCall{Name: fc.Name, Arguments: args}})
			}
			if isAnthropic && len(calls) > 0 {
				for _, p := range calls {
					out = append(out, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{p}})
				}
				continue
			}
			var parts []llms.ContentPart
			if m.Content != "" || len(calls) == 0 {
				parts = append(parts, llms.TextContent{Text: m.Content})
			}
			out = append(out, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: append(parts, calls...)})
		case ToolResult:
			out = append(out, llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
				llms.ToolCallResponse{ToolCallID: m.CallID, Name: m.Name, Content: m.Content},
			}})
		default:
			return nil, fmt.Errorf("unknown message role %q", m.Role)
		}
	}
	if system != "" {
		out = append([]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem, system)}, out...)
	}
	return out, nil
}

// fromLLMResponse gathers an answer. OpenAI-compatible servers give one
// choice per requested completion (we ask for one); langchaingo's Anthropic
// backend gives one choice per content block (text, tool_use), so those
// are joined.
func fromLLMResponse(out *llms.ContentResponse, isAnthropic bool) (Response, error) {
	if out == nil || len(out.Choices) == 0 {
		return Response{}, errors.New("empty answer")
	}
	choices := out.Choices
	if !isAnthropic {
		choices = choices[:1]
	}
	resp := Response{Usage: Usage{Requests: 1}}
	var text []string
	for _, ch := range choices {
		if ch.Content != "" {
			text = append(text, ch.Content)
		}
		if resp.StopReason == "" {
			resp.StopReason = ch.StopReason
		}
		for _, tc := range ch.ToolCalls {
			if tc.FunctionCall == nil {
				continue
			}
			args := json.RawMessage(tc.FunctionCall.Arguments)
			if !json.Valid(args) {
				args = nil
			}
			resp.Calls = append(resp.Calls, FunctionCall{ID: tc.ID, Name: tc.FunctionCall.Name, Arguments: args})
		}
		if resp.Usage.PromptTokens == 0 && resp.Usage.CompletionTokens == 0 {
			in, out := "PromptTokens", "CompletionTokens"
			if isAnthropic {
				in, out = "InputTokens", "OutputTokens"
			}
			resp.Usage.PromptTokens = intInfo(ch.GenerationInfo, in)
			resp.Usage.CompletionTokens = intInfo(ch.GenerationInfo, out)
		}
	}
	resp.Text = strings.Join(text, "\n")
	if resp.Text == "" && len(resp.Calls) == 0 {
		return Response{Usage: resp.Usage}, errors.New("empty answer")
	}
	return resp, nil
}

func intInfo(info map[string]any, key string) int {
	switch v := info[key].(type) {
	case int:
		return v
	case int64:
		return int(v)
	case float64:
		return int(v)
	}
	return 0
}

// strictCompatible reports whether OpenAI's strict mode can take the
// schema: an object at the top, every object closed (no other keys) and
// every property required, no anyOf and no string lengths (strict mode
// refuses those keywords). Strict mode makes OpenAI's own models follow
// the schema exactly; other servers ignore the flag, and every answer is
// validated here either way.
func strictCompatible(s *Schema) bool {
	return s != nil && s.Type == "object" && strictNode(s)
}

func strictNode(s *Schema) bool {
	if s == nil {
		return true
	}
	if len(s.AnyOf) > 0 || s.MinLength != nil || s.MaxLength != nil {
		return false
	}
	if s.Type == "object" {
		if s.AdditionalProperties == nil || *s.AdditionalProperties || len(s.Required) != len(s.Properties) {
			return false
		}
	}
	for _, sub := range s.Properties {
		if !strictNode(sub) {
			return false
		}
	}
	return strictNode(s.Items)
}

// maxAnswerBytes bounds a model's HTTP answer: a chat completion of a few
// thousand tokens is tens of kilobytes.
const maxAnswerBytes = 8 << 20

// wire is the HTTP client langchaingo sends one request through. It puts
// the request's schema into response_format whole, the document Schema
// validates (langchaingo's type for it has neither bounds nor anyOf), and
// it reads the usage a provider reports in its answer, an error's
// included (langchaingo drops it with the error), so that a failed request
// is counted as the provider bills it.
type wire struct {
	client *http.Client
	schema []byte // nil: the body goes as langchaingo wrote it

	mu    sync.Mutex
	usage Usage
}

// Do implements langchaingo's Doer.
func (w *wire) Do(req *http.Request) (*http.Response, error) {
	if w.schema != nil && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read request body: %w", err)
		}
		body = withSchema(body, w.schema)
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	resp, err := w.client.Do(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("read answer: %w", err)
	}
	w.read(body)
	return resp, nil
}

// read keeps the usage of an answer body, in either provider's names.
func (w *wire) read(body []byte) {
	var a struct {
		Usage *struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
			InputTokens      int `json:"input_tokens"`
			OutputTokens     int `json:"output_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(body, &a) != nil || a.Usage == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.usage.PromptTokens = a.Usage.PromptTokens + a.Usage.InputTokens
	w.usage.CompletionTokens = a.Usage.CompletionTokens + a.Usage.OutputTokens
}

// reported is the usage the provider reported, zero when it said none.
func (w *wire) reported() Usage {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.usage
}

// withSchema puts schema into body's response_format.json_schema.schema;
// a body without one is returned as it is.
func withSchema(body, schema []byte) []byte {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return body
	}
	var rf map[string]json.RawMessage
	if json.Unmarshal(top["response_format"], &rf) != nil {
		return body
	}
	var js map[string]json.RawMessage
	if json.Unmarshal(rf["json_schema"], &js) != nil || js == nil {
		return body
	}
	js["schema"] = schema
	var err error
	if rf["json_schema"], err = json.Marshal(js); err != nil {
		return body
	}
	if top["response_format"], err = json.Marshal(rf); err != nil {
		return body
	}
	out, err := json.Marshal(top)
	if err != nil {
		return body
	}
	return out
}
