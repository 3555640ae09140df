"""A deliberately broken MCP Apps server for testing `moka check`: each UI tool is wrong in exactly one way.

Run it as `python tests/servers/broken_apps_server.py` (stdio). It imports only `mcp`.

Tools and what each breaks:
- `ok`: nothing; its view handshakes properly (the control case).
- `wrong_mime`: its resource is served as `text/html` instead of `text/html;profile=mcp-app`.
- `bad_uri`: its `_meta.ui.resourceUri` is `https://not-ui/x`, not a `ui://` URI.
- `csp_on_tool`: the tool's `_meta.ui` carries `csp`, which belongs on the resource only; the view works.
- `no_handshake`: the view's script never sends `ui/initialize`.
- `throws`: the view completes the handshake, then throws an uncaught error.
- `csp_violation`: the view handshakes, then fetches `http://127.0.0.1:9/undeclared` with no `connectDomains`.
- `missing_resource`: `_meta.ui.resourceUri` points at a `ui://` resource that does not exist.
- `read_error`: its resource exists, but reading it fails with an error.
- `app_only_helper`: visibility `["app"]` and no resourceUri; legitimate, must be hidden from the model.
- `bad_visibility`: visibility `["nobody"]`, a value the spec does not define.
- `unreachable`: visibility `[]`, so neither the model nor any view may call it.
"""

from __future__ import annotations

from typing import Any

from mcp.server import MCPServer

APP_MIME = "text/html;profile=mcp-app"
BASE = "ui://broken-apps"

# Sends ui/initialize, answers ping/teardown, sends initialized, then runs `after()`.
HANDSHAKE = """
<script>
(function () {
  var pending = {};
  function post(message) { window.parent.postMessage(message, "*"); }
  window.addEventListener("message", function (event) {
    if (event.source !== window.parent) return;
    var message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.method && message.id !== undefined) {
      var known = message.method === "ping" || message.method === "ui/resource-teardown";
      post(known ? { jsonrpc: "2.0", id: message.id, result: {} }
                 : { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } });
    } else if (!message.method && pending[message.id]) {
      pending[message.id](message);
      delete pending[message.id];
    }
  });
  pending[0] = function (response) {
    if (response.error) { document.body.setAttribute("data-state", "refused"); return; }
    post({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    document.body.setAttribute("data-state", "ready");
    if (window.after) window.after();
  };
  post({ jsonrpc: "2.0", id: 0, method: "ui/initialize", params: {
    protocolVersion: "2026-01-26",
    appInfo: { name: "broken-apps", version: "0.0.1" },
    appCapabilities: {}
  } });
})();
</script>
"""


def page(title: str, script: str = HANDSHAKE, after: str = "") -> str:
    """A minimal view document; `after` is JS run once the handshake is done."""
    hook = f"<script>window.after = function () {{ {after} }};</script>" if after else ""
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>"
        f"{title}</title></head><body data-state='waiting'><h1>{title}</h1>"
        f"<p id='out'></p>{hook}{script}</body></html>"
    )


def ui(uri: str, **extra: Any) -> dict[str, Any]:
    """Tool `_meta` pointing at a UI resource."""
    return {"ui": {"resourceUri": uri, **extra}}


def build_server() -> MCPServer:
    """Build the broken server."""
    server = MCPServer("broken-apps", version="0.0.1", log_level="WARNING")

    def view(name: str, html: str, mime_type: str = APP_MIME) -> str:
        uri = f"{BASE}/{name}"
        server.resource(uri, name=name, mime_type=mime_type)(lambda: html)
        return uri

    ok_uri = view("ok", page("ok"))
    wrong_mime_uri = view("wrong-mime", page("wrong mime"), mime_type="text/html")
    csp_tool_uri = view("csp-on-tool", page("csp on tool"))
    silent_uri = view("no-handshake", page("no handshake", script="<script>document.title = 'silent';</script>"))
    throws_uri = view("throws", page("throws", after="throw new Error('broken-apps: deliberate uncaught error');"))
    fetch_js = (
        "fetch('http://127.0.0.1:9/undeclared').then("
        "function () { document.getElementById('out').textContent = 'fetch allowed'; },"
        "function (e) { document.getElementById('out').textContent = 'fetch failed: ' + e; });"
    )
    violation_uri = view("csp-violation", page("csp violation", after=fetch_js))
    read_error_uri = f"{BASE}/read-error"

    @server.resource(read_error_uri, name="read-error", mime_type=APP_MIME)
    def read_error() -> str:
        raise RuntimeError("broken-apps: deliberate read error")

    tools: list[tuple[str, dict[str, Any], str]] = [
        ("ok", ui(ok_uri), "A correct app: the view handshakes properly."),
        ("wrong_mime", ui(wrong_mime_uri), "Its resource is served as text/html."),
        ("bad_uri", ui("https://not-ui/x"), "Its resourceUri is not a ui:// URI."),
        (
            "csp_on_tool",
            ui(csp_tool_uri, csp={"connectDomains": ["https://evil.example"]}),
            "Carries csp in the tool's _meta.ui (only allowed on the resource).",
        ),
        ("no_handshake", ui(silent_uri), "Its view never sends ui/initialize."),
        ("throws", ui(throws_uri), "Its view throws an uncaught error after the handshake."),
        ("csp_violation", ui(violation_uri), "Its view fetches an undeclared origin."),
        ("missing_resource", ui(f"{BASE}/does-not-exist"), "Its resourceUri names no resource."),
        ("read_error", ui(read_error_uri), "Reading its resource fails."),
        ("app_only_helper", {"ui": {"visibility": ["app"]}}, "App-only helper; hidden from the model."),
        ("bad_visibility", {"ui": {"visibility": ["nobody"]}}, "Visibility holds an undefined value."),
        ("unreachable", {"ui": {"visibility": []}}, "Visibility is empty: nobody may call it."),
    ]
    for name, meta, description in tools:
        server.add_tool(_runner(name), name=name, description=description, meta=meta)
    return server


def _runner(name: str) -> Any:
    def run() -> str:
        return f"{name} ran; its UI (if any) is the thing under test."

    return run


if __name__ == "__main__":
    build_server().run("stdio")
