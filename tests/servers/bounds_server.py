"""An MCP server that pushes Moka's bounds: big UI results and floods of stderr (tests and bench/bounds.py)."""

from __future__ import annotations

import sys

from mcp.server import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("bounds-server")
CHUNK = 1 << 20


@server.tool(meta={"ui": {"resourceUri": "ui://bounds/view"}}, annotations=ToolAnnotations(read_only_hint=True))
def big_view(mb: float = 3.0) -> str:
    """A UI tool whose result is ``mb`` megabytes of text."""
    return "r" * int(mb * CHUNK)


@server.resource("ui://bounds/view", mime_type="text/html;profile=mcp-app")
def bounds_view() -> str:
    """A trivial view (no script: nothing mounts it in these runs)."""
    return "<!doctype html><html><head><title>bounds</title></head><body>bounds</body></html>"


@server.tool()
def stderr(mb: float = 1.0, line_kb: float = 1.0, newline: bool = True) -> str:
    """Write ``mb`` megabytes to stderr: lines of ``line_kb`` KB, or (newline=false) one endless line."""
    total = int(mb * CHUNK)
    if newline:
        line = ("e" * max(1, int(line_kb * 1024) - 1) + "\n").encode()
        block = line * max(1, CHUNK // len(line))
    else:
        block = b"n" * CHUNK
    written = 0
    out = sys.stderr.buffer
    while written < total:
        out.write(block)
        written += len(block)
    out.write(b"\nend of the flood\n")
    out.flush()
    return f"wrote {written} bytes"


@server.tool()
def ping() -> str:
    """Still alive?"""
    return "pong"


if __name__ == "__main__":
    server.run()
