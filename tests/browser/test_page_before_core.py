"""The page Moka's desktop loads while its core still starts: drawn, in the person's mode, waiting, then live.

Chromium loads the page from a web server that has no core yet (as the desktop window does while
the core imports, docs/performance.md §13): it shows that Moka is starting in the mode named in
its URL, not the OS's, its socket waits, and once the core is open and attached the page says
hello and shows its first screen, the configured server listed before its connection is made
(the MCP SDK still loading), and a server entry that fails to load said when the entries are.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from moka_shell.paths import Paths
from support import until
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


class EarlyPage:
    """Moka's web server with no core yet, a page on it, and the core once ``open_core`` attaches it."""

    def __init__(self, browser: Any, **page_options: Any) -> None:
        self.loop = Loop()
        self.web: WebServer = self.loop.run(_serve())
        self.app: Any = None
        self.page = browser.new_page(**page_options)

    def open_core(self, paths: Paths) -> Any:
        """Open the core and attach it, as the desktop's start does (its servers come later)."""
        self.app = self.loop.run(_open(paths, self.web))
        return self.app

    def waiting(self) -> int:
        """How many of the page's requests wait for the core (its socket, once app.js has run)."""
        return int(self.loop.run(_waiting(self.web)))

    def close(self) -> None:
        """The page, the core and the server, in that order."""
        self.page.close()
        if self.app is not None:
            self.loop.run(self.app.stop())
        self.loop.run(self.web.stop())
        self.loop.close()


def test_the_page_waits_in_the_persons_mode_then_goes_live(browser: Any, paths: Paths) -> None:
    early = EarlyPage(browser, color_scheme="light", viewport={"width": 1000, "height": 700})
    page, web = early.page, early.web
    try:
        page.goto(web.url + "&mode=dark")
        page.wait_for_function("document.querySelector('#boot') && !document.querySelector('#boot').hidden")
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"
        page.wait_for_function("() => document.querySelector('#conn').dataset.status === 'connecting'")
        assert early.waiting() == 1  # the page's socket is held, not refused

        # The core opens and is attached as the desktop's start does it; its servers come after.
        app = early.open_core(paths)
        page.wait_for_function("() => document.querySelector('#conn').dataset.status === 'online'", timeout=30000)
        page.wait_for_function("() => !document.querySelector('#boot') || document.querySelector('#boot').hidden")
        assert page.evaluate("document.documentElement.dataset.theme") in ("light", "dark")
        page.locator("#welcome").get_by_text("moka-demo", exact=True).wait_for()  # listed before it connects
        assert page.get_by_text("No servers are configured yet.").count() == 0
        assert page.locator("#app-problems").is_hidden()

        early.loop.run(app.start_servers())
        # A server entry that could not be loaded is said once the entries are, without a reload.
        page.locator("#app-problems").get_by_text("no plugin provides").wait_for()
    finally:
        early.close()


async def _open(paths: Paths, web: WebServer) -> Any:
    from moka_shell.core.app import MokaApp

    paths.config_file.write_text(json.dumps({"mcpServers": {
        "moka-demo": {"command": "moka", "args": ["demo-server"]},
        "odd": {"type": "carrier-pigeon", "url": "http://127.0.0.1:9/"}}}), encoding="utf-8")
    app = MokaApp(paths, mode="desktop")
    app.open(endpoints=web.endpoints)
    web.attach(app)
    return app


async def _serve() -> WebServer:
    web = WebServer(None)
    await web.start()
    return web


async def _waiting(web: WebServer) -> int:
    return await until(lambda: web.waiting_for_core, "the page's socket waits for the core")


LATER = ("/static/js/servers/screen.js", "/static/js/inspector/screen.js", "/static/js/settings/screen.js")


def test_the_first_screen_boots_without_the_others_which_follow_its_hello(browser: Any, paths: Paths) -> None:
    # Only Chat's and the Tool runner's code load with the page (js/screens.js): the other screens'
    # modules are asked for once the page has said hello, and a screen opened by its link loads on the way.
    early = EarlyPage(browser, viewport={"width": 1000, "height": 700})
    page, web = early.page, early.web
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    try:
        page.goto(web.url + "#settings")
        assert early.waiting() == 1  # app.js has run: its socket waits for the core
        paths_asked = [url.split("?")[0].removeprefix(web.endpoints.host_origin) for url in asked]
        assert {"/static/js/chat/screen.js", "/static/js/runner.js"} <= set(paths_asked)
        assert not set(LATER) & set(paths_asked), sorted(set(LATER) & set(paths_asked))

        early.open_core(paths)
        page.locator("#settings").wait_for()  # the screen the link named, loaded on the way
        assert page.evaluate("location.hash") == "#settings" and page.locator("#screen-chat").is_hidden()
        page.wait_for_function(f"() => {list(LATER)!r}.every((p) => performance.getEntriesByType('resource')"
                               ".some((e) => new URL(e.name).pathname === p))")
        page.locator("#nav-servers").click()
        page.locator("#screen-servers").get_by_text("moka-demo").first.wait_for()
    finally:
        early.close()
