"""The desktop shell: pywebview windows around the same UI page that browser mode serves.

This module (and ``check_webview``) are the only ones that import ``webview``. The core runs on
its own thread. Every window's page talks to it the way a browser tab does, over the
token-guarded WebSocket on 127.0.0.1 (docs/architecture.md, "One process, one loop"), so
neither calls nor pushes pass through the GUI thread; pywebview only draws the windows and
gives the core native things (the save dialog).
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import threading
import webbrowser
from pathlib import Path
from collections.abc import Callable
from typing import Any

from moka_shell.paths import Paths
from moka_shell.shells.core_thread import CoreThread
from moka_shell.shells.qt_env import prepare_qt_environment

DEFAULT_SIZE = (1180, 820)


class WindowState:
    """Remembers the main window's size and position between runs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            self.data = {}

    def geometry(self) -> dict[str, Any]:
        """Keyword arguments for create_window."""
        w, h = self.data.get("width", DEFAULT_SIZE[0]), self.data.get("height", DEFAULT_SIZE[1])
        out: dict[str, Any] = {"width": max(640, int(w)), "height": max(480, int(h))}
        if isinstance(self.data.get("x"), int) and isinstance(self.data.get("y"), int):
            out["x"], out["y"] = self.data["x"], self.data["y"]
        return out

    def update(self, **values: int) -> None:
        """Record new geometry (saved on close)."""
        self.data.update(values)

    def save(self) -> None:
        """Write the state file."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(self.data), encoding="utf-8")
        except OSError:
            pass  # losing the window position is not worth an error


def run_desktop(paths: Paths, *, driver: Callable[[CoreThread, Any], None] | None = None) -> int:
    """Open the main window and run until it closes.

    ``driver(core, window)``, if given, runs on a worker thread once the GUI is up (used by
    the desktop smoke test and the benchmarks); the window closes when it returns.
    """
    prepare_qt_environment()
    import webview

    actions = DesktopActions()
    core = CoreThread(paths, mode="desktop", actions=actions)
    core.start()
    app, web = core.app, core.web
    assert app is not None and web is not None
    state = WindowState(paths.state_file)
    # No js_api: the page reaches the core over the same WebSocket as in browser mode.
    main: Any = webview.create_window("Moka", url=web.url, min_size=(640, 480), text_select=True,
                                      **state.geometry())
    main.events.resized += lambda w, h: state.update(width=w, height=h)
    main.events.moved += lambda x, y: state.update(x=x, y=y)

    def remember_geometry() -> None:
        try:
            state.update(width=int(main.width), height=int(main.height))
        except Exception:  # the window may already be half gone
            pass

    main.events.closing += remember_geometry
    popouts: dict[str, Any] = {}

    def on_event(event: str, data: Any) -> None:
        if event == "view.display" and isinstance(data, dict) and data.get("opensWindow"):
            open_popout(data["viewId"])

    def open_popout(view_id: str) -> None:
        view = app.view_host.views.get(view_id)
        if view is None or view_id in popouts:
            return
        win: Any = webview.create_window(f"{view.tool.title or view.tool.name} — Moka", url=app.view_host.popout_url(view),
                                         width=720, height=640, min_size=(320, 240))
        popouts[view_id] = win

        def closed() -> None:
            popouts.pop(view_id, None)
            frame = {"id": None, "method": "view.event", "params": {"viewId": view_id, "kind": "popout-closed"}}
            core.submit(web.bridge.handle(frame))

        win.events.closed += closed

    app.subscribe(on_event)
    actions.window = main

    def after_start() -> None:
        if driver is not None:
            try:
                driver(core, main)
            finally:
                main.destroy()

    try:
        webview.start(after_start, private_mode=True)
    finally:
        state.save()
        core.stop()
    return 0


class DesktopActions:
    """The desktop's ``ShellActions``: the default browser, and the native save dialog."""

    def __init__(self) -> None:
        self.window: Any = None  # the main window, once it exists

    def open_link(self, url: str) -> None:
        """Open the link in the default browser (off the core loop: it may take a while)."""
        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()

    async def save_download(self, file: dict[str, Any]) -> None:
        """Ask where to save a view's download with the native dialog, then write it."""
        import webview

        window = self.window
        if window is None:
            return

        def ask() -> Any:
            return window.create_file_dialog(webview.FileDialog.SAVE, save_filename=file["filename"])

        chosen = await asyncio.to_thread(ask)
        if not chosen:
            return
        target = Path(chosen if isinstance(chosen, str) else chosen[0])
        data = base64.b64decode(file["blob"]) if file.get("blob") else (file.get("text") or "").encode("utf-8")
        target.write_bytes(data)


if __name__ == "__main__":  # pragma: no cover - manual runs
    from moka_shell.paths import resolve_paths

    sys.exit(run_desktop(resolve_paths()))
