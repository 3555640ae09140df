"""A UI tool that answers only when the test says so, with a view that writes down all it hears.

Run it as `python tests/servers/gated_server.py` (stdio). It imports only `mcp`.

- `gated {gate}`: waits until the file `gate` exists (the test makes it when it wants the result),
  then answers with the file's text. Its view does the MCP Apps handshake and keeps every message
  it is sent, in order, in `window.heard` (method, and for a result its text; for a host context
  change its theme), and the theme it was given at `ui/initialize` in `window.startTheme`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from mcp.server import MCPServer

APP_MIME = "text/html;profile=mcp-app"
URI = "ui://gated/view"
WAIT_LIMIT = 300.0  # seconds; a test that never opens the gate still ends

VIEW = """<!doctype html><html><head><meta charset="utf-8"><title>gated</title></head><body>
<h1>gated</h1><pre id="log"></pre>
<script>
(function () {
  window.heard = [];
  function post(m) { window.parent.postMessage(m, "*"); }
  function note(entry) {
    window.heard.push(entry);
    document.getElementById("log").textContent = window.heard.join("\\n");
  }
  window.addEventListener("message", function (event) {
    if (event.source !== window.parent) return;
    var m = event.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.id === 1 && !m.method) {
      window.startTheme = m.result && m.result.hostContext && m.result.hostContext.theme;
      post({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
      return;
    }
    if (m.method && m.id !== undefined) {  // requests: ping and teardown are answered
      post({ jsonrpc: "2.0", id: m.id, result: {} });
      note(m.method);
      return;
    }
    if (m.method === "ui/notifications/tool-result") {
      note("tool-result:" + ((m.params.content && m.params.content[0] && m.params.content[0].text) || ""));
    } else if (m.method === "ui/notifications/host-context-changed") {
      note("host-context-changed:" + (m.params && m.params.theme));
    } else if (m.method) {
      note(m.method.replace("ui/notifications/", ""));
    }
  });
  post({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: { protocolVersion: "2026-01-26",
    appInfo: { name: "gated", version: "0.0.1" }, appCapabilities: {} } });
})();
</script></body></html>"""


def build_server() -> MCPServer:
    """Build the server."""
    server = MCPServer("gated", version="0.0.1", log_level="WARNING")

    @server.resource(URI, name="gated view", mime_type=APP_MIME)
    def view() -> str:
        return VIEW

    async def gated(gate: str) -> str:
        path = Path(gate)
        waited = 0.0
        while not path.exists() and waited < WAIT_LIMIT:
            await asyncio.sleep(0.05)
            waited += 0.05
        return path.read_text(encoding="utf-8") if path.exists() else "the gate never opened"

    server.add_tool(gated, name="gated", description="Answers once the file `gate` exists",
                    meta={"ui": {"resourceUri": URI}})
    return server


if __name__ == "__main__":
    build_server().run("stdio")
