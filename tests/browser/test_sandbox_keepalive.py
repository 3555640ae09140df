"""Browser mode keeps one empty sandboxed frame after the first view, so fresh views skip
starting Chromium's process for sandboxed frames (docs/performance.md §1)."""

from __future__ import annotations

from typing import Any

import httpx2 as httpx

from browser_support import DEMO, Moka

KEEPALIVE = "iframe.sandbox-keepalive"


def keepalive_frames(moka: Moka) -> list[dict[str, Any]]:
    """What the page holds of keep-alive frames: their sandbox, src and accessibility attributes."""
    return moka.page.eval_on_selector_all(KEEPALIVE, """els => els.map(e => ({
        sandbox: e.getAttribute("sandbox"), src: e.src, hidden: e.getAttribute("aria-hidden"),
        tab: e.tabIndex, width: e.getBoundingClientRect().width}))""")


def test_one_inert_keepalive_frame_after_the_first_view(moka_factory: Any) -> None:
    moka: Moka = moka_factory({"demo": DEMO})
    moka.open("runner")
    assert keepalive_frames(moka) == []  # nothing until a view is shown
    for _ in range(2):
        moka.call("tools.run", {"server": "demo", "tool": "roll_dice", "arguments": {}})
    first, second = (v for v in moka.wait(lambda: len(moka.views()) == 2 and moka.views(), what="two views"))
    moka.wait(lambda: first.initialized and second.initialized, what="both views initialized")
    frames = keepalive_frames(moka)
    # Sandboxed with no permissions at all (no scripts, opaque origin), from the sandbox origin.
    assert frames == [{"sandbox": "", "src": moka.app.endpoints.sandbox_origin + "/warm", "hidden": "true", "tab": -1,
                       "width": 0}]
    for view in (first, second):
        moka.call("view.close", {"viewId": view.id})
    moka.wait(lambda: not moka.page.query_selector(".view-frame"), what="the views' frames to go")
    assert len(keepalive_frames(moka)) == 1  # it outlives the views: that is its point


def test_the_keepalive_document_runs_and_loads_nothing(moka_factory: Any) -> None:
    moka: Moka = moka_factory({"demo": DEMO})
    reply = httpx.get(moka.app.endpoints.sandbox_origin + "/warm", timeout=10)
    assert reply.status_code == 200
    assert reply.headers["content-security-policy"] == "default-src 'none'; sandbox"
    assert reply.headers["cache-control"] == "no-store"
    assert "<script" not in reply.text.lower()
