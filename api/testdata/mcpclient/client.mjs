// A client nobody at CommiTea wrote: the official MCP TypeScript SDK,
// pinned in package-lock.json, driven by the api package's Go tests.
//
// The Go test starts it with COMMITEA_URL (an MCP endpoint) and
// COMMITEA_TOKEN in its environment and a plan on standard input:
//
//   {"connections": {"name": {"url": "...", "token": "..."}
//                          | {"command": "...", "args": [...], "env": {...}}},
//    "steps": [{"conn": "name", "op": "callTool", "name": "...", "arguments": {...}}, ...]}
//
// The connection "default" is COMMITEA_URL with COMMITEA_TOKEN. Each
// connection lists the tools once on connecting, as clients do, so that the
// SDK validates structured content against the output schemas. Every step
// prints one JSON line: what the SDK returned (result) or threw (threw), and
// for HTTP the JSON-RPC responses as they came over the wire (wire), so the
// test asserts the server's own form and not only what this SDK accepts.
// Nothing is asserted here.

import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResourceListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

// The SDK's exports map hides its package.json; read the installed one.
const sdkVersion = JSON.parse(readFileSync(new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url), "utf8")).version;

const plan = JSON.parse(readFileSync(0, "utf8"));
const connections = { default: { url: process.env.COMMITEA_URL, token: process.env.COMMITEA_TOKEN }, ...(plan.connections ?? {}) };
const open = new Map();

function print(record) {
  process.stdout.write(JSON.stringify(record) + "\n");
}

// capturingFetch keeps every JSON-RPC response body as it came.
function capturingFetch(wire) {
  return async (url, init) => {
    const res = await fetch(url, init);
    let method;
    try {
      method = JSON.parse(init?.body ?? "null")?.method;
    } catch {
      method = undefined;
    }
    const type = res.headers.get("content-type") ?? "";
    if (type.includes("application/json")) {
      const text = await res.clone().text();
      let body;
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      wire.push({ method, status: res.status, body });
    } else {
      wire.push({ method, status: res.status, contentType: type });
    }
    return res;
  };
}

async function connection(name) {
  if (open.has(name)) {
    return open.get(name);
  }
  const spec = connections[name];
  if (!spec) {
    throw new Error(`no connection ${name}`);
  }
  const c = { wire: [], notifications: [] };
  let transport;
  if (spec.command) {
    transport = new StdioClientTransport({ command: spec.command, args: spec.args ?? [], env: { ...process.env, ...(spec.env ?? {}) }, stderr: "inherit" });
  } else {
    const headers = spec.token ? { Authorization: `Bearer ${spec.token}` } : {};
    transport = new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers }, fetch: capturingFetch(c.wire) });
  }
  c.client = new Client({ name: "commitea-ts-sdk-test", version: "1" });
  c.client.setNotificationHandler(ResourceListChangedNotificationSchema, (n) => {
    c.notifications.push(n.method);
  });
  await c.client.connect(transport);
  const tools = await c.client.listTools();
  print({
    conn: name,
    connected: true,
    sdk: sdkVersion,
    node: process.version,
    server: c.client.getServerVersion(),
    capabilities: c.client.getServerCapabilities(),
    tools: tools.tools.map((t) => t.name),
  });
  open.set(name, c);
  return c;
}

async function waitFor(c, method, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!c.notifications.includes(method)) {
    if (Date.now() > deadline) {
      throw new Error(`no ${method} within ${timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  c.notifications.splice(c.notifications.indexOf(method), 1);
  return { method };
}

async function run(c, step) {
  switch (step.op) {
    case "listTools":
      return c.client.listTools();
    case "callTool":
      return c.client.callTool({ name: step.name, arguments: step.arguments ?? {} });
    case "listResources":
      return c.client.listResources();
    case "listResourceTemplates":
      return c.client.listResourceTemplates();
    case "readResource":
      return c.client.readResource({ uri: step.uri });
    case "waitNotification":
      return waitFor(c, step.method, step.timeoutMs ?? 10000);
    default:
      throw new Error(`unknown op ${step.op}`);
  }
}

let failed = false;
for (const [i, step] of (plan.steps ?? []).entries()) {
  const conn = step.conn ?? "default";
  let c;
  try {
    c = await connection(conn);
  } catch (err) {
    print({ step: i, conn, threw: `connect: ${err?.message ?? err}`, code: err?.code });
    failed = true;
    continue;
  }
  const seen = c.wire.length;
  try {
    const result = await run(c, step);
    print({ step: i, conn, result, wire: c.wire.slice(seen) });
  } catch (err) {
    print({ step: i, conn, threw: err?.message ?? String(err), code: err?.code, wire: c.wire.slice(seen) });
  }
}
for (const c of open.values()) {
  await c.client.close();
}
process.exit(failed ? 1 : 0);
