// Package models is CommiTea's one door to language models. Everything that
// needs a model (capture_work, directive negotiation, standup prose, the
// Reginald assistant) depends on the small Model interface declared here,
// never on a provider's client, so the client library can be swapped.
//
// # Backends
//
// Client implements Model over github.com/tmc/langchaingo (see Open).
// Providers:
//
//   - openai: any OpenAI-compatible /v1/chat/completions endpoint: OpenAI
//     itself, llama.cpp's server, vLLM, LM Studio, Ollama's /v1.
//   - anthropic: the Anthropic Messages API (/v1/messages).
//   - ollama: Ollama, reached through its OpenAI-compatible /v1 endpoint.
//     langchaingo's native Ollama backend has neither tool calls nor JSON
//     schema output, so "ollama:gemma3:4b" is the openai backend pointed at
//     <ollama>/v1 (default http://127.0.0.1:11434/v1).
//
// # Roles, failover and budgets
//
// Router holds two roles, Small and Big, each a primary model with an
// optional fallback. A model error (transport failure, HTTP error status,
// empty answer) is retried once on the fallback; a cancelled context is not.
// Before every request the router reads today's usage from its UsageLedger
// and stops hard with a *BudgetExhaustedError (code BUDGET_EXHAUSTED) when
// a daily request, token or cost limit of the role, or of all roles
// together, cannot take the request (its estimated prompt, its prompt's
// cost at the model's input price); the message says what the request
// needs and what is left. Failover never bypasses a budget. Every attempt,
// failed or not, is recorded per day, role, tool and model, with the
// tokens the provider reported (a failed request too, when its error
// answer carries usage) and priced at the rates of the model that served
// it (RoleConfig.Price, FallbackPrice). Router.Fits tells at start-up
// whether a prompt of some size can pass a budget at all. Budgets are
// checked before a request is sent, counting this process's requests in
// flight; requests in flight in other replicas are not seen, so with
// several workers a limit can be passed by what they have in flight.
// Failovers, repairs and budget refusals are counted per role in
// package metrics.
//
// # Structured output
//
// A Request with a Schema asks for JSON. The schema is put into the prompt
// for every provider and, for the OpenAI-compatible backends, also sent as
// response_format json_schema (llama.cpp and vLLM turn it into a grammar):
// the very document Schema.Validate checks, bounds and anyOf included
// (langchaingo's type for it has neither, so the client writes it into
// the request body itself). OpenAI's strict flag is set only when strict
// mode can take the schema. The answer is always parsed and validated here
// (Schema.Validate, then Request.Check for what a schema cannot say); an
// invalid answer gets one repair request that quotes the problems, and a
// second invalid answer fails with *InvalidOutputError.
//
// # Token counts
//
// ApproxTokens estimates tokens without a tokenizer model; it is for
// reporting prompt sizes and pre-checking token budgets, not for billing:
// billing uses the usage the provider reports.
package models
