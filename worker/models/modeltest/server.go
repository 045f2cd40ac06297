// Package modeltest gives tests scripted language-model servers on
// loopback, speaking the OpenAI chat-completions and the Anthropic
// Messages wire formats, so that tests drive the real client library
// (langchaingo, behind models.Client) end to end. It also has an in-memory
// usage ledger, a settable clock and a fake Model for tests that need no
// HTTP at all.
//
// A Server answers from a script of Replies in order; Handle sets a
// function for requests past the script. Every request is recorded, decoded
// into the few fields tests assert on (Requests).
package modeltest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Reply is one scripted answer.
type Reply struct {
	// Status is the HTTP status; 0 means 200. A status of 400 or more sends
	// the provider's error body with Text as the message.
	Status int
	// Text is the assistant's answer.
	Text string
	// Calls are function calls the model makes.
	Calls []Call
	// Token counts reported as usage; both 0 sends no usage object, as
	// some local servers do. An error answer (Status 400 or more) carries
	// them too when set, as providers do for requests they ran and then
	// failed.
	PromptTokens     int
	CompletionTokens int
	// Body, when set, is sent verbatim instead of a built answer (a broken
	// server).
	Body string
	// Hang sends nothing and waits until the client gives up (its timeout
	// or a cancelled context).
	Hang bool
}

// Call is a scripted function call.
type Call struct {
	ID        string
	Name      string
	Arguments string // JSON object
}

// Text is a 200 answer with some text and token counts.
func Text(text string, promptTokens, completionTokens int) Reply {
	return Reply{Text: text, PromptTokens: promptTokens, CompletionTokens: completionTokens}
}

// JSON is a 200 answer whose text is v encoded as JSON.
func JSON(v any, promptTokens, completionTokens int) Reply {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("modeltest: JSON reply: %v", err))
	}
	return Text(string(b), promptTokens, completionTokens)
}

// Status is an error answer.
func Status(code int, message string) Reply { return Reply{Status: code, Text: message} }

// Message is one message of a received request, flattened to text.
type Message struct {
	Role    string
	Content string
	// ToolCallID is set on tool results.
	ToolCallID string
	// Calls names the functions an assistant message called.
	Calls []string
}

// Request is what a server received.
type Request struct {
	Path string
	// Key is the API key sent (Authorization bearer or x-api-key).
	Key   string
	Model string
	// System is the system prompt: Anthropic's system field, or the
	// OpenAI system messages joined.
	System   string
	Messages []Message
	// ResponseFormat is OpenAI's response_format, raw; nil when absent.
	ResponseFormat json.RawMessage
	// Tools are the names of the functions offered.
	Tools     []string
	MaxTokens int
	Body      json.RawMessage
}

// LastUser is the content of the last user message.
func (r Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// Server is a scripted model server on loopback.
type Server struct {
	t         testing.TB
	srv       *httptest.Server
	anthropic bool

	mu       sync.Mutex
	script   []Reply
	handle   func(Request) Reply
	requests []Request
}

// NewOpenAI starts an OpenAI-compatible server (POST /v1/chat/completions)
// answering with replies in order. It stops when the test ends.
func NewOpenAI(t testing.TB, replies ...Reply) *Server { return newServer(t, false, replies) }

// NewAnthropic starts an Anthropic-shaped server (POST /v1/messages).
func NewAnthropic(t testing.TB, replies ...Reply) *Server { return newServer(t, true, replies) }

func newServer(t testing.TB, anthropic bool, replies []Reply) *Server {
	t.Helper()
	s := &Server{t: t, anthropic: anthropic, script: replies}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// BaseURL is what a client is configured with: the server's /v1.
func (s *Server) BaseURL() string { return s.srv.URL + "/v1" }

// Push appends replies to the script.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// Handle answers requests that find the script empty.
func (s *Server) Handle(fn func(Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handle = fn
}

// Requests returns every request received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	want := "/v1/chat/completions"
	if s.anthropic {
		want = "/v1/messages"
	}
	if r.Method != http.MethodPost || r.URL.Path != want {
		s.t.Errorf("modeltest: unexpected %s %s (want POST %s)", r.Method, r.URL.Path, want)
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req, err := s.decode(r, body)
	if err != nil {
		s.t.Errorf("modeltest: undecodable request: %v\n%s", err, body)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	var reply Reply
	var ok bool
	switch {
	case len(s.script) > 0:
		reply, s.script, ok = s.script[0], s.script[1:], true
	case s.handle != nil:
		h := s.handle
		s.mu.Unlock()
		reply, ok = h(req), true
		s.mu.Lock()
	}
	s.mu.Unlock()
	if !ok {
		s.t.Errorf("modeltest: request %d past the end of the script (last user message: %q)", len(s.Requests()), req.LastUser())
		reply = Status(http.StatusInternalServerError, "script exhausted")
	}
	if reply.Hang {
		<-r.Context().Done()
		return
	}
	s.write(w, req, reply)
}

func (s *Server) write(w http.ResponseWriter, req Request, reply Reply) {
	w.Header().Set("Content-Type", "application/json")
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	if reply.Body != "" {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, reply.Body)
		return
	}
	var out any
	switch {
	case status >= 400 && s.anthropic:
		e := map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": reply.Text}}
		if reply.PromptTokens > 0 || reply.CompletionTokens > 0 {
			e["usage"] = map[string]any{"input_tokens": reply.PromptTokens, "output_tokens": reply.CompletionTokens}
		}
		out = e
	case status >= 400:
		e := map[string]any{"error": map[string]any{"message": reply.Text, "type": "server_error"}}
		if reply.PromptTokens > 0 || reply.CompletionTokens > 0 {
			e["usage"] = map[string]any{"prompt_tokens": reply.PromptTokens, "completion_tokens": reply.CompletionTokens,
				"total_tokens": reply.PromptTokens + reply.CompletionTokens}
		}
		out = e
	case s.anthropic:
		out = anthropicAnswer(req, reply)
	default:
		out = openAIAnswer(req, reply)
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(out)
}

func openAIAnswer(req Request, reply Reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": reply.Text}
	finish := "stop"
	if len(reply.Calls) > 0 {
		var calls []map[string]any
		for i, c := range reply.Calls {
			calls = append(calls, map[string]any{
				"id": callID(c, i), "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": c.Arguments},
			})
		}
		msg["tool_calls"] = calls
		finish = "tool_calls"
	}
	out := map[string]any{
		"id": "chatcmpl-modeltest", "object": "chat.completion", "created": 1764547200, "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
	}
	if reply.PromptTokens > 0 || reply.CompletionTokens > 0 {
		out["usage"] = map[string]any{
			"prompt_tokens": reply.PromptTokens, "completion_tokens": reply.CompletionTokens,
			"total_tokens": reply.PromptTokens + reply.CompletionTokens,
		}
	}
	return out
}

func anthropicAnswer(req Request, reply Reply) map[string]any {
	var content []any
	if reply.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": reply.Text})
	}
	stop := "end_turn"
	for i, c := range reply.Calls {
		var input any = map[string]any{}
		if c.Arguments != "" {
			_ = json.Unmarshal([]byte(c.Arguments), &input)
		}
		content = append(content, map[string]any{"type": "tool_use", "id": callID(c, i), "name": c.Name, "input": input})
		stop = "tool_use"
	}
	return map[string]any{
		"id": "msg_modeltest", "type": "message", "role": "assistant", "model": req.Model,
		"content": content, "stop_reason": stop,
		"usage": map[string]any{"input_tokens": reply.PromptTokens, "output_tokens": reply.CompletionTokens},
	}
}

func callID(c Call, i int) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("call_%d", i+1)
}

// wire is the union of the request fields of both formats that tests read.
type wire struct {
	Model               string          `json:"model"`
	System              json.RawMessage `json:"system"`
	Messages            []wireMessage   `json:"messages"`
	ResponseFormat      json.RawMessage `json:"response_format"`
	Tools               []wireTool      `json:"tools"`
	MaxTokens           int             `json:"max_tokens"`
	MaxCompletionTokens int             `json:"max_completion_tokens"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tool_calls"`
}

type wireTool struct {
	Name     string `json:"name"` // Anthropic
	Function struct {
		Name string `json:"name"`
	} `json:"function"` // OpenAI
}

type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Name      string          `json:"name"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

func (s *Server) decode(r *http.Request, body []byte) (Request, error) {
	var w wire
	if err := json.Unmarshal(body, &w); err != nil {
		return Request{}, err
	}
	req := Request{Path: r.URL.Path, Model: w.Model, Body: body, ResponseFormat: w.ResponseFormat, MaxTokens: w.MaxTokens}
	if req.MaxTokens == 0 {
		req.MaxTokens = w.MaxCompletionTokens
	}
	if string(req.ResponseFormat) == "null" {
		req.ResponseFormat = nil
	}
	req.Key = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if k := r.Header.Get("x-api-key"); k != "" {
		req.Key = k
	}
	for _, t := range w.Tools {
		name := t.Name
		if name == "" {
			name = t.Function.Name
		}
		req.Tools = append(req.Tools, name)
	}
	if len(w.System) > 0 {
		req.System = flatten(w.System, nil)
	}
	var system []string
	for _, m := range w.Messages {
		msg := Message{Role: m.Role, ToolCallID: m.ToolCallID}
		msg.Content = flatten(m.Content, &msg)
		for _, c := range m.ToolCalls {
			msg.Calls = append(msg.Calls, c.Function.Name)
		}
		if m.Role == "system" {
			system = append(system, msg.Content)
			continue
		}
		req.Messages = append(req.Messages, msg)
	}
	if len(system) > 0 {
		req.System = strings.Join(system, "\n\n")
	}
	return req, nil
}

// flatten turns string-or-blocks content into text; tool blocks fill in
// msg's call fields.
func flatten(raw json.RawMessage, msg *Message) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []wireBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return string(raw)
	}
	var parts []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "tool_use":
			if msg != nil {
				msg.Calls = append(msg.Calls, b.Name)
			}
		case "tool_result":
			if msg != nil {
				msg.ToolCallID = b.ToolUseID
			}
			parts = append(parts, flatten(b.Content, nil))
		}
	}
	return strings.Join(parts, "\n")
}
