"""Helpers for the browser tests: a running Moka in browser mode and ways to reach into its views."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import pytest

from moka_shell.shells.core_thread import CoreThread
from support import NPM_BIN, node

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-quic"]
DEMO = {"command": "moka", "args": ["demo-server"]}


def npm_stdio(bin_name: str) -> dict[str, Any]:
    """A config entry for an npm example server over stdio."""
    path = NPM_BIN / bin_name
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing: scripts/setup.sh installs the npm example servers")
        pytest.skip(f"{bin_name} is not installed")
    return {"command": node(), "args": [str(path), "--stdio"]}


class Moka:
    """A running Moka core + web server (browser mode) and helpers to drive its UI."""

    def __init__(self, core: CoreThread, browser: Any) -> None:
        self.core = core
        self.app = core.app
        self.web = core.web
        self.context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
        self.page = self.context.new_page()
        self.console: list[str] = []
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))

    @property
    def url(self) -> str:
        return self.web.url  # type: ignore[no-any-return]

    def open(self, route: str = "") -> Any:
        """Open the UI (optionally at a #route) and wait until it is connected."""
        # A page that is not in front counts as hidden: its animation frames (which dialogs and
        # the view's size reports use) may be paused when several contexts share the browser.
        self.page.bring_to_front()
        self.page.goto(self.url + (f"#{route}" if route else ""))
        self.page.wait_for_selector('#conn[data-status="online"]', timeout=20000)
        return self.page

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """One Bridge call on the core loop (for setup and assertions)."""
        reply = self.core.submit(self.web.bridge.handle({"id": 1, "method": method, "params": params or {}})).result(60)
        if "error" in reply:
            raise AssertionError(reply["error"])
        return reply["result"]

    def wait(self, predicate: Callable[[], Any], timeout: float = 20.0, what: str = "condition") -> Any:
        """Poll until predicate() is truthy."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            self.page.wait_for_timeout(50)  # lets Playwright process frame and console events
        raise AssertionError(f"timed out waiting for {what}; console: {self.console[-10:]}")

    def click_in_view(self, frame: Any, selector: str) -> None:
        """A real click on an element inside a view, made again only if Chromium never delivered it.

        Chromium now and then hands the press to the sandbox proxy's <iframe> element instead of
        the view document inside it (a probe saw "pointerdown in proxy.html on IFRAME" at the
        button's coordinates and nothing in the view), mostly right after the view resized. A
        counter in the view tells a dropped click from a slow answer, so a delivered click is
        never repeated (toggles stay toggled once).
        """
        frame.evaluate("(sel) => { const b = document.querySelector(sel); if (!b.dataset.mokaClicks) {"
                       " b.dataset.mokaClicks = '0'; b.addEventListener('click', () => {"
                       " b.dataset.mokaClicks = String(Number(b.dataset.mokaClicks) + 1); }, true); } }", selector)
        before = int(frame.get_attribute(selector, "data-moka-clicks"))
        for _ in range(5):
            frame.click(selector)
            for _ in range(10):  # a second's grace, so a slow delivery is not taken for a drop
                if int(frame.get_attribute(selector, "data-moka-clicks")) > before:
                    return
                self.page.wait_for_timeout(100)
            self.console.append(f"click on {selector} never reached the view; clicking again")
        raise AssertionError(f"no click on {selector} reached the view; console: {self.console[-20:]}")

    def views(self) -> list[Any]:
        return list(self.app.view_host.views.values())

    def wait_view_ready(self, tool: str, timeout: float = 30.0) -> Any:
        """The newest view of `tool` once it finished its handshake and has its result."""
        def ready() -> Any:
            vs = [v for v in self.views() if v.tool.name == tool and v.state == "ready" and "result_sent" in v.timings]
            return vs[-1] if vs else None
        return self.wait(ready, timeout, f"view of {tool} ready")

    def frame(self, view_id: str) -> Any:
        """The view document's frame (inside its proxy frame)."""
        def find() -> Any:
            for f in self.page.frames:
                if f"/view/{view_id}" in f.url:
                    return f
            return None
        return self.wait(find, 20, f"frame of {view_id}")

    def ui_rpc(self, view_id: str) -> list[dict[str, Any]]:
        return [e for e in self.app.inspector.query(limit=100000) if e["channel"] == "ui.rpc" and e.get("view") == view_id]

    def close(self) -> None:
        self.context.close()


