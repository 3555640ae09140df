"""The desktop shell: pywebview windows around the same UI page that browser mode serves.

This module (and ``check_webview``) are the only ones that import ``webview``. The core runs on
its own thread. Every window's page talks to it the way a browser tab does, over the
token-guarded WebSocket on 127.0.0.1 (docs/architecture.md, "One process, one loop"), so
neither calls nor pushes pass through the GUI thread; pywebview only draws the windows and
gives the core native things (the save dialog).
"""

from __future__ import annotations

import html
import json
import sys
import threading
from pathlib import Path
from collections.abc import Callable
from typing import Any

from moka_shell.core.instance_lock import InstanceLock
from moka_shell.errors import DataDirError
from moka_shell.paths import Paths, ensure_dir, open_private
from moka_shell.shells.core_thread import CoreThread
from moka_shell.shells.desktop.actions import DesktopActions
from moka_shell.shells.desktop.commands import DesktopCommands
from moka_shell.shells.desktop import skeleton_qt
from moka_shell.shells.desktop.menu import build_menu
from moka_shell.shells.desktop.sandbox import harden_qt, new_window_router
from moka_shell.shells.desktop.skeleton import saved_mode, skeleton_html
from moka_shell.shells.qt_env import prepare_qt_environment

DEFAULT_SIZE = (1180, 820)
STARTUP_SWITCH_INTERVAL = 0.0005  # seconds, while the core starts beside the window (Python's default: 0.005)
ICON = Path(__file__).resolve().parent.parent.parent / "web" / "static" / "icon.png"


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
            ensure_dir(self.path.parent, "the data dir", private=True)
            with open_private(self.path, "w") as out:
                out.write(json.dumps(self.data))
        except (OSError, DataDirError):
            pass  # losing the window position is not worth an error


def run_desktop(paths: Paths, *, driver: Callable[[CoreThread, Any], None] | None = None) -> int:
    """Open the main window and run until it closes.

    The window opens first, showing Moka's frame (``skeleton.py``), while the core starts on its
    thread; the real page replaces the frame once the window is shown and the core serves it. ``driver(core, window)``, if
    given, runs on a worker thread once the page is loading (used by the desktop tests and the
    benchmarks); the window closes when it returns.
    """
    prepare_qt_environment()
    # A second launch on the same data dir must not flash a window: the CLI brings the first forward.
    probe = InstanceLock(paths.data_dir)
    probe.acquire()
    probe.release()
    actions = DesktopActions()
    core = CoreThread(paths, mode="desktop", actions=actions, early_page=True)
    # The core's imports (the MCP SDK, pydantic: the larger part of the start) run on the core thread
    # while this thread builds the window; much of that is C++ and QtWebEngine's own processes,
    # which leave the GIL free. The core begins once Qt is imported: importing Qt's extension
    # modules holds the GIL, and with the core's imports beside it the window mapped ~300 ms later
    # (docs/performance.md §13: 907 → 567 and 879 → 639 ms mapped, the same interactive, quiet A/Bs).
    # A short switch interval hands the GIL back to this thread within 0.5 ms instead of 5 ms each
    # time it wants it; it is restored once the core is up.
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(STARTUP_SWITCH_INTERVAL)
    import webview

    # New windows only past consent, and no WebRTC in any frame (findings S3, S4; desktop_sandbox.py).
    harden_qt(new_window_router(core.submit, lambda: core.app, actions.open_link))
    core.begin()
    state = WindowState(paths.state_file)
    # No js_api: the page reaches the core over the same WebSocket as in browser mode.
    mode = saved_mode(paths.config_file)
    main: Any = webview.create_window("Moka", html=skeleton_html(mode), min_size=(640, 480),
                                      text_select=True, **state.geometry())
    # Qt paints the same frame over the web view until its renderer shows the page: the first frame.
    main.events.before_show += lambda window: skeleton_qt.install(window, mode)
    main.events.resized += lambda w, h: state.update(width=w, height=h)
    main.events.moved += lambda x, y: state.update(x=x, y=y)

    def remember_geometry() -> None:
        try:
            state.update(width=int(main.width), height=int(main.height))
        except Exception:  # the window may already be half gone
            pass

    main.events.closing += remember_geometry
    popouts: dict[str, Any] = {}
    actions.window = main
    actions.popouts = popouts

    def on_event(event: str, data: Any) -> None:
        if event != "view.display" or not isinstance(data, dict):
            return
        if data.get("opensWindow"):
            open_popout(data["viewId"])
        elif data.get("viewId") in popouts:  # "Return inline" from the main window closes the pop-out
            popouts.pop(data["viewId"]).destroy()

    def open_popout(view_id: str) -> None:
        app = core.app
        view = app.view_host.views.get(view_id) if app is not None else None
        if app is None or view is None or view_id in popouts:
            return
        win: Any = webview.create_window(f"{view.tool.title or view.tool.name} — Moka", url=app.view_host.popout_url(view),
                                         width=720, height=640, min_size=(320, 240))
        popouts[view_id] = win

        def closed() -> None:
            if popouts.pop(view_id, None) is None or core.web is None:
                return  # Moka closed it itself: the view is already back inline
            frame = {"id": None, "method": "view.event", "params": {"viewId": view_id, "kind": "popout-closed"}}
            core.submit(core.web.bridge.handle(frame))

        win.events.closed += closed

    failed: list[BaseException] = []
    navigated, page_loaded, shown = threading.Event(), threading.Event(), threading.Event()
    main.events.shown += shown.set
    main.events.loaded += lambda: page_loaded.set() if navigated.is_set() else None

    def after_start() -> None:
        # The page replaces the skeleton once the window is on screen and the web server is up: it
        # loads beside the core's imports, and its socket waits until the core is there (§13).
        shown.wait(5)
        try:
            url = core.serving_url()
            navigated.set()
            # The page waits for the core in the mode the skeleton drew: no light flash in a dark Moka.
            main.load_url(url + (f"&mode={mode}" if mode in ("light", "dark") else ""))
            core.start()
        except Exception as exc:  # shown in the window and returned as the exit status
            failed.append(exc)
            main.load_html(failure_html(exc))
            return
        finally:
            sys.setswitchinterval(switch_interval)
        assert core.app is not None and core.web is not None
        core.app.subscribe(on_event)
        if core.app.instance_lock is not None:
            core.app.instance_lock.listen_for_focus(actions.focus)
        if driver is not None:
            page_loaded.wait(30)  # drivers start on the real page, as they did before the skeleton
            try:
                driver(core, main)
            finally:
                main.destroy()

    try:
        webview.start(after_start, private_mode=True, menu=build_menu(DesktopCommands(core, actions)), icon=str(ICON))
    finally:
        sys.setswitchinterval(switch_interval)
        state.save()
        core.stop()
    if failed:
        raise failed[0]
    return 0


def failure_html(exc: BaseException) -> str:
    """What the window shows when the core could not start (the terminal gets the same message)."""
    text = html.escape(str(exc) or type(exc).__name__)
    hint = html.escape(getattr(exc, "hint", "") or "")
    return (f"<!doctype html><meta charset='utf-8'><title>Moka</title><body style='font:15px system-ui,sans-serif;"
            f"margin:15vh auto;max-width:560px;padding:0 24px;color:#221d19'><h2>Moka could not start</h2>"
            f"<p>{text}</p><p style='color:#6f665e'>{hint}</p><p style='color:#6f665e'>Close this window; "
            f"the message is also printed in the terminal.</p></body>")


if __name__ == "__main__":  # pragma: no cover - manual runs
    from moka_shell.paths import resolve_paths

    sys.exit(run_desktop(resolve_paths()))
