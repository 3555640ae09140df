"""A stdio MCP server for the desktop GUI test: one view that calls a tool and looks for Moka's token.

The view (no SDK) completes the handshake, makes a few ``tools/call ping`` round trips through
the host, then tries every way it has to the UI page's URL, which carries the token: the
parent's and top's location, its own referrer and URL. It reports what it got with
``ui/update-model-context``, so the test reads it from the core.
"""

from __future__ import annotations

from mcp.server import MCPServer
from mcp.server.apps import Apps

VIEW_URI = "ui://moka-gui-probe/view"
VIEW_HTML = """<!doctype html>
<html><head><meta charset="utf-8"><title>probe</title></head><body><p id="s">loading</p><script>
(function () {
  "use strict";
  var host = window.parent, nextId = 1, pending = {};
  function send(m) { host.postMessage(m, "*"); }
  function request(method, params) {
    var id = nextId++;
    return new Promise(function (resolve, reject) {
      pending[id] = { resolve: resolve, reject: reject };
      send({ jsonrpc: "2.0", id: id, method: method, params: params || {} });
    });
  }
  function attempt(read) {
    try { return String(read()); } catch (e) { return "refused: " + (e && e.name); }
  }
  async function probe() {
    var pings = [];
    for (var i = 0; i < 5; i++) {
      var r = await request("tools/call", { name: "ping", arguments: { i: i } });
      pings.push(r && r.content && r.content[0] && r.content[0].text);
    }
    var seen = {
      parent: attempt(function () { return window.parent.location.href; }),
      top: attempt(function () { return window.top.location.href; }),
      parentSearch: attempt(function () { return window.parent.location.search; }),
      referrer: attempt(function () { return document.referrer; }),
      self: attempt(function () { return location.href; })
    };
    document.getElementById("s").textContent = "done";
    await request("ui/update-model-context", { structuredContent: { pings: pings, seen: seen } });
  }
  window.addEventListener("message", function (event) {
    if (event.source !== host) return;
    var m = event.data;
    if (!m || typeof m !== "object" || m.jsonrpc !== "2.0") return;
    if (m.method === undefined) {
      var p = pending[m.id];
      if (p) { delete pending[m.id]; if (m.error) p.reject(m.error); else p.resolve(m.result); }
    } else if (m.method === "ui/notifications/tool-result") {
      probe().catch(function (e) { document.getElementById("s").textContent = "failed " + e; });
    } else if (m.id !== undefined) {
      send({ jsonrpc: "2.0", id: m.id, result: {} });
    }
  });
  request("ui/initialize", { protocolVersion: "2026-01-26", appInfo: { name: "moka-gui-probe", version: "1.0.0" },
                             appCapabilities: {} })
    .then(function () { send({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} }); });
})();
</script></body></html>
"""


def build() -> MCPServer:
    """The server: the probe view's tool and the tool the view calls."""
    apps = Apps()

    @apps.tool(resource_uri=VIEW_URI, meta={"ui/resourceUri": VIEW_URI}, title="Probe view",
               description="Open the probe view.")
    def probe_view() -> str:
        """Open the probe view."""
        return "probe view"

    apps.add_html_resource(VIEW_URI, VIEW_HTML, name="probe-view", title="Probe view")
    server = MCPServer("moka-gui-probe", version="1.0.0", extensions=[apps], log_level="WARNING")

    @server.tool(description="Answer at once.", meta={"ui": {"visibility": ["model", "app"]}})
    def ping(i: int = 0) -> str:
        """Answer at once."""
        return f"pong {i}"

    return server


if __name__ == "__main__":
    build().run("stdio")
