"""An MCP server over the legacy HTTP+SSE transport (the SDK's server side): ``sse_server.py PORT``.

The event stream is at ``/sse``; messages are POSTed to the URL its first event names.
"""

from __future__ import annotations

import sys

from mcp.server import MCPServer

server = MCPServer("sse-server")


@server.tool()
def echo(text: str = "hi") -> str:
    """Say it back."""
    return f"sse says {text}"


@server.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Hello {name}, over SSE"


if __name__ == "__main__":
    server.run("sse", host="127.0.0.1", port=int(sys.argv[1]))
