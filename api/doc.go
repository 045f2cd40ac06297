// Package api is CommiTea's HTTP surface: the Gitea webhook receiver, health
// and readiness, and the agent tools over plain HTTP (/v1/tools) and MCP
// (/mcp, /mcp/readonly, with the resources) with bearer-token auth, and the
// directive ledger as Markdown (/v1/pm-state.md). Its sub-package mcpstdio
// relays an MCP client on stdio to /mcp (`commitea mcp`). It stays thin: it decodes,
// authenticates and maps errors to statuses; the work happens in worker.
package api
