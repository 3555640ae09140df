"""The spare sandbox proxy: loaded ahead, handed to the next view, and still a strict sandbox."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from browser_support import Moka

SERVER = {"command": sys.executable, "args": [str(Path(__file__).resolve().parents[1] / "servers" / "permissions_server.py")]}
SPARE = "#proxy-pool iframe"
READY_SPARE = '#proxy-pool iframe[data-ready="true"]'


def start(moka_factory: Any) -> Moka:
    moka: Moka = moka_factory({"perm": SERVER})
    moka.open("runner")
    # The spare said sandbox-proxy-ready: it can be handed to the next view.
    moka.page.wait_for_selector(READY_SPARE, state="attached", timeout=10000)
    return moka


def test_a_new_view_takes_the_loaded_spare_and_a_new_spare_follows(moka_factory: Any) -> None:
    """The view's proxy is the very iframe that waited in the pool (moved, not reloaded)."""
    moka = start(moka_factory)
    moka.page.evaluate(f"document.querySelector('{SPARE}').__mokaSpare = 'first'")
    moka.call("tools.run", {"server": "perm", "tool": "plain", "arguments": {}})
    view = moka.wait_view_ready("plain")
    frame = moka.frame(view.id)
    assert frame.locator("body").get_attribute("data-state") == "ready"
    card_frame = f'.view-frame[data-view-id="{view.id}"]'
    assert moka.page.evaluate(f"document.querySelector('{card_frame}').__mokaSpare") == "first"
    assert moka.page.evaluate(f"document.querySelector('{card_frame}').closest('#proxy-pool')") is None
    # The proxy was given its view by message, so its own URL names none.
    assert "view=" not in (moka.page.evaluate(f"document.querySelector('{card_frame}').src") or "")
    moka.page.wait_for_selector(SPARE, state="attached", timeout=10000)
    assert moka.page.evaluate(f"document.querySelector('{SPARE}').__mokaSpare") is None  # a fresh one


def test_a_view_with_permissions_gets_a_fresh_proxy_with_its_allow_list(moka_factory: Any) -> None:
    """An iframe's allow list is fixed when it loads, so the spare is not used for such a view."""
    moka = start(moka_factory)
    moka.page.evaluate(f"document.querySelector('{SPARE}').__mokaSpare = 'kept'")
    moka.call("tools.run", {"server": "perm", "tool": "camera", "arguments": {}})
    view = moka.wait_view_ready("camera")
    card_frame = moka.page.locator(f'.view-frame[data-view-id="{view.id}"]')
    assert "camera" in (card_frame.get_attribute("allow") or "")
    assert "view=" in (card_frame.get_attribute("src") or "")
    assert moka.page.evaluate(f"document.querySelector('{SPARE}').__mokaSpare") == "kept"


def test_the_spare_loads_only_view_documents_of_its_own_origin(moka_factory: Any) -> None:
    """A resource-ready naming another origin or another path makes the spare load nothing."""
    moka = start(moka_factory)
    for bad in ("https://example.com/view/x", "/proxy.html", "javascript:alert(1)", "//example.com/view/x"):
        moka.page.evaluate("""([bad, origin]) => document.querySelector('#proxy-pool iframe').contentWindow.postMessage(
            { jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params: { view: bad } }, origin)""",
                           [bad, moka.app.sandbox_origin])
    moka.page.wait_for_timeout(500)
    spare = next(f for f in moka.page.frames if f.url.startswith(moka.app.sandbox_origin + "/proxy.html"))
    assert spare.child_frames == []
    assert spare.evaluate("document.querySelectorAll('iframe').length") == 0
