"""Where the desktop start-up's milliseconds go: one start, with time stamps along the path.

    python -m bench.startup_trace [--runs N]

Starts the desktop app under a private Xvfb with this module as its entry point (``_child``),
which stamps (ms after spawn) when chosen modules begin and end importing and when the shell's
steps run (the instance-lock probe, the window created, shown, the core started, the web server
up, the page loaded, ``app.hello``), and prints one line per stamp. Moka's code is not changed:
the stamps come from wrapping its functions from outside. For reading, not for a table.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

WATCHED = ("moka_shell.cli.main", "moka_shell.cli.run", "moka_shell.cli.commands", "moka_shell.config",
           "pydantic", "pluggy", "moka_shell.plugins", "moka_shell.shells.desktop.run", "webview", "PyQt6.QtWebEngineWidgets",
           "PyQt6.QtWidgets", "moka_shell.core.app", "mcp", "moka_shell.web.server", "uvicorn", "starlette",
           "moka_shell.core.chat.engine", "moka_shell.core.mcp.servers", "moka_shell.builtins", "httpx", "anyio")

class _Stamps:
    """Time stamps in ms after the spawn (the parent passes its time.time() in MOKA_TRACE_SPAWN)."""

    def __init__(self) -> None:
        self.spawn = float(os.environ["MOKA_TRACE_SPAWN"])
        self.rows: list[tuple[float, str]] = []

    def mark(self, what: str) -> None:
        self.rows.append(((time.time() - self.spawn) * 1000, what))


def _child(out: str) -> None:
    """Run ``moka`` (the desktop app) with stamps; writes them to ``out`` at app.hello."""
    stamps = _Stamps()
    stamps.mark("interpreter up (bench.startup_trace running)")
    import builtins
    import importlib

    real_import = builtins.__import__
    seen: set[str] = set()

    def traced_import(name: str, *args: Any, **kw: Any) -> Any:
        if name in WATCHED and name not in seen and name not in sys.modules:
            seen.add(name)
            stamps.mark(f"import {name} begins")
            module = real_import(name, *args, **kw)
            stamps.mark(f"import {name} done")
            return module
        return real_import(name, *args, **kw)

    builtins.__import__ = traced_import
    importlib.import_module("moka_shell.cli.main")
    stamps.mark("moka_shell.cli.main imported")
    from moka_shell.shells import core_thread
    from moka_shell.shells.desktop import run as desktop

    def wrap(owner: Any, attr: str, label: str) -> None:
        original = getattr(owner, attr)

        def wrapped(*args: Any, **kw: Any) -> Any:
            stamps.mark(f"{label} begins")
            try:
                return original(*args, **kw)
            finally:
                stamps.mark(f"{label} done")

        setattr(owner, attr, wrapped)

    wrap_async = _wrapper(stamps)
    wrap(desktop, "run_desktop", "run_desktop")
    wrap(desktop, "prepare_qt_environment", "prepare_qt_environment")
    wrap(desktop.InstanceLock, "acquire", "InstanceLock.acquire")
    wrap(desktop, "harden_qt", "harden_qt")
    wrap(desktop, "build_menu", "build_menu")
    wrap(core_thread.CoreThread, "start", "CoreThread.start")
    wrap_async(core_thread, "start_core", "start_core")
    import webview

    wrap(webview, "create_window", "webview.create_window")
    real_create = webview.create_window

    def create_window(*args: Any, **kw: Any) -> Any:
        window: Any = real_create(*args, **kw)
        if not getattr(stamps, "first", None):
            stamps.first = window  # type: ignore[attr-defined]
            window.events.before_show += lambda: stamps.mark("window before_show event")
            window.events.shown += lambda: stamps.mark("window shown event")
            window.events.loaded += lambda: stamps.mark("window loaded event")
        return window

    webview.create_window = create_window
    wrap(webview, "start", "webview.start")

    class Traced(core_thread.CoreThread):
        def _on_serving(self, web: Any) -> None:
            stamps.mark("web server up (the page may load)")
            real_attach = web.attach

            def attach(app: Any) -> None:
                stamps.mark("core attached (the page's socket goes on)")
                real_attach(app)
                original = web.bridge.methods["app.hello"]

                async def on_hello(params: dict[str, Any]) -> Any:
                    stamps.mark("app.hello reached the core")
                    reply = await original(params)
                    threading.Thread(target=finish, daemon=True).start()
                    return reply

                web.bridge.methods["app.hello"] = on_hello
                app.subscribe(lambda event, data: stamps.mark("first server ready") if event == "servers.changed"
                              and any(s.get("status") == "ready" for s in data or ())
                              and not any(r[1] == "first server ready" for r in stamps.rows) else None)

            web.attach = attach
            super()._on_serving(web)

        def start(self, timeout: float = 30.0) -> None:
            stamps.mark("core start asked (window shown or timed out)")
            super().start(timeout)
            stamps.mark("core started (servers loaded)")

    def finish() -> None:
        # Wait (bounded) for the first server to be ready, then write the stamps and end the run.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(r[1] == "first server ready" for r in stamps.rows):
            time.sleep(0.005)
        Path(out).write_text(json.dumps(stamps.rows), encoding="utf-8")
        os._exit(0)

    desktop.CoreThread = Traced  # type: ignore[misc]
    real_start_core = core_thread.start_core

    async def start_core(*args: Any, **kw: Any) -> Any:
        serving(stamps)  # on the core thread, as the core imports the web server: not before the window
        return await real_start_core(*args, **kw)

    core_thread.start_core = start_core
    from moka_shell.cli.main import main

    main([])


def serving(stamps: _Stamps) -> None:
    """Stamp the page's requests as the core's server sees them: the index, the first and last file, the socket."""
    from moka_shell.web.server import WebServer
    from moka_shell.web.static_files import StaticFilesInMemory as StaticFiles

    count = {"files": 0}
    real_files = StaticFiles.__call__

    async def files(self: Any, scope: Any, receive: Any, send: Any) -> None:
        count["files"] += 1
        if count["files"] == 1:
            stamps.mark("server: first static file asked")
        await real_files(self, scope, receive, send)
        stamps.rows = [r for r in stamps.rows if not r[1].startswith("server: static file answered")]
        stamps.mark(f"server: static file answered ({count['files']} so far)")

    StaticFiles.__call__ = files  # type: ignore[method-assign]
    wrap_async = _wrapper(stamps)
    wrap_async(WebServer, "_index", "server: index.html")
    real_ws = WebServer._ws

    async def ws(self: Any, socket: Any) -> None:
        stamps.mark("server: the page's socket arrives")
        await real_ws(self, socket)

    WebServer._ws = ws  # type: ignore[method-assign,assignment]


def _wrapper(stamps: _Stamps) -> Any:
    """A function that wraps ``owner.attr`` (a coroutine function) with begin and done stamps."""

    def wrap_async(owner: Any, attr: str, label: str) -> None:
        original = getattr(owner, attr)

        async def wrapped(*args: Any, **kw: Any) -> Any:
            stamps.mark(f"{label} begins")
            try:
                return await original(*args, **kw)
            finally:
                stamps.mark(f"{label} done")

        setattr(owner, attr, wrapped)
    return wrap_async


def main() -> int:
    """Spawn traced starts under Xvfb and print their stamps side by side."""
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        _child(sys.argv[2])
        return 0
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 1
    from bench.env import ROOT, demo, workspace
    from bench.startup_x11 import X_ENV, mapped_at
    from moka_shell.testing.xvfb import xvfb_display

    with workspace({"moka-demo": demo()}) as ws, xvfb_display() as display, tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "trace.json"
        for n in range(runs + 1):  # the first start warms the caches
            spawned = time.time()
            env = {**ws.env(), **X_ENV, "DISPLAY": display, "MOKA_TRACE_SPAWN": repr(spawned)}
            proc = subprocess.Popen([sys.executable, "-m", "bench.startup_trace", "--child", str(out)], cwd=ROOT,
                                    env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            mapped = mapped_at(display, "Moka", proc)
            proc.wait(60)
            if n == 0 or not out.exists():
                continue
            rows = [tuple(r) for r in json.loads(out.read_text(encoding="utf-8"))]
            if mapped is not None:
                rows.append(((mapped - spawned) * 1000, "** X: window mapped (xdotool)"))
            print(f"--- run {n}, load {os.getloadavg()[0]:.2f}")
            for ms, what in sorted(rows):
                print(f"{ms:8.0f} ms  {what}")
            out.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
