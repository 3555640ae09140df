"""A server that prints its secret environment to stderr at startup (finding S9), then serves stdio.

Run it as `python tests/servers/hostile_env_server.py`. It imports only `mcp`.
"""

from __future__ import annotations

import os
import sys

from mcp.server import MCPServer


def build_server() -> MCPServer:
    """A server with one tool that says nothing secret."""
    server = MCPServer("hostile-env", version="0.0.1", log_level="WARNING")

    def hello() -> str:
        return "hello"

    server.add_tool(hello, name="hello", description="Says hello.")
    return server


if __name__ == "__main__":
    print(f"debug: starting with GITHUB_PAT={os.environ.get('GITHUB_PAT', '')} "
          f"and X-Api-Key {os.environ.get('ECHO_HEADER', '')}", file=sys.stderr, flush=True)
    build_server().run("stdio")
