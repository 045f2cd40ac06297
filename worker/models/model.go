package models

import (
	"context"
	"encoding/json"
)

// Model is one language model, or a router that picks one. Implementations
// are safe for concurrent use.
type Model interface {
	Generate(ctx context.Context, req Request) (Response, error)
}

// MessageRole says who speaks in a Message.
type MessageRole string

// The roles of a conversation.
const (
	System    MessageRole = "system"
	User      MessageRole = "user"
	Assistant MessageRole = "assistant"
	// ToolResult carries a function's result back to the model; CallID
	// names the call it answers.
	ToolResult MessageRole = "tool"
)

// Message is one turn of a conversation.
type Message struct {
	Role    MessageRole
	Content string
	// Calls are the functions an Assistant turn asked for.
	Calls []FunctionCall
	// CallID and Name identify the call a ToolResult answers.
	CallID string
	Name   string
}

// Function is a tool the model may call (OpenAI "tools", Anthropic
// "tool_use"). The model only asks; the caller decides whether to run it.
type Function struct {
	Name        string
	Description string
	Parameters  *Schema
}

// FunctionCall is the model asking for one Function.
type FunctionCall struct {
	ID        string
	Name      string
	Arguments json.RawMessage
}

// DefaultMaxTokens caps answers of requests that set no MaxTokens, so that
// a local model that rambles cannot run for minutes.
const DefaultMaxTokens = 2048

// Request is one generation.
type Request struct {
	// Tool names the CommiTea tool or job the request serves
	// ("capture_work", "standup", …); usage is recorded under it.
	Tool     string
	Messages []Message
	// Schema, when set, asks for a JSON answer valid against it. Through a
	// Router the answer is validated and Response.JSON is set.
	Schema *Schema
	// SchemaName names the schema for providers that want one; default
	// "answer".
	SchemaName string
	// Check, when set, validates what a schema cannot say (a question that
	// is only blanks, a reference to nothing) on an answer the schema
	// accepted. Its error counts as an invalid answer: the router asks
	// for one repair quoting it, as for a schema violation.
	Check     func(json.RawMessage) error
	Functions []Function
	// MaxTokens caps the answer; 0 means DefaultMaxTokens.
	MaxTokens int
	// Temperature, when set, overrides the provider's default.
	Temperature *float64
}

// Usage is what one or more requests consumed.
type Usage struct {
	Requests         int
	PromptTokens     int
	CompletionTokens int
	CostUSD          float64
	// Estimated is true when the provider reported no token counts and
	// ApproxTokens filled them in.
	Estimated bool
}

// Tokens is prompt plus completion tokens.
func (u Usage) Tokens() int { return u.PromptTokens + u.CompletionTokens }

func (u Usage) plus(v Usage) Usage {
	return Usage{
		Requests:         u.Requests + v.Requests,
		PromptTokens:     u.PromptTokens + v.PromptTokens,
		CompletionTokens: u.CompletionTokens + v.CompletionTokens,
		CostUSD:          u.CostUSD + v.CostUSD,
		Estimated:        u.Estimated || v.Estimated,
	}
}

// Response is a model's answer.
type Response struct {
	// Text is the answer as the model wrote it.
	Text string
	// JSON is the validated answer when the request had a Schema.
	JSON json.RawMessage
	// Calls are the functions the model asked for.
	Calls []FunctionCall
	// Model is the "provider:model" that answered (the fallback after a
	// failover).
	Model      string
	StopReason string
	// Usage adds up every request made for this answer, including a failed
	// attempt before failover and a repair.
	Usage Usage
	// FailedOver is true when the role's fallback answered.
	FailedOver bool
	// Repaired is true when the first answer was invalid and the repair
	// request produced this one.
	Repaired bool
}
