// The Inspector's reading of events (js/inspector/events.js) and its request/response pairing
// (js/inspector/pairs.js). The core marks each response with its request's seq (reply_to), so the
// pairing never guesses from JSON-RPC ids, which servers reuse and which a view may repeat.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { matches, methodOf, summaryOf, textOf } from "../../src/moka_shell/web/static/js/inspector/events.js";
import {
  curlFor,
  detailFacts,
  durationText,
  Exchanges,
  isRequest,
  statusOf,
} from "../../src/moka_shell/web/static/js/inspector/pairs.js";

let seq = 0;
const request = (id, method = "tools/call", extra = {}) => ({
  seq: ++seq,
  channel: "mcp.rpc",
  server: "demo",
  method,
  message: { jsonrpc: "2.0", id, method, params: {} },
  ...extra,
});
const response = (req, body = { result: {} }, extra = {}) => ({
  seq: ++seq,
  channel: "mcp.rpc",
  server: "demo",
  reply_to: req?.seq,
  request_method: req?.message.method,
  ms: 12,
  message: { jsonrpc: "2.0", id: req?.message.id, ...body },
  ...extra,
});
const notification = (method = "notifications/progress") => ({
  seq: ++seq,
  channel: "mcp.rpc",
  message: { jsonrpc: "2.0", method, params: {} },
});

describe("pairing", () => {
  test("a response folds into its request's row", () => {
    const ex = new Exchanges();
    const req = request(1);
    assert.equal(ex.add(req), true);
    const res = response(req);
    assert.equal(ex.add(res), false);
    assert.deepEqual(ex.rows, [req]);
    assert.equal(ex.replyOf(req), res);
    assert.equal(statusOf(req, ex.replyOf(req)), "ok");
  });

  test("reused ids (two servers, or one server after a restart) pair by seq, not id", () => {
    const ex = new Exchanges();
    const a = request(1, "tools/list", { server: "a" });
    const b = request(1, "tools/call", { server: "b" });
    const again = request(1, "ping", { server: "a" });
    const resB = response(b, { error: { code: -1, message: "no" } });
    const resA = response(a);
    const resAgain = response(again);
    ex.reset([a, b, resB, again, resA, resAgain]);
    assert.deepEqual(ex.rows, [a, b, again]);
    assert.equal(ex.replyOf(a), resA);
    assert.equal(ex.replyOf(b), resB);
    assert.equal(ex.replyOf(again), resAgain);
    assert.deepEqual(
      ex.rows.map((r) => statusOf(r, ex.replyOf(r))),
      ["ok", "error", "ok"],
    );
  });

  test("a response whose request is not loaded (or not marked) keeps a row of its own", () => {
    const ex = new Exchanges();
    const orphan = response({ seq: -5, message: { id: 9, method: "tools/call" } });
    const unmarked = response(undefined);
    ex.reset([orphan, unmarked]);
    assert.deepEqual(ex.rows, [orphan, unmarked]);
    assert.equal(statusOf(orphan, undefined), "");
    assert.equal(statusOf(response(undefined, { error: { code: 1 } }), undefined), "error");
  });

  test("a request with no answer yet is pending; a later answer fills it in", () => {
    const ex = new Exchanges();
    const req = request("abc");
    ex.add(req);
    assert.equal(statusOf(req, ex.replyOf(req)), "pending");
    ex.add(response(req, { result: { isError: true, content: [] } }));
    assert.equal(statusOf(req, ex.replyOf(req)), "error"); // a tool error is an error too
  });

  test("a second answer to the same request replaces the first (the newest is shown)", () => {
    const ex = new Exchanges();
    const req = request(2);
    ex.add(req);
    ex.add(response(req, { error: { code: -32001 } }));
    const late = response(req);
    assert.equal(ex.add(late), false);
    assert.equal(ex.replyOf(req), late);
    assert.equal(ex.rows.length, 1);
  });

  test("notifications and id-less or null-id messages are rows, not requests", () => {
    const note = notification();
    assert.equal(isRequest(note), false);
    assert.equal(isRequest(request(null)), false);
    assert.equal(isRequest(request(undefined)), false);
    assert.equal(isRequest(request(0)), true); // 0 is an id
    assert.equal(isRequest({ message: "text" }), false);
    assert.equal(isRequest(undefined), false);
    const ex = new Exchanges();
    ex.reset([note, request(null)]);
    assert.equal(ex.rows.length, 2);
    assert.equal(ex.requests.size, 0);
  });

  test("reset starts over: replies of the old list are forgotten", () => {
    const ex = new Exchanges();
    const req = request(3);
    ex.reset([req, response(req)]);
    ex.reset([req]);
    assert.equal(ex.replyOf(req), undefined);
    assert.equal(ex.replyOf(null), undefined);
  });
});

describe("durations, facts and curl", () => {
  test("durationText", () => {
    assert.equal(durationText(0.4), "0 ms");
    assert.equal(durationText(999.4), "999 ms");
    assert.equal(durationText(1000), "1.0 s");
    assert.equal(durationText(12345), "12 s");
    assert.equal(durationText(undefined), "");
    assert.equal(durationText("5"), "");
  });

  test("detailFacts: empty facts left out, a request's time is its reply's", () => {
    const req = request(4, "tools/call", { direction: "out", seq: 40 });
    const facts = detailFacts(req, { ms: 1500, message: { result: {} } });
    assert.deepEqual(
      facts.filter(([k]) => k !== "Time"),
      [
        ["Channel", "mcp.rpc"],
        ["Direction", "out"],
        ["Server", "demo"],
        ["Method", "tools/call"],
        ["Took", "1.5 s"],
        ["Status", "ok"],
        ["Seq", "40"],
      ],
    );
  });

  test("curlFor repeats a request to an HTTP server, never its header values", () => {
    const req = request(5, "tools/list");
    const server = {
      config: { url: "http://127.0.0.1:3001/mcp", headers: { Authorization: "Bearer s3cret", "X-Key": "k" } },
      protocolVersion: "2025-06-18",
    };
    const curl = curlFor(req, server);
    assert.match(curl, /^curl -sS -X POST 'http:\/\/127\.0\.0\.1:3001\/mcp'/);
    assert.match(curl, /-H 'MCP-Protocol-Version: 2025-06-18'/);
    assert.match(curl, /-H 'Authorization: <value>'/);
    assert.ok(!curl.includes("s3cret") && !curl.includes("'X-Key: k'"));
    assert.ok(curl.endsWith(`--data '${JSON.stringify(req.message)}'`));
    assert.equal(curlFor(req, { config: { command: "node" } }), null); // stdio: nothing to curl
    assert.equal(curlFor(notification(), server), null);
    assert.equal(curlFor({ ...req, channel: "view.rpc" }, server), null);
  });

  test("curlFor quotes a single quote in the body the shell's way", () => {
    const req = request(6, "tools/call");
    req.message.params = { text: "it's" };
    assert.ok(curlFor(req, { config: { url: "http://127.0.0.1:1/mcp" } }).includes(`it'\\''s`));
  });
});

describe("reading events", () => {
  test("textOf spells the message as Python's json.dumps does, so live and stored search agree", () => {
    const ev = { message: { b: [1, "é"], a: { ü: null, t: true } } };
    assert.equal(textOf(ev), '{"b": [1, "\\u00e9"], "a": {"\\u00fc": null, "t": true}}');
    assert.equal(textOf({ message: "Hi" }), '"hi"');
    assert.equal(textOf({}), "null");
  });

  test("matches: every filter must hold; text is searched case-blind, non-ASCII escaped", () => {
    const ev = { channel: "mcp.rpc", server: "demo", view: "v1", method: "tools/call", message: { q: "Café" } };
    assert.equal(matches(ev, {}), true);
    assert.equal(matches(ev, { channel: "mcp" }), true);
    assert.equal(matches(ev, { channel: "view" }), false);
    assert.equal(matches(ev, { server: "other" }), false);
    assert.equal(matches(ev, { view: "v2" }), false);
    assert.equal(matches(ev, { method: "call" }), true);
    assert.equal(matches(ev, { text: "CAFÉ" }), true);
    assert.equal(matches(ev, { text: "cafe" }), false);
    assert.equal(matches({ request_method: "tools/call" }, { method: "tools" }), true);
  });

  test("methodOf says what a response answers", () => {
    const req = request(7, "resources/read");
    assert.equal(methodOf(response(req)), "result · resources/read");
    assert.equal(methodOf(response(req, { error: { code: 1 } })), "error · resources/read");
    assert.equal(methodOf({ message: { id: 3, result: {} } }), "result #3");
    assert.equal(methodOf({ message: { id: 3, error: {} } }), "error #3");
    assert.equal(methodOf({ method: "ui/initialize", message: {} }), "ui/initialize");
    assert.equal(methodOf({ message: "text" }), "");
  });

  test("summaryOf shows the params, result or error, cut at 240 characters", () => {
    assert.equal(summaryOf({ message: { id: 1, method: "m", params: { a: 1 } } }), '{"a":1}');
    assert.equal(summaryOf({ message: { id: 1, result: [] } }), "[]");
    const long = summaryOf({ message: { params: "x".repeat(500) } });
    assert.equal(long.length, 241);
    assert.ok(long.endsWith("…"));
    const circular = { params: {} };
    circular.params.self = circular.params;
    assert.equal(summaryOf({ message: circular }), "[object Object]");
    assert.equal(summaryOf({ message: null }), "");
  });
});
