"""A hand-written 2025-11-25 MCP server over streamable HTTP (no SDK): ``http_faults_server.py PORT``.

Replies are plain JSON (``application/json``). The tools inject HTTP faults:

- ``echo``: answered cleanly;
- ``fail``: HTTP 500 with a short text body (a proxy or a crashed handler);
- ``big {mib, framing}``: a result of ``mib`` MiB of text, sent with a Content-Length (``"length"``),
  chunked with none (``"chunked"``), or as one SSE event (``"sse"``); the body is written as it is
  made, so the server never holds it whole either.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHUNK = 1 << 20
TOOLS = [{"name": n, "inputSchema": {"type": "object"}} for n in ("echo", "fail", "big")]


class Handler(BaseHTTPRequestHandler):
    """POST /mcp: one JSON-RPC message in; 202 for notifications."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        msg = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        if "id" not in msg:
            self._send(202, "text/plain", b"")
            return
        method, params = msg.get("method"), msg.get("params") or {}
        if method == "initialize":
            self._reply(msg, {"protocolVersion": "2025-11-25", "serverInfo": {"name": "faults", "version": "1"},
                              "capabilities": {"tools": {}}})
        elif method == "tools/list":
            self._reply(msg, {"tools": TOOLS})
        elif method == "tools/call" and params.get("name") == "fail":
            self._send(500, "text/plain", b"upstream exploded:\n  database on fire")
        elif method == "tools/call" and params.get("name") == "big":
            args = params.get("arguments") or {}
            self._big(msg["id"], float(args.get("mib", 1)), str(args.get("framing", "length")))
        elif method == "tools/call":
            self._reply(msg, {"content": [{"type": "text", "text": "echo answered"}]})
        else:
            self._send(200, "application/json", json.dumps(
                {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}}).encode())

    def _reply(self, msg: dict, result: dict) -> None:
        self._send(200, "application/json", json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode())

    def _send(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _big(self, request_id: object, mib: float, framing: str) -> None:
        size = int(mib * CHUNK)
        head = (json.dumps({"jsonrpc": "2.0", "id": request_id})[:-1] + ', "result": {"content": [{"type": "text", '
                '"text": "').encode()
        tail = b'"}]}}'
        if framing == "sse":
            head, tail = b"event: message\ndata: " + head, tail + b"\n\n"
        self.send_response(200)
        self.send_header("content-type", "text/event-stream" if framing == "sse" else "application/json")
        if framing == "length":
            self.send_header("content-length", str(len(head) + size + len(tail)))
        else:
            self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        pieces = [head] + [b"z" * min(CHUNK, size - i) for i in range(0, size, CHUNK)] + [tail]
        try:
            for piece in pieces:
                if framing == "length":
                    self.wfile.write(piece)
                else:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            if framing != "length":
                self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):  # Moka stopped reading: that is the point
            self.close_connection = True

    def do_GET(self) -> None:
        self._send(405, "text/plain", b"")

    do_DELETE = do_GET

    def log_message(self, format: str, *args: object) -> None:
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
