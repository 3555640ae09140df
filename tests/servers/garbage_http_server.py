"""A hand-written 2025-11-25 MCP server over streamable HTTP (no SDK): ``garbage_http_server.py PORT``.

Every reply is an SSE stream. The tool ``garbage`` is answered with an event that is not JSON first;
``echo`` is answered cleanly.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    """POST /mcp: one JSON-RPC message in, an SSE reply out (202 for notifications)."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        msg = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        if "id" not in msg:
            self.send_response(202)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        method, params = msg.get("method"), msg.get("params") or {}
        events = []
        if method == "initialize":
            result: dict = {"protocolVersion": "2025-11-25", "serverInfo": {"name": "garbage", "version": "1"},
                            "capabilities": {"tools": {}}}
        elif method == "tools/list":
            result = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in ("echo", "garbage")]}
        elif method == "tools/call":
            if params.get("name") == "garbage":
                events.append("event: message\ndata: {this is not json\n\n")
            result = {"content": [{"type": "text", "text": f"{params.get('name')} answered"}]}
        else:
            events.append("event: message\ndata: " + json.dumps(
                {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}}) + "\n\n")
            result = None
        if result is not None:
            events.append("event: message\ndata: " + json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n\n")
        body = "".join(events).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.send_response(405)
        self.send_header("content-length", "0")
        self.end_headers()

    do_DELETE = do_GET

    def log_message(self, format: str, *args: object) -> None:
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
