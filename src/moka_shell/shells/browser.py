"""Browser mode: the core and its web server on this thread; the person opens the URL in a browser."""

from __future__ import annotations

import asyncio
import signal
import webbrowser

from moka_shell.paths import Paths
from moka_shell.shells.core_thread import start_core
from moka_shell.shells.loop_end import run_bounded


def run_browser(paths: Paths, *, port: int = 0, announce: str | None = None, open_browser: bool = False) -> int:
    """Serve the UI on 127.0.0.1 until interrupted (Ctrl+C or SIGTERM)."""

    async def go() -> None:
        app, web = await start_core(paths, mode="browser", port=port)
        stop = stop_on_signals()
        if announce:
            print(announce, flush=True)
        print(f"Moka is running at {web.url}", flush=True)
        print("Open that URL in a browser; press Ctrl+C to stop.", flush=True)
        if open_browser:
            webbrowser.open(web.url)
        await until_stopped(stop)
        await app.stop()
        await web.stop()

    run_bounded(go())
    return 0


def stop_on_signals() -> asyncio.Event:
    """An event Ctrl+C or SIGTERM sets; made before the URL is printed, so a stop right after it is heard."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass  # not on this platform or thread: Ctrl+C still raises KeyboardInterrupt
    return stop


async def until_stopped(stop: asyncio.Event) -> None:
    """Wait for ``stop`` (``stop_on_signals``), then say Moka is stopping."""
    await stop.wait()
    print("Stopping Moka…", flush=True)
