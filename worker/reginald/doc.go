// Package reginald is CommiTea's assistant: a person or an agent asks in
// plain words and Reginald answers from the agent tools, so that every
// number in the answer comes from deterministic code, not from a model.
//
// A question runs a short, bounded tool-calling loop on the small model
// with query_project as its one read tool. A braindump or a directive is
// handed on, through the same tool registry the transports serve, to
// capture_work or record_directive (whose structuring is the big model's
// job); their proposal and consequence come back as a proposed
// apply_changes batch for the caller to approve and send. Reginald never
// applies anything: record_directive only appends a pending directive to
// the ledger, and nothing changes in Gitea.
//
// Memory: ticket data is fetched through the tools on every turn, never
// copied into the prompt wholesale. A prompt holds the question, a compact
// project header (milestones, people, today's date) and this turn's tool
// results; a conversation keeps only short summaries of its earlier turns,
// in Postgres under its conversationId and the caller's token name (the
// same id under another token is another conversation).
//
// Guard rails: at most MaxToolCalls tool calls per question; tool results
// are capped by the tools' own caps (a smaller list limit, long answers cut
// with the shared truncation marker) and delimited as data, because issue
// text is written by anyone with a Gitea account; the final answer is
// checked with package prose, so every claim in it (a date, a count, a
// status word, a lateness) must be a value, in this turn's tool results,
// of the issue, milestone or person it is said of; otherwise Reginald says
// what it could not confirm and shows the data instead. A hand-off is taken
// only as the loop's first step, from the question alone: once project
// data is in the prompt a write-tool call may come from issue text, and
// is refused. Hand-offs run with the caller's own scopes (a read token
// cannot record a directive), and the directive's quote is always the
// question, verbatim.
package reginald
