"""A view whose painted output depends on an environment variable, for `moka check --baseline`.

Run it as `python tests/servers/baseline_server.py` (stdio). It imports only `mcp` and the bridge of
late_failures_server.py next to it.

The one tool, `card`, returns the look named by `BASELINE_LOOK` (`teal`, the default, or `orange`);
its view paints a block of that colour with its name, and follows the light or dark colour scheme.
It also moves: the block fades in over 3 s (longer than the settle time, so a screenshot taken
as it settles would catch it half way), a bar pulses forever, and a script counts to 100 % over
2.5 s after the result, frame by frame (as a chart library animates); `moka check` must settle all
three for two runs to give the same pixels.
"""

from __future__ import annotations

import json
import os

from mcp.server import MCPServer

from late_failures_server import BRIDGE

APP_MIME = "text/html;profile=mcp-app"
URI = "ui://baseline/card"
LOOKS = {"teal": "#138a72", "orange": "#e8660c"}

STYLE = """<style>
  body { margin: 0; padding: 16px; font: 16px sans-serif; background: #fff; color: #222; }
  @media (prefers-color-scheme: dark) { body { background: #1d1d1f; color: #eee; } }
  #block { height: 120px; border-radius: 8px; opacity: 0; transition: opacity 3s linear; }
  #block.shown { opacity: 1; }
  #count { height: 24px; font: bold 20px monospace; margin-top: 8px; }
  #bar { height: 6px; margin-top: 12px; background: #888; animation: pulse 0.8s ease-in-out infinite alternate; }
  @keyframes pulse { from { width: 10%; } to { width: 90%; } }
</style>"""

ON_RESULT = """
  var look = JSON.parse(r.content[0].text);
  var block = document.getElementById('block');
  block.style.background = look.colour;
  document.getElementById('name').textContent = 'Look: ' + look.name;
  requestAnimationFrame(function () { requestAnimationFrame(function () { block.classList.add('shown'); }); });
  var start = performance.now(), count = document.getElementById('count');
  (function tick() {
    var done = Math.min(1, (performance.now() - start) / 2500);
    count.textContent = 'counted ' + Math.round(done * 100) + ' %';
    if (done < 1) requestAnimationFrame(tick);
  })();
  window.sizeMe();
"""

PAGE = (f"<!doctype html><html><head><meta charset='utf-8'><title>card</title>{STYLE}</head><body>"
        "<h1 id='name'>Look: ?</h1><div id='block'></div><div id='count'></div><div id='bar'></div>"
        f"<script>window.onResult = function (r) {{ {ON_RESULT} }};</script>{BRIDGE}</body></html>")


def build_server() -> MCPServer:
    """The server: one tool, one resource."""
    server = MCPServer("baseline", version="0.0.1", log_level="WARNING")

    @server.resource(URI, name="card", mime_type=APP_MIME)
    def card_view() -> str:
        return PAGE

    def card() -> str:
        name = os.environ.get("BASELINE_LOOK", "teal")
        return json.dumps({"name": name, "colour": LOOKS.get(name, "#000")})

    server.add_tool(card, name="card", description="A card in the look BASELINE_LOOK names.",
                    meta={"ui": {"resourceUri": URI}})
    return server


if __name__ == "__main__":
    build_server().run("stdio")
