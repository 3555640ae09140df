"""The page Moka's desktop loads while its core still starts: drawn, in the person's mode, waiting, then live.

Chromium loads the page from a web server that has no core yet (as the desktop window does while
the core imports, docs/performance.md §13): it shows that Moka is starting in the mode named in
its URL, not the OS's, its socket waits, and once the core is attached the page says hello and
shows its first screen, with no reload.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from moka_shell.paths import Paths
from moka_shell.shells.core_thread import start_core
from moka_shell.web.server import WebServer


class Loop:
    """An asyncio loop on a thread of its own, for the server the page talks to."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(60)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)


def test_the_page_waits_in_the_persons_mode_then_goes_live(browser: Any, paths: Paths) -> None:
    loop = Loop()
    web: WebServer = loop.run(_serve())
    app = None
    page = browser.new_page(color_scheme="light", viewport={"width": 1000, "height": 700})
    try:
        page.goto(web.url + "&mode=dark")
        page.wait_for_function("document.querySelector('#boot') && !document.querySelector('#boot').hidden")
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"
        page.wait_for_function("() => document.querySelector('#conn').dataset.status === 'connecting'")
        assert loop.run(_waiting(web)) == 1  # the page's socket is held, not refused

        app, spare = loop.run(start_core(paths, mode="browser", servers=[], store=True))
        loop.run(spare.stop())
        loop.loop.call_soon_threadsafe(web.attach, app)
        page.wait_for_function("() => document.querySelector('#conn').dataset.status === 'online'", timeout=30000)
        page.wait_for_function("() => !document.querySelector('#boot') || document.querySelector('#boot').hidden")
        assert page.evaluate("document.documentElement.dataset.theme") in ("light", "dark")
    finally:
        page.close()
        if app is not None:
            loop.run(app.stop())
        loop.run(web.stop())
        loop.close()


async def _serve() -> WebServer:
    web = WebServer(None)
    await web.start()
    return web


async def _waiting(web: WebServer) -> int:
    for _ in range(3000):
        if web.waiting_for_core:
            return web.waiting_for_core
        await asyncio.sleep(0.01)
    return 0
