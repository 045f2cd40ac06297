// Package api is CommiTea's HTTP surface: the Gitea webhook receiver, health
// and readiness, and the agent tools over plain HTTP (/v1/tools) and MCP
// (/mcp, /mcp/readonly, with the resources) with bearer-token auth, and the
// directive ledger as Markdown (/v1/pm-state.md). Its sub-package mcpstdio
// relays an MCP client on stdio to /mcp (`commitea mcp`). It stays thin: it decodes,
// authenticates and maps errors to statuses; the work happens in worker.
//
// Two kinds of caller, kept apart: agents and the CLI send a bearer token,
// and only a bearer token, to /v1/* and /mcp; people open the dashboard and
// the River UI signed in with Gitea (subpackage signin) or, with a token,
// as a bearer header or (dashboard.token_links) once as ?token=. The
// browser layer (browser_auth.go) turns either into a signin.Viewer: a
// project a signed-in person cannot read in Gitea answers 404, as one that
// does not exist; the River UI wants approve everywhere.
package api
