"""moka-demo over stdio with the standard library alone: MCP JSON-RPC spoken by hand.

Every Moka starts this process, so it is kept light: the `mcp` SDK and pydantic cost it ~40 MiB
PSS (docs/performance.md §11). It answers what the SDK's server answers for these tools and
resources, in both protocol eras the SDK's client negotiates: the `initialize` handshake
(2024-11-05 to 2025-11-25) and the stateless 2026-07-28 envelope (`server/discover`, and
`_meta` on every request). tests/test_demo_stdio.py compares it with the SDK's server.
"""

from __future__ import annotations

import json
import sys
from typing import Any, BinaryIO

from moka_shell.demo import catalog, dice, tools

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSION = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
MAX_MESSAGE = 4 * 1024 * 1024  # bytes on one line; the demo's own messages are a few KB

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
UNSUPPORTED_VERSION = -32022
# This server never changes its lists, so it promises no change notifications in either era.
CAPABILITIES: dict[str, Any] = {"prompts": {"listChanged": False},
                                "resources": {"listChanged": False, "subscribe": False},
                                "tools": {"listChanged": False}}
_CACHED = {"cacheScope": "private", "ttlMs": 0}  # what the SDK adds to list and read results (2026-07-28)


class RpcError(Exception):
    """A JSON-RPC error reply: code, message and optional data."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data

    def wire(self) -> dict[str, Any]:
        """The `error` member of the reply."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            out["data"] = self.data
        return out


class Session:
    """One stdio connection: which era it speaks, and the server's roll history."""

    def __init__(self) -> None:
        self.era: str | None = None  # "handshake" after initialize, "modern" after an enveloped request
        self.log = dice.RollLog()

    def handle(self, message: Any) -> dict[str, Any] | None:
        """The reply to one parsed message, or None for notifications and the client's responses."""
        if not isinstance(message, dict):
            return _error(None, RpcError(INVALID_REQUEST, "Invalid Request: one JSON-RPC object per line"))
        if "method" not in message:
            return None  # a response to nothing we sent, or junk without an id: nothing to answer
        request_id = message.get("id")
        if request_id is None:
            return None  # notifications/initialized, notifications/cancelled (every request is answered at once)
        try:
            return {"jsonrpc": "2.0", "id": request_id, "result": self._result(message)}
        except RpcError as exc:
            return _error(request_id, exc)

    def _result(self, message: dict[str, Any]) -> dict[str, Any]:
        method, params = message.get("method"), message.get("params") or {}
        if not isinstance(method, str) or not isinstance(params, dict):
            raise RpcError(INVALID_REQUEST, "Invalid Request: method must be a string and params an object")
        meta = params.get("_meta")
        if isinstance(meta, dict) and VERSION_KEY in meta:
            return self._modern(method, params, meta)
        if method == "initialize":
            return self._initialize(params)
        if method == "ping" and self.era != "modern":
            return {}
        if self.era != "handshake":
            raise RpcError(INVALID_PARAMS, f"params._meta must be an object carrying the required "
                                           f"'{VERSION_KEY}' and '{CAPABILITIES_KEY}' envelope keys")
        return self._dispatch(method, params)

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.era == "modern":
            raise RpcError(UNSUPPORTED_VERSION, f"connection is serving the {MODERN_VERSION} protocol; "
                           "the initialize handshake is not accepted",
                           {"requested": params.get("protocolVersion"), "supported": [MODERN_VERSION]})
        self.era = "handshake"
        asked = params.get("protocolVersion")
        version = asked if asked in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
        return {"capabilities": CAPABILITIES, "protocolVersion": version, "serverInfo": catalog.SERVER_INFO}

    def _modern(self, method: str, params: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
        if self.era == "handshake":
            raise RpcError(INVALID_REQUEST, "this connection serves the handshake protocol era; requests "
                           f"carrying the {MODERN_VERSION} envelope are not accepted on it")
        self.era = "modern"  # as the SDK does: an envelope, even a refused one, fixes the era
        if meta[VERSION_KEY] != MODERN_VERSION:
            raise RpcError(UNSUPPORTED_VERSION, "Unsupported protocol version",
                           {"requested": meta[VERSION_KEY], "supported": [MODERN_VERSION]})
        if CAPABILITIES_KEY not in meta:
            raise RpcError(INVALID_PARAMS, f"params._meta is missing the required envelope key(s): {CAPABILITIES_KEY}")
        if method in ("ping", "initialize"):
            raise RpcError(METHOD_NOT_FOUND, "Method not found", method)  # gone in 2026-07-28
        if method == "server/discover":
            extensions: dict[str, Any] = {catalog.UI_EXTENSION: {}}
            result = {"supportedVersions": [MODERN_VERSION],
                      "capabilities": {**CAPABILITIES, "extensions": extensions}, **_CACHED}
        else:
            result = self._dispatch(method, params)
            if method != "tools/call":
                result.update(_CACHED)
        return {**result, "resultType": "complete", "_meta": {SERVER_INFO_KEY: catalog.SERVER_INFO}}

    def _dispatch(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "tools/list":
            return {"tools": catalog.TOOLS}
        if method == "tools/call":
            return self._call(params)
        if method == "resources/list":
            return {"resources": catalog.RESOURCES}
        if method == "resources/templates/list":
            return {"resourceTemplates": []}
        if method == "resources/read":
            uri = params.get("uri")
            if not isinstance(uri, str):
                raise RpcError(INVALID_PARAMS, "Invalid request parameters: resources/read needs a string uri")
            contents = catalog.read_resource(uri)
            if contents is None:
                raise RpcError(INVALID_PARAMS, f"Unknown resource: {uri}", {"uri": uri})
            return {"contents": contents}
        if method == "prompts/list":
            return {"prompts": []}
        raise RpcError(METHOD_NOT_FOUND, "Method not found", method)

    def _call(self, params: dict[str, Any]) -> dict[str, Any]:
        name, arguments = params.get("name"), params.get("arguments") or {}
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, "Invalid request parameters: tools/call needs a string name "
                                           "and object arguments")
        if name not in catalog.TOOLS_BY_NAME:
            return {"content": [{"type": "text", "text": f"Unknown tool: {name}"}], "isError": True}
        try:
            return tools.call(name, tools.coerce(name, arguments), self.log)
        except (tools.ArgumentsInvalid, dice.DiceError) as exc:
            return tools.error_result(name, str(exc))


def _error(request_id: Any, error: RpcError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": error.wire()}


def _read_line(stream: BinaryIO) -> bytes | None:
    """One line of at most MAX_MESSAGE bytes; b"" past a longer one (skipped); None at EOF."""
    line = stream.readline(MAX_MESSAGE + 1)
    if not line:
        return None
    if len(line) > MAX_MESSAGE and not line.endswith(b"\n"):
        while (rest := stream.readline(MAX_MESSAGE)) and not rest.endswith(b"\n"):
            pass
        return b""
    return line


def serve(stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Answer one message per line until stdin closes; returns the exit code (0)."""
    session = Session()
    while (line := _read_line(stdin)) is not None:
        reply: dict[str, Any] | None
        if line == b"":  # _read_line skipped a line over MAX_MESSAGE
            reply = _error(None, RpcError(INVALID_REQUEST, "message too large"))
        elif not line.strip():
            continue
        else:
            try:
                reply = session.handle(json.loads(line))
            except ValueError:  # json.JSONDecodeError and UnicodeDecodeError
                reply = _error(None, RpcError(PARSE_ERROR, "Parse error: not one JSON value on this line"))
        if reply is not None:
            stdout.write(json.dumps(reply, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
            stdout.flush()
    return 0


def main() -> int:
    """Serve stdin/stdout; stdout is the protocol channel, so nothing else may write there."""
    try:
        return serve(sys.stdin.buffer, sys.stdout.buffer)
    except (KeyboardInterrupt, BrokenPipeError):
        return 0
