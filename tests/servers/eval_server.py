"""A UI tool whose app needs eval(): its whole handshake runs through eval, as some bundles do.

Run it as `python tests/servers/eval_server.py` (stdio). Under Moka's default view policy the
eval is blocked, the handshake never happens and the view fails; with "allowUnsafeEval" it works.
"""

from __future__ import annotations

import json

from mcp.server import MCPServer

from broken_apps_server import APP_MIME, HANDSHAKE, page

URI = "ui://eval-app/needs-eval"


def needs_eval_page() -> str:
    body = HANDSHAKE.strip().removeprefix("<script>").removesuffix("</script>")
    source = json.dumps(body).replace("</", "<\\/")
    return page("needs eval", script=f"<script>eval({source});</script>")


def build_server() -> MCPServer:
    """Build the server."""
    server = MCPServer("eval-app", version="0.0.1", log_level="WARNING")
    server.resource(URI, name="needs-eval", mime_type=APP_MIME)(needs_eval_page)

    def run() -> str:
        return "ran"

    server.add_tool(run, name="needs_eval", description="An app that needs eval().", meta={"ui": {"resourceUri": URI}})
    return server


if __name__ == "__main__":
    build_server().run("stdio")
