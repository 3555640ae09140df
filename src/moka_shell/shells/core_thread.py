"""Running the core with its web server: on this thread (browser mode) or on a thread of its own."""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from moka_shell.core.shell import Mode, ShellActions
from moka_shell.paths import Paths

if TYPE_CHECKING:
    # asyncio is imported on the core's own thread (CoreThread._run): the desktop's GUI thread
    # imports this module before its window is shown, and everything it imports delays the window.
    import asyncio
    import concurrent.futures

    # Imported when the core starts, not with this module: the core pulls in the MCP SDK, which
    # takes a second or more to import, and the desktop window should not wait for it.
    from moka_shell.config import MokaConfig
    from moka_shell.core.app import MokaApp
    from moka_shell.core.mcp.answers import ScriptedAnswers
    from moka_shell.web.server import WebServer

T = TypeVar("T")


def has_display() -> bool:
    """Can a native window be shown here? (Qt offscreen counts: tests and screenshots use it.)"""
    if sys.platform in ("darwin", "win32"):
        return True
    if os.environ.get("QT_QPA_PLATFORM") == "offscreen":
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


async def start_core(paths: Paths, *, mode: Mode, port: int = 0, servers: list[str] | None = None,
                     store: bool = True, actions: ShellActions | None = None,
                     handshake_timeout: float | None = None,
                     answers: ScriptedAnswers | None = None,
                     config: MokaConfig | None = None,
                     on_serving: Callable[[WebServer], None] | None = None) -> tuple[MokaApp, WebServer]:
    """Create the app and its web server on the running loop (``config``: this one, not the file's; ``moka dev``).

    With ``on_serving``, the web server starts first and ``on_serving(web)`` is called as soon as it
    serves the UI's files; the core's imports then run on a worker thread, so this loop keeps
    answering the page while they do (the desktop window loads the page beside them).
    """
    import asyncio

    from moka_shell.web.server import WebServer

    web = WebServer(None, port=port)
    app: MokaApp | None = None
    try:
        if on_serving is not None:
            imported = asyncio.ensure_future(asyncio.to_thread(_import_core))  # beside the server's own start
            try:
                await web.start()
                on_serving(web)
            finally:
                await imported
        from moka_shell.core.app import MokaApp
        from moka_shell.core.views.host import HANDSHAKE_TIMEOUT

        app = MokaApp(paths, mode=mode, actions=actions, answers=answers, config=config,
                      handshake_timeout=HANDSHAKE_TIMEOUT if handshake_timeout is None else handshake_timeout)
        if on_serving is None:  # served once this returns (nothing loads the page before)
            web.attach(app)
            # The servers' processes first: they start while this loop imports and starts the web
            # server, which no server needs (its sockets, and so the endpoints, are already bound).
            await app.start(servers=servers, store=store, endpoints=web.endpoints)
            await web.start()
        else:
            # The page loaded early is answered once the core is open (its socket waited till now),
            # before the MCP SDK is imported, on a worker thread, for the servers' connections.
            from moka_shell.core.mcp.servers import import_sdk

            app.open(servers=servers, store=store, endpoints=web.endpoints)
            web.attach(app)
            await app.launch_servers_early(servers)  # they start while the SDK is imported
            await asyncio.to_thread(import_sdk)
            await app.start_servers(servers)
    except BaseException:  # e.g. another Moka holds the data dir: leave nothing listening
        if app is not None:
            await app.stop()
        await web.stop()
        raise
    if app.instance_lock is not None:
        app.instance_lock.describe(url=web.endpoints.host_origin)  # the origin only: never the token
    return app, web


async def open_core(paths: Paths, *, mode: Mode, servers: list[str] | None = None, store: bool = True,
                    actions: ShellActions | None = None, handshake_timeout: float | None = None,
                    answers: ScriptedAnswers | None = None) -> MokaApp:
    """The app without its web server: ``CoreThread.serve`` starts one if a view comes after all.

    ``moka check`` runs so when the server's last listing had nothing for it to render: its web
    server, the bridge and the view host are then never imported (docs/performance.md §19).
    """
    from moka_shell.core.app import MokaApp

    app = MokaApp(paths, mode=mode, actions=actions, answers=answers, handshake_timeout=handshake_timeout)
    try:
        await app.start(servers=servers, store=store)
    except BaseException:
        await app.stop()
        raise
    return app


def _import_core() -> None:
    """The core's modules (pydantic, the config, the bridge): imported off the loop that serves the page."""
    for name in ("moka_shell.core.app", "moka_shell.core.views.host", "moka_shell.bridge"):
        importlib.import_module(name)


class CoreThread:
    """The core loop on a background thread, for the desktop shell's GUI thread to call into."""

    def __init__(self, paths: Paths, *, mode: Mode = "desktop", servers: list[str] | None = None,
                 store: bool = True, actions: ShellActions | None = None,
                 handshake_timeout: float | None = None, answers: ScriptedAnswers | None = None,
                 early_page: bool = False, serve: bool = True) -> None:
        self.paths = paths
        self.serve_at_start = serve  # False: no web server until ``serve()`` (open_core)
        self.early_page = early_page  # serve the page before the core's imports (``serving_url``)
        self.answers = answers
        self.mode: Mode = mode
        self.servers = servers
        self.store = store
        self.actions = actions
        self.handshake_timeout = handshake_timeout
        # Made on the core's own thread (_run), so the GUI thread never imports asyncio before its window.
        self.loop: asyncio.AbstractEventLoop | None = None
        self._loop_made = threading.Event()
        self.app: MokaApp | None = None
        self.web: WebServer | None = None
        self._ready = threading.Event()
        self._serving = threading.Event()
        self.early_web: WebServer | None = None  # the web server once it serves the page, before the core is up
        self._error: BaseException | None = None
        self._stopped: asyncio.Event | None = None  # set by stop(); made with the loop
        self.thread = threading.Thread(target=self._run, name="moka-core", daemon=True)

    def begin(self) -> None:
        """Start the loop thread (the core's imports, then the app) without waiting for it."""
        if self.thread.ident is None:
            self.thread.start()

    def start(self, timeout: float = 30.0) -> None:
        """Start the loop thread, if ``begin()`` did not, and wait until the UI can be served."""
        self.begin()
        if not self._ready.wait(timeout):
            raise TimeoutError("the core did not start in time")
        if self._error is not None:
            raise self._error

    def serving_url(self, timeout: float = 30.0) -> str:
        """The UI's URL as soon as the page can be loaded (the core may still be starting behind it)."""
        self.begin()
        if not self._serving.wait(timeout):
            raise TimeoutError("the core did not start in time")
        web = self.early_web or self.web
        if web is None:
            raise self._error or RuntimeError("the core stopped before it served the page")
        return web.url

    def _on_serving(self, web: WebServer) -> None:
        self.early_web = web
        self._serving.set()

    def _run(self) -> None:
        import asyncio

        loop = self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._stopped = asyncio.Event()
        self._loop_made.set()
        loop.run_until_complete(self._main())

    def serve(self, timeout: float = 30.0) -> WebServer:
        """The web server, started now if the core was started without one (``serve=False``)."""
        if self.web is None:
            self.web = self.submit(self._serve_late()).result(timeout)
        return self.web

    async def _serve_late(self) -> WebServer:
        from moka_shell.web.server import WebServer

        assert self.app is not None
        web = WebServer(None)
        try:
            web.attach(self.app)
            self.app.serve_at(web.endpoints)
            await web.start()
        except BaseException:  # leave nothing listening
            await web.stop()
            raise
        return web

    async def _main(self) -> None:
        try:
            if not self.serve_at_start:
                self.app = await open_core(self.paths, mode=self.mode, servers=self.servers, store=self.store,
                                           actions=self.actions, handshake_timeout=self.handshake_timeout,
                                           answers=self.answers)
            else:
                self.app, self.web = await start_core(self.paths, mode=self.mode, servers=self.servers, store=self.store,
                                                      actions=self.actions, handshake_timeout=self.handshake_timeout,
                                                      answers=self.answers,
                                                      on_serving=self._on_serving if self.early_page else None)
        except BaseException as exc:  # reported to the GUI thread by start()
            self._error = exc
            self.early_web = None
            self._serving.set()
            self._ready.set()
            return
        self._serving.set()
        self._ready.set()
        assert self._stopped is not None
        await self._stopped.wait()
        await self.app.stop()
        if self.web is not None:
            await self.web.stop()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run a coroutine on the core loop from any thread."""
        import asyncio

        if self.thread.ident is None:
            raise RuntimeError("the core thread has not begun: call begin() or start() first")
        self._loop_made.wait()
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self, timeout: float = 15.0) -> None:
        """Stop the core and wait for the loop thread."""
        if self.thread.is_alive():
            self._loop_made.wait(timeout)
            if self.loop is not None and self._stopped is not None:
                self.loop.call_soon_threadsafe(self._stopped.set)
            self.thread.join(timeout)
