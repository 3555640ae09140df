// The Inspector's exchange view: one row per JSON-RPC request with its response folded in.
//
// The core marks every response with the seq of its request (reply_to), the request's method and
// the time the exchange took (ms), so pairing here is a lookup, not id matching. A response whose
// request is not loaded (older than the fetched pages) keeps a row of its own.

import { methodOf, timeOf } from "./events.js";

export class Exchanges {
  constructor() {
    this.reset([]);
  }

  // Rebuild from a whole list of events (oldest first), after a page or a filter change.
  reset(events) {
    this.rows = [];
    this.requests = new Map(); // seq → request event, for every request that is a row
    this.replies = new Map(); // request seq → its response event
    for (const ev of events) this.add(ev);
  }

  // Add one event at the end; false when it folded into an existing row instead of adding one.
  add(ev) {
    if (ev.reply_to != null && this.requests.has(ev.reply_to)) {
      this.replies.set(ev.reply_to, ev);
      return false;
    }
    if (isRequest(ev)) this.requests.set(ev.seq, ev);
    this.rows.push(ev);
    return true;
  }

  replyOf(ev) {
    return ev ? this.replies.get(ev.seq) : undefined;
  }
}

export const isRequest = (ev) => {
  const m = ev?.message;
  return !!m && typeof m === "object" && typeof m.method === "string" && m.id !== undefined && m.id !== null;
};

// "ok", "error", "pending" for a request; "" for anything that is not one.
export function statusOf(ev, reply) {
  if (!isRequest(ev)) return ev?.message?.error ? "error" : "";
  if (!reply) return "pending";
  return reply.message?.error || reply.message?.result?.isError ? "error" : "ok";
}

export function durationText(ms) {
  if (typeof ms !== "number") return "";
  return ms >= 1000 ? `${(ms / 1000).toFixed(ms >= 10000 ? 0 : 1)} s` : `${Math.round(ms)} ms`;
}

const quote = (s) => `'${String(s).replace(/'/g, "'\\''")}'`;

// A curl command that repeats an MCP request against an HTTP server. Header values are never
// copied (they are often secrets): the names are kept with a placeholder to fill in.
export function curlFor(ev, server) {
  const url = server?.config?.url;
  if (!url || ev.channel !== "mcp.rpc" || !isRequest(ev)) return null;
  const lines = [
    `curl -sS -X POST ${quote(url)}`,
    `-H 'Content-Type: application/json'`,
    `-H 'Accept: application/json, text/event-stream'`,
  ];
  if (server.protocolVersion) lines.push(`-H ${quote(`MCP-Protocol-Version: ${server.protocolVersion}`)}`);
  lines.push(`-H 'Mcp-Session-Id: <the session id, for servers that keep sessions>'`);
  for (const name of Object.keys(server.config.headers || {})) lines.push(`-H ${quote(`${name}: <value>`)}`);
  lines.push(`--data ${quote(JSON.stringify(ev.message))}`);
  return lines.join(" \\\n  ");
}

/** The facts the detail pane lists for `ev` (and its reply), as [label, text]; empty ones left out. */
export function detailFacts(ev, reply) {
  return [
    ["Channel", ev.channel],
    ["Direction", ev.direction],
    ["Server", ev.server],
    ["View", ev.view],
    ["Method", methodOf(ev)],
    ["Time", timeOf(ev)],
    ["Took", durationText(reply ? reply.ms : ev.ms)],
    ["Status", isRequest(ev) ? statusOf(ev, reply) : ""],
    ["Seq", ev.seq],
  ]
    .filter(([, v]) => v !== undefined && v !== null && v !== "")
    .map(([k, v]) => [k, String(v)]);
}
