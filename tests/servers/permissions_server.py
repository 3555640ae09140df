"""Two minimal UI tools for the sandbox proxy tests: one plain, one whose view asks for permissions.

Run it as `python tests/servers/permissions_server.py` (stdio). It imports only `mcp` and the
handshake script of broken_apps_server.py next to it.
"""

from __future__ import annotations

from typing import Any

from mcp.server import MCPServer

from broken_apps_server import APP_MIME, page

BASE = "ui://permissions"


def build_server() -> MCPServer:
    """Build the server."""
    server = MCPServer("permissions", version="0.0.1", log_level="WARNING")
    plain, camera = f"{BASE}/plain", f"{BASE}/camera"
    server.resource(plain, name="plain", mime_type=APP_MIME)(lambda: page("plain"))
    server.resource(camera, name="camera", mime_type=APP_MIME,
                    meta={"ui": {"permissions": {"camera": {}, "clipboardWrite": {}}}})(lambda: page("camera"))
    server.add_tool(_runner("plain"), name="plain", description="A view with no permissions.",
                    meta={"ui": {"resourceUri": plain}})
    server.add_tool(_runner("camera"), name="camera", description="A view that asks for the camera.",
                    meta={"ui": {"resourceUri": camera}})
    return server


def _runner(name: str) -> Any:
    def run() -> str:
        return f"{name} ran"

    return run


if __name__ == "__main__":
    build_server().run("stdio")
