"""A UI tool whose view keeps state in localStorage and sessionStorage, for the view-storage tests.

Run it as `python tests/servers/storage_server.py` (stdio). It imports only `mcp` and the
handshake script of broken_apps_server.py next to it.

The view reads both storages before its handshake starts (so the values must come with the
document) and shows them, as JSON, in `#boot`; `window.boot` holds the same object. It counts
its own loads in `localStorage.loads`, and records every `storage` event in `window.events`.
Once its handshake is done it also reports `boot` to the host as model context (structuredContent),
so a test that cannot reach into the frame (the desktop shell) reads it from the core.
"""

from __future__ import annotations

from mcp.server import MCPServer

from broken_apps_server import APP_MIME, HANDSHAKE

URI = "ui://storage/remember"

BOOT = """
<script>
(function () {
  function dump(s) { var o = {}; for (var i = 0; i < s.length; i++) { var k = s.key(i); o[k] = s.getItem(k); } return o; }
  window.events = [];
  addEventListener("storage", function (e) { window.events.push({ key: e.key, oldValue: e.oldValue, newValue: e.newValue }); });
  window.boot = { local: dump(localStorage), session: dump(sessionStorage) };
  localStorage.loads = String(Number(localStorage.loads || 0) + 1);
  document.getElementById("boot").textContent = JSON.stringify(window.boot);
  window.after = function () {
    window.parent.postMessage({ jsonrpc: "2.0", id: 1, method: "ui/update-model-context",
                                params: { content: [], structuredContent: { boot: window.boot } } }, "*");
  };
})();
</script>
"""

PAGE = ("<!doctype html><html><head><meta charset='utf-8'><title>remember</title></head>"
        "<body data-state='waiting'><h1>remember</h1><pre id='boot'></pre>" + BOOT + HANDSHAKE + "</body></html>")


def build_server() -> MCPServer:
    """Build the server."""
    server = MCPServer("storage", version="0.0.1", log_level="WARNING")
    server.resource(URI, name="remember", mime_type=APP_MIME)(lambda: PAGE)

    def remember(topic: str = "notes") -> str:
        return f"remembering {topic}"

    server.add_tool(remember, name="remember", description="A view that keeps what you type.",
                    meta={"ui": {"resourceUri": URI}})
    return server


if __name__ == "__main__":
    build_server().run("stdio")
