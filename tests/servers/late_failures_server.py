"""Views that fail only after their tool result arrived, for `moka check`'s settle watch.

Run it as `python tests/servers/late_failures_server.py` (stdio). It imports only `mcp`.

Tools and what each does once `ui/notifications/tool-result` arrived:
- `good`: renders the result and sends its size (the control).
- `throws_late`: renders, sizes itself, then throws an uncaught error 200 ms later.
- `csp_late`: renders, sizes itself, then fetches an undeclared origin 200 ms later.
- `never_sized`: completes the handshake and never sends a size or renders anything.
- `reads_context`: reads `hostContext.containerDimensions.maxHeight` unchecked (breaks under `--profile minimal`).
- `uses_indexeddb`: renders, sizes itself, then opens IndexedDB unguarded (a SecurityError in a view).
- `asks_person`: renders, sizes itself, then asks to open a link (a person would be asked).
- `bad_uri` and `csp_on_tool`: metadata mistakes on other tools (no view, or a view that works).
"""

from __future__ import annotations

from typing import Any

from mcp.server import MCPServer

APP_MIME = "text/html;profile=mcp-app"
BASE = "ui://late-failures"

# A bridge of its own: ui/initialize → initialized; answers ping and teardown; calls
# window.onResult(result) on tool-result; window.sizeMe() sends the body's height.
BRIDGE = """
<script>
(function () {
  var next = 1, waiting = {};
  function post(m) { window.parent.postMessage(m, "*"); }
  window.request = function (method, params) {
    var id = next++;
    post({ jsonrpc: "2.0", id: id, method: method, params: params });
    return new Promise(function (resolve) { waiting[id] = resolve; });
  };
  window.sizeMe = function () {
    post({ jsonrpc: "2.0", method: "ui/notifications/size-changed",
           params: { width: document.documentElement.scrollWidth,
                     height: Math.ceil(document.documentElement.getBoundingClientRect().height) } });
  };
  window.addEventListener("message", function (event) {
    if (event.source !== window.parent) return;
    var m = event.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.method && m.id !== undefined) {
      var known = m.method === "ping" || m.method === "ui/resource-teardown";
      post(known ? { jsonrpc: "2.0", id: m.id, result: {} }
                 : { jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
    } else if (!m.method && waiting[m.id]) {
      waiting[m.id](m); delete waiting[m.id];
    } else if (m.method === "ui/notifications/tool-result" && window.onResult) {
      window.onResult(m.params);
    }
  });
  window.request("ui/initialize", { protocolVersion: "2026-01-26",
    appInfo: { name: "late-failures", version: "0.0.1" }, appCapabilities: {} }).then(function (r) {
    if (r.error) return;
    post({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    if (window.onInit) window.onInit(r.result);  // as after the SDK's connect(): the app reads its context
  });
})();
</script>
"""

RENDER = ("var p = document.createElement('p'); p.id = 'out';"
          "p.textContent = (r.content && r.content[0] && r.content[0].text) || 'no text';"
          "document.body.appendChild(p); window.sizeMe();")


def page(title: str, on_result: str, *, heading: bool = True, on_init: str = "") -> str:
    """A view document that runs `on_result` (JS, with the result as `r`) when its result arrives,
    and `on_init` (with the ui/initialize result as `i`) once it said initialized."""
    h1 = f"<h1>{title}</h1>" if heading else ""
    init = f"window.onInit = function (i) {{ {on_init} }};" if on_init else ""
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head><body>{h1}"
            f"<script>window.onResult = function (r) {{ {on_result} }};{init}</script>{BRIDGE}</body></html>")


VIEWS: dict[str, str] = {
    "good": page("good", RENDER),
    "throws_late": page("throws late", RENDER + "setTimeout(function () {"
                        " throw new Error('late-failures: thrown 200 ms after the result'); }, 200);"),
    "csp_late": page("csp late", RENDER + "setTimeout(function () {"
                     " fetch('https://undeclared.example/data').catch(function () {}); }, 200);"),
    "never_sized": page("never sized", "", heading=False),
    # Reads a hostContext field without checking it is there: fine in Moka, broken where it is left out.
    "reads_context": page("reads context", RENDER, on_init="window.maxHeight = i.hostContext.containerDimensions.maxHeight;"),
    # IndexedDB in an opaque-origin view: a SecurityError, uncaught.
    "uses_indexeddb": page("uses indexeddb", RENDER + "setTimeout(function () { indexedDB.open('notes'); }, 50);"),
    "asks_person": page("asks person", RENDER + "setTimeout(function () {"
                        " window.request('ui/open-link', { url: 'https://example.com/docs' }).then(function (a) {"
                        " document.getElementById('out').textContent = 'link answer: ' + JSON.stringify(a); });"
                        " }, 100);"),
}


def build_server() -> MCPServer:
    """Build the server."""
    server = MCPServer("late-failures", version="0.0.1", log_level="WARNING")
    for name, html in VIEWS.items():
        uri = f"{BASE}/{name}"
        server.resource(uri, name=name, mime_type=APP_MIME)(_document(html))
        server.add_tool(_runner(name), name=name, description=f"View: {name}", meta={"ui": {"resourceUri": uri}})
    server.add_tool(_runner("bad_uri"), name="bad_uri", description="resourceUri is not ui://",
                    meta={"ui": {"resourceUri": "https://not-ui/x"}})
    server.add_tool(_runner("csp_on_tool"), name="csp_on_tool", description="csp on the tool",
                    meta={"ui": {"resourceUri": f"{BASE}/good", "csp": {"connectDomains": ["https://x.example"]}}})
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
    build_server().run("stdio")
