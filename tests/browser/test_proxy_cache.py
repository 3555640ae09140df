"""The sandbox proxy comes from the browser's cache after the first view; the view's own document
still comes from Moka, with its CSP header; and the proxy still refuses a view URL that is not on
the sandbox origin, now that the view's parameters travel in the URL's fragment (docs/performance.md §8)."""

from __future__ import annotations

import urllib.parse
from typing import Any

from browser_support import DEMO, Moka

NAVIGATION = "() => { const n = performance.getEntriesByType('navigation')[0]; return {transfer: n.transferSize, body: n.decodedBodySize}; }"


def proxy_frame(moka: Moka, view_id: str) -> Any:
    """The proxy frame of one view (its parameters are in the fragment of its URL)."""
    origin = moka.app.endpoints.sandbox_origin
    return moka.wait(lambda: next((f for f in moka.page.frames if f.url.startswith(origin + "/proxy.html")
                                   and f"id={view_id}" in f.url), None), what=f"proxy frame of {view_id}")


def test_a_later_view_gets_its_proxy_from_the_cache_and_its_document_from_moka(moka_factory: Any) -> None:
    moka: Moka = moka_factory({"demo": DEMO})
    moka.open("runner")
    moka.call("tools.run", {"server": "demo", "tool": "roll_dice", "arguments": {}})
    first = moka.wait_view_ready("roll_dice")
    moka.call("view.close", {"viewId": first.id})
    moka.call("tools.run", {"server": "demo", "tool": "roll_dice", "arguments": {}})
    second = moka.wait(lambda: next((v for v in moka.views() if v.id != first.id and v.state == "ready"
                                     and "result_sent" in v.timings), None), what="the second view ready")
    loaded = proxy_frame(moka, second.id).evaluate(NAVIGATION)
    assert loaded["body"] > 0 and loaded["transfer"] == 0, loaded  # nothing crossed the network for the proxy
    # The view's document was asked of Moka (served with its CSP header, per view, by its key) ...
    assert "document" in second.timings
    inner = moka.frame(second.id)
    # ... and that header is in force: the demo declares no connect domains, so a fetch is blocked.
    blocked = inner.evaluate("""() => new Promise((resolve) => {
        document.addEventListener('securitypolicyviolation', (e) => resolve(e.effectiveDirective), { once: true });
        fetch('http://127.0.0.1:9/').catch(() => {}); setTimeout(() => resolve('not blocked'), 5000); })""")
    assert blocked == "connect-src"
    assert inner.evaluate("() => window.origin") == "null"  # still an opaque origin


def test_the_proxy_refuses_a_view_url_off_the_sandbox_origin(moka_factory: Any) -> None:
    moka: Moka = moka_factory({"demo": DEMO})
    moka.open("runner")
    ends = moka.app.endpoints
    base = ends.sandbox_origin + ends.proxy_page
    foreign = {"view": "http://127.0.0.1:9/view/x?k=y", "host": ends.host_origin, "id": "probe"}
    # In the fragment; and in the fragment while the query string holds a good one (the fragment rules).
    for i, url in enumerate((f"{base}#{urllib.parse.urlencode(foreign)}",
                             f"{ends.sandbox_origin}/proxy.html?view=%2Fview%2Fx&host={urllib.parse.quote(ends.host_origin)}"
                             f"#{urllib.parse.urlencode({**foreign, 'view': 'javascript:parent.alert(1)'})}")):
        moka.page.evaluate("""([url, i]) => { const f = document.createElement('iframe'); f.id = 'probe' + i;
            f.setAttribute('sandbox', 'allow-scripts allow-same-origin'); f.src = url; document.body.append(f); }""", [url, i])
        frame = moka.wait(lambda: moka.page.query_selector(f"#probe{i}") and moka.page.query_selector(f"#probe{i}").content_frame(),
                          what="the probe frame")
        text = moka.wait(lambda: frame.evaluate("() => document.querySelector('.refused')?.textContent") or None,
                         what="the proxy's refusal")
        assert text == "Moka sandbox: the view URL is not on the sandbox origin.", text
        assert frame.evaluate("() => document.querySelectorAll('iframe').length") == 0
