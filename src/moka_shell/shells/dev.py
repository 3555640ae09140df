"""``moka dev``: browser mode with one server, reloaded live on every change of its files.

Browser mode rather than the desktop window: an author has the browser's developer tools for the
view's frame right there (elements, console, network of the app under work), it sits beside the
editor, and it works over SSH and with no display. The page opens on the Tool runner with the
server picked, where a tool runs with no model; the chat is there too, on a data folder of its own.
"""

from __future__ import annotations

import urllib.parse
import webbrowser
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from moka_shell.paths import Paths
from moka_shell.shells.browser import stop_on_signals, until_stopped
from moka_shell.shells.core_thread import start_core
from moka_shell.shells.loop_end import run_bounded

if TYPE_CHECKING:
    from moka_shell.config import MokaConfig


def dev_url(url: str, server: str) -> str:
    """The UI's URL opened on the Tool runner with ``server`` picked."""
    return f"{url}#runner?{urllib.parse.urlencode({'server': server})}"


def run_dev(paths: Paths, config: MokaConfig, server: str, roots: Sequence[Path], *, port: int = 0,
            open_browser: bool = False) -> int:
    """Serve the UI with ``server`` (the one server of ``config``), reloading it on changes under ``roots``."""
    from moka_shell.core.dev.reload import DevReload

    async def go() -> None:
        app, web = await start_core(paths, mode="browser", port=port, config=config)
        stop = stop_on_signals()
        dev = DevReload(app, server, roots)
        try:
            count = await dev.start()
            url = dev_url(web.url, server)
            print(f"Moka is running at {url}", flush=True)
            print(f"Watching {count} file(s) in {', '.join(str(r) for r in dev.roots)}: every save restarts "
                  f"{server!r} and re-renders its open views. Press Ctrl+C to stop.", flush=True)
            if open_browser:
                webbrowser.open(url)
            await until_stopped(stop)
        finally:
            await dev.stop()
            await app.stop()
            await web.stop()

    run_bounded(go())
    return 0
