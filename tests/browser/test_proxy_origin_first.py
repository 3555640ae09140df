"""The sandbox proxy looks at who sent a message before it reads the message's data.

That order is the safe one, and Chromium rewards it: reading the data of a cross-origin message
whose origin was never looked at is slowed down on purpose (about 1 ms a message in QtWebEngine
6.11, docs/performance.md §2). A refactor that reads ``event.data`` first would pass every other
test and quietly cost each view request a millisecond in the desktop app.
"""

from __future__ import annotations

from typing import Any

from browser_support import DEMO, Moka

# In the proxy's frame only: for each window "message" event, note whether its origin had been
# read by the time its data was.
ORDER_PROBE = """(function () {
  if (location.pathname !== "/proxy.html") return;
  var proto = MessageEvent.prototype;
  var origin = Object.getOwnPropertyDescriptor(proto, "origin");
  var data = Object.getOwnPropertyDescriptor(proto, "data");
  var seen = new WeakSet();
  window.__originFirst = [];
  Object.defineProperty(proto, "origin", { configurable: true, get: function () {
    seen.add(this); return origin.get.call(this);
  } });
  Object.defineProperty(proto, "data", { configurable: true, get: function () {
    if (this.currentTarget === window) window.__originFirst.push(seen.has(this));
    return data.get.call(this);
  } });
})();"""


def test_proxy_checks_origin_before_reading_data(moka_factory: Any) -> None:
    """Every message the proxy takes from its window (the page's and the view's) is checked first."""
    moka: Moka = moka_factory({"demo": DEMO})
    moka.context.add_init_script(ORDER_PROBE)
    moka.open("runner")
    moka.call("tools.run", {"server": "demo", "tool": "roll_dice", "arguments": {}})
    view = moka.wait_view_ready("roll_dice")
    proxy = next(f for f in moka.page.frames if f.url.startswith(moka.app.sandbox_origin + "/proxy.html")
                 and f"id={view.id}" in f.url)
    order = moka.wait(lambda: proxy.evaluate("window.__originFirst") or None, what="messages in the proxy")
    # The page's sandbox-resource-ready, then the view's ui/initialize and what follows.
    assert len(order) >= 2, order
    assert all(order), f"the proxy read the data of a message before its origin: {order}"
