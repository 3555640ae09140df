"""A hand-written 2025-11-25 MCP server on stdio (no SDK), so a test can put exact bytes on the wire.

Every list is paged: two items per page, with ``nextCursor`` (tools: ``slow_ui``, ``echo``, then
``alpha``, ``beta_on_page_two``, then ``bytes_tool``, ``huge``). Prompts, resources and templates are
paged the same way. Tools:

- ``echo {text}``: says it back; ``beta_on_page_two``: only on the second page of tools/list;
- ``bytes_tool``: a reply with an invalid UTF-8 byte inside its JSON string;
- ``huge {mb}``: a reply of ``mb`` megabytes on one line.

Flags: ``--slow-ui S`` makes every ``resources/read`` of ``ui://raw/view`` take S seconds;
``--big-ui MB`` makes that view MB megabytes of HTML;
``--garbage`` writes a non-JSON line before each reply.
"""

from __future__ import annotations

import json
import sys
import time

ARGS = sys.argv[1:]
SLOW_UI = float(ARGS[ARGS.index("--slow-ui") + 1]) if "--slow-ui" in ARGS else 0.0
GARBAGE = "--garbage" in ARGS
BIG_UI = float(ARGS[ARGS.index("--big-ui") + 1]) if "--big-ui" in ARGS else 0.0
OUT = sys.stdout.buffer

ICON = ("data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAyNCAy"
        "NCI+PGNpcmNsZSBjeD0iMTIiIGN5PSIxMiIgcj0iMTAiIGZpbGw9IiNlMDdhMmUiLz48L3N2Zz4=")
TOOLS = [{"name": "slow_ui", "description": "a tool with a view", "inputSchema": {"type": "object"},
          "_meta": {"ui": {"resourceUri": "ui://raw/view"}}}]
TOOLS += [{"name": n, "description": f"the {n} tool", "inputSchema": {"type": "object"}}
          for n in ("echo", "alpha", "beta_on_page_two", "bytes_tool", "huge")]
TOOLS[1]["icons"] = [{"src": ICON, "mimeType": "image/svg+xml"}]
TOOLS[2]["annotations"] = {"title": "Alpha, by its annotations", "readOnlyHint": True}
TOOLS[5]["execution"] = {"taskSupport": "required"}
PROMPTS = [{"name": f"prompt_{i}", "description": f"prompt number {i}",
            "arguments": [{"name": "topic", "required": True}]} for i in range(3)]
RESOURCES = [{"uri": f"raw://item/{i}", "name": f"item {i}", "mimeType": "text/plain"} for i in range(3)]
RESOURCES.append({"uri": "ui://raw/view", "name": "view", "mimeType": "text/html;profile=mcp-app"})
TEMPLATES = [{"uriTemplate": "raw://item/{id}", "name": "item by id"},
             {"uriTemplate": "raw://page/{book}/{page}", "name": "page of a book"},
             {"uriTemplate": "raw://note/{+path}", "name": "note"}]


def send(obj: dict) -> None:
    if GARBAGE:
        OUT.write(b"this line is not JSON-RPC\n")
    OUT.write(json.dumps(obj).encode() + b"\n")
    OUT.flush()


def page(items: list, params: dict, key: str) -> dict:
    start = int(params.get("cursor") or 0)
    out: dict = {key: items[start:start + 2]}
    if start + 2 < len(items):
        out["nextCursor"] = str(start + 2)
    return out


def answer(msg_id: object, method: str, params: dict) -> None:
    if method == "initialize":
        result = {"protocolVersion": "2025-11-25", "serverInfo": {"name": "raw", "version": "1.0", "title": "Raw server",
                                                                 "icons": [{"src": ICON, "mimeType": "image/svg+xml"},
                                                                           {"src": "https://example.com/remote.png"}]},
                  "capabilities": {"tools": {}, "prompts": {}, "resources": {}, "completions": {}, "logging": {}}}
    elif method == "tools/list":
        result = page(TOOLS, params, "tools")
    elif method == "prompts/list":
        result = page(PROMPTS, params, "prompts")
    elif method == "resources/list":
        result = page(RESOURCES, params, "resources")
    elif method == "resources/templates/list":
        result = page(TEMPLATES, params, "resourceTemplates")
    elif method == "prompts/get":
        topic = (params.get("arguments") or {}).get("topic", "?")
        result = {"description": "a prompt", "messages": [
            {"role": "user", "content": {"type": "text", "text": f"Tell me about {topic} ({params.get('name')})"}}]}
    elif method == "resources/read":
        uri = params.get("uri", "")
        if uri == "ui://raw/view":
            time.sleep(SLOW_UI)
            html = "<!doctype html><title>raw view</title>" + "<!-- padding -->" * int(BIG_UI * 65536)
            result = {"contents": [{"uri": uri, "mimeType": "text/html;profile=mcp-app", "text": html}]}
        else:
            result = {"contents": [{"uri": uri, "mimeType": "text/plain", "text": f"the text of {uri}"}]}
    elif method == "completion/complete":
        value = (params.get("argument") or {}).get("value", "")
        result = {"completion": {"values": [w for w in ("apple", "apricot", "banana") if w.startswith(value)],
                                 "hasMore": False}}
    elif method == "logging/setLevel":
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "notice", "logger": "raw", "data": f"level is now {params.get('level')}"}})
        result = {}
    elif method == "tools/call":
        name, args = params.get("name"), params.get("arguments") or {}
        if name == "bytes_tool":
            head = json.dumps({"jsonrpc": "2.0", "id": msg_id}).encode()[:-1]
            OUT.write(head + b', "result": {"content": [{"type": "text", "text": "caf\xff!"}]}}\n')
            OUT.flush()
            return
        if name == "huge":
            size = int(float(args.get("mb", 40)) * 1024 * 1024)
            head = json.dumps({"jsonrpc": "2.0", "id": msg_id}).encode()[:-1]
            OUT.write(head + b', "result": {"content": [{"type": "text", "text": "')
            block = b"x" * 65536
            for _ in range(size // len(block)):
                OUT.write(block)
            OUT.write(b'"}]}}\n')
            OUT.flush()
            return
        if name not in {t["name"] for t in TOOLS}:
            send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32602, "message": f"no tool {name}"}})
            return
        text = args.get("text", "hi") if name == "echo" else f"{name} ran"
        result = {"content": [{"type": "text", "text": text}]}
    elif method == "ping":
        result = {}
    else:
        send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})
        return
    send({"jsonrpc": "2.0", "id": msg_id, "result": result})


def main() -> None:
    print("raw server up", file=sys.stderr, flush=True)
    for raw in sys.stdin.buffer:
        try:
            msg = json.loads(raw)
        except ValueError:
            continue
        if "id" in msg and "method" in msg:
            answer(msg["id"], msg["method"], msg.get("params") or {})


if __name__ == "__main__":
    main()
