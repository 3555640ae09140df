"""Views `moka check` used to judge wrongly, one tool per case (findings C1-C7, V1).

Run it as `python tests/servers/truth_server.py` (stdio); `--no-ui` serves one plain tool and no
UI at all. It imports only `mcp` and the bridge of late_failures_server.py next to it.

Tools and what each is:
- `permissions`: a working view whose resource declares clipboardWrite and microphone (valid).
- `blob_csp`: a working view whose resource lists `blob:` in resourceDomains (harmless).
- `painted_blank`: handshakes, never sizes itself, and paints nothing: html and body are 0 px
  tall with overflow hidden, so its text is in the DOM but never on screen.
- `cdn_missing`: its only script comes from a declared local origin that answers 404.
- `csp_blocked_entry`: its only script comes from an origin it never declared.
- `sizes_from_frame`: a dashboard that fills its frame (100vh) and reports the frame's height
  back; its content is 500 px tall.
- `clipped_by_frame`: the same with 700 px of content, below Moka's starting height.
"""

from __future__ import annotations

import http.server
import sys
import threading
from typing import Any

from mcp.server import MCPServer

from late_failures_server import BRIDGE, RENDER

APP_MIME = "text/html;profile=mcp-app"
BASE = "ui://truth"

# Sends the frame's own height, as an app that measures a 100vh document does: once it has its
# result (before, an out-of-process frame may not know its size yet), and on every resize.
FRAME_SIZED = ("function send() { window.parent.postMessage({ jsonrpc: '2.0', method: "
               "'ui/notifications/size-changed', params: { height: window.innerHeight } }, '*'); }"
               "send(); window.addEventListener('resize', send);")


def page(title: str, on_result: str, *, head: str = "", body: str = "", bridge: str = BRIDGE) -> str:
    """A view document: `on_result` runs (with the result as `r`) when the tool result arrives."""
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>{head}</head><body>"
            f"{body}<script>window.onResult = function (r) {{ {on_result} }};</script>{bridge}</body></html>")


def dashboard(content_px: int) -> str:
    """A view that fills its frame and hides what does not fit, sized from the frame."""
    style = ("<style>html, body { margin: 0; height: 100vh; overflow: hidden; }"
             f" #board {{ position: relative; height: {content_px}px; background: linear-gradient(#2a6, #26a); }}"
             " #end { position: absolute; bottom: 0; margin: 0; font: 20px sans-serif; }</style>")
    return page(f"dashboard {content_px}", FRAME_SIZED, head=style,
                body=f"<div id='board'><p id='end'>end of the {content_px} px board</p></div>")


def start_cdn() -> str:
    """A local origin that answers 404 to everything (a CDN path that is gone)."""
    class Gone(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            self.send_error(404, "Not Found")

        def log_message(self, *args: Any) -> None:
            pass  # stdout is the MCP channel

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Gone)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}"


def views(cdn: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each tool's document and its resource's `_meta.ui`."""
    return {
        "permissions": (page("permissions", RENDER), {"permissions": {"clipboardWrite": {}, "microphone": {}}}),
        "blob_csp": (page("blob csp", RENDER), {"csp": {"resourceDomains": ["blob:"]}}),
        "painted_blank": (page("painted blank", "", head="<style>html, body { height: 0; margin: 0; overflow: hidden; }"
                               "</style>", body="<p>This text is in the document but never painted.</p>"), {}),
        "cdn_missing": (page("cdn missing", "", bridge=f"<script src='{cdn}/sdk/app.js'></script>"),
                        {"csp": {"resourceDomains": [cdn]}}),
        "csp_blocked_entry": (page("csp blocked", "", bridge="<script src='https://cdn.undeclared.example/app.js'>"
                                   "</script>"), {}),
        "sizes_from_frame": (dashboard(500), {}),
        "clipped_by_frame": (dashboard(700), {}),
    }


def build_server(*, ui: bool = True) -> MCPServer:
    """Build the server (with `ui=False`, a server with no UI tool)."""
    server = MCPServer("truth", version="0.0.1", log_level="WARNING")
    server.add_tool(_runner("plain"), name="plain", description="A tool with no UI.")
    if not ui:
        return server
    for name, (html, meta) in views(start_cdn()).items():
        uri = f"{BASE}/{name}"
        server.resource(uri, name=name, mime_type=APP_MIME, meta={"ui": meta} if meta else None)(_document(html))
        server.add_tool(_runner(name), name=name, description=f"View: {name}", meta={"ui": {"resourceUri": uri}})
    return server


def _document(html: str) -> Any:
    def read() -> str:
        return html

    return read


def _runner(name: str) -> Any:
    def run() -> str:
        return f"{name} ran at the server"

    return run


if __name__ == "__main__":
    build_server(ui="--no-ui" not in sys.argv[1:]).run("stdio")
