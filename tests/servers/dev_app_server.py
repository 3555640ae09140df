"""An app author's server for the live-reload tests: one UI tool, everything in this one file.

The tests copy it into a folder of their own and edit it there, as an author would: ``HEADLINE``
is the text the view shows in ``#headline`` (an edit changes it), and the view shows the tool's
result text in ``#result`` (with a mark new for every call), so a re-rendered view proves it was
fed the same result again, not a new call's. It
imports only ``mcp``, so the copy runs wherever it is.
"""

from __future__ import annotations

import secrets

from mcp.server import MCPServer

APP_MIME = "text/html;profile=mcp-app"
URI = "ui://dev/greeting"
HEADLINE = "Hello from version one"

SCRIPT = """
<script>
(function () {
  var pending = {};
  function post(message) { window.parent.postMessage(message, "*"); }
  window.addEventListener("message", function (event) {
    if (event.source !== window.parent) return;
    var m = event.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.method && m.id !== undefined) {
      post({ jsonrpc: "2.0", id: m.id, result: {} });
    } else if (m.method === "ui/notifications/tool-result") {
      var text = ((m.params && m.params.content) || []).map(function (c) { return c.text || ""; }).join(" ");
      document.getElementById("result").textContent = text;
      document.body.setAttribute("data-state", "rendered");
    } else if (!m.method && pending[m.id]) {
      pending[m.id](m);
      delete pending[m.id];
    }
  });
  pending[0] = function () { post({ jsonrpc: "2.0", method: "ui/notifications/initialized" }); };
  post({ jsonrpc: "2.0", id: 0, method: "ui/initialize", params: {
    protocolVersion: "2026-01-26", appInfo: { name: "dev-app", version: "0.0.1" }, appCapabilities: {} } });
})();
</script>
"""

def page() -> str:
    """The view document, read again on every resources/read."""
    return ("<!doctype html><html><head><meta charset='utf-8'><title>greeting</title></head>"
            f"<body data-state='waiting'><h1 id='headline'>{HEADLINE}</h1><p id='result'></p>"
            f"{SCRIPT}</body></html>")


def build_server() -> MCPServer:
    """Build the server."""
    server = MCPServer("dev-app", version="0.0.1", log_level="WARNING")
    server.resource(URI, name="greeting", mime_type=APP_MIME)(page)

    def farewell(name: str = "Ada") -> str:
        return f"goodbye {name}"

    # Listed first: the Tool runner must keep the tool the author picked (greet) across a reload.
    server.add_tool(farewell, name="farewell", description="Says goodbye, with no view.")

    def greet(name: str = "Ada") -> str:
        return f"greeted {name} #{secrets.token_hex(4)}"  # a new call gives a new mark

    server.add_tool(greet, name="greet", description="Greets someone, with a view.",
                    meta={"ui": {"resourceUri": URI}})
    return server


if __name__ == "__main__":
    build_server().run("stdio")
