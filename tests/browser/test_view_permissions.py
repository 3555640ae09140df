"""A view's permissions reach both of its frames, and a view without any gets none."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from browser_support import Moka

SERVER = {"command": sys.executable, "args": [str(Path(__file__).resolve().parents[1] / "servers" / "permissions_server.py")]}


def frames_allow(moka: Moka, view_id: str) -> tuple[str, str]:
    """The allow attribute of the view's proxy iframe and of the view iframe inside it."""
    proxy = moka.page.locator(f'.view-frame[data-view-id="{view_id}"]')
    # Playwright learns a new frame's address by an event of its own, a moment after the view's
    # handshake reached the core (a CI run looked too early): wait for the frame, don't assume it.
    proxy_frame = moka.wait(lambda: next((f for f in moka.page.frames
                                          if f.url.startswith(moka.app.endpoints.sandbox_origin + "/proxy.html")
                                          and f"id={view_id}" in f.url), None), what=f"the proxy frame of {view_id}")
    inner = proxy_frame.evaluate("document.querySelector('iframe').getAttribute('allow') || ''")
    return proxy.get_attribute("allow") or "", inner


def test_permissions_are_delegated_through_the_proxy(moka_factory: Any) -> None:
    """An iframe may only grant what its parent frame was granted, so both frames carry the list."""
    moka: Moka = moka_factory({"perm": SERVER})
    moka.open("runner")
    running = moka.core.submit(moka.web.bridge.handle({"id": 1, "method": "tools.run", "params": {
        "server": "perm", "tool": "camera", "arguments": {}}}))
    moka.page.locator("#consent-dialog").wait_for(state="visible", timeout=20000)  # asked the first time (S15)
    moka.page.click("#consent-allow")
    assert "error" not in running.result(60)
    view = moka.wait_view_ready("camera")
    outer, inner = frames_allow(moka, view.id)
    assert "camera" in outer and "clipboard-write" in outer
    assert "camera" in inner and "clipboard-write" in inner
    moka.call("tools.run", {"server": "perm", "tool": "plain", "arguments": {}})
    plain = moka.wait_view_ready("plain")
    assert frames_allow(moka, plain.id) == ("", "")
