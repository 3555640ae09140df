"""Every message crossing the sandbox has its origin read before its data.

The proxy looks at who sent a message before it reads it: the safe order. In the view, the
prelude Moka puts before the app's scripts reads each message's origin first, because the apps'
SDK never does. Chromium slows down reading the data of a cross-origin message whose origin was
never looked at (about 1 ms a message in QtWebEngine 6.11, docs/performance.md §2), so a
refactor that breaks either order would pass every other test and quietly cost each view
request two milliseconds in the desktop app.
"""

from __future__ import annotations

from typing import Any

from browser_support import DEMO, Moka

# In the proxy's and the views' frames: for each window "message" event, note whether its origin
# had been read by the time its data was.
ORDER_PROBE = """(function () {
  if (location.pathname !== "/proxy.html" && location.pathname.indexOf("/view/") !== 0) return;
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


def test_origin_is_read_before_data_in_the_proxy_and_the_view(moka_factory: Any) -> None:
    """The proxy's messages (from the page and the view) and the view's (from the proxy)."""
    moka: Moka = moka_factory({"demo": DEMO})
    moka.context.add_init_script(ORDER_PROBE)
    moka.open("runner")
    moka.call("tools.run", {"server": "demo", "tool": "roll_dice", "arguments": {}})
    view = moka.wait_view_ready("roll_dice")
    proxy = next(f for f in moka.page.frames if f.url.startswith(moka.app.endpoints.sandbox_origin + "/proxy.html")
                 and f"id={view.id}" in f.url)
    order = moka.wait(lambda: proxy.evaluate("window.__originFirst") or None, what="messages in the proxy")
    # The page's sandbox-resource-ready, then the view's ui/initialize and what follows.
    assert len(order) >= 2, order
    assert all(order), f"the proxy read the data of a message before its origin: {order}"
    inner = moka.frame(view.id)
    seen = moka.wait(lambda: inner.evaluate("window.__originFirst") or None, what="messages in the view")
    # ui/initialize's answer, tool-input, tool-result, host-context-changed...: the SDK read them all.
    assert len(seen) >= 3, seen
    assert all(seen), f"the view's SDK read a message before anything read its origin: {seen}"
