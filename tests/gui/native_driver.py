"""Drives the desktop app under a real X server: its first frame, title, native menu and its mnemonics, a
shortcut, scrollbars, icon, notification.

Run in a fresh process by tests/gui/test_desktop_native.py (Qt starts once per process), with
DISPLAY set to an Xvfb display. Prints one JSON line with what it saw.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import webview

from moka_shell.paths import Paths
from moka_shell.shells.desktop import qt as desktop_qt
from moka_shell.shells.desktop.run import run_desktop

OUT: dict[str, Any] = {}


def on_gui(fn: Any) -> Any:
    box: list[Any] = []
    desktop_qt.on_gui_thread(lambda: box.append(fn()), wait=10)
    return box[0] if box else None


def wait_title(native: Any, wanted: str, timeout: float = 20) -> str:
    deadline = time.monotonic() + timeout
    title = ""
    while time.monotonic() < deadline:
        title = on_gui(native.windowTitle)
        if title == wanted:
            break
        time.sleep(0.1)
    return str(title)


def js(native: Any, code: str) -> Any:
    """Run ``code`` in the page (Qt's own call: the page's CSP refuses pywebview's eval) and return its value."""
    box: list[Any] = []
    done = threading.Event()
    on_gui(lambda: native.webview.page().runJavaScript(code, lambda v: (box.append(v), done.set())))
    done.wait(10)
    return box[0] if box else None


def skeletons(native: Any) -> list[Any]:
    return list(on_gui(lambda: [c for c in native.webview.children() if c.objectName() == "moka-skeleton"
                                and c.isVisible()]))


def watch_first_frame() -> None:
    """Note what the main window shows when it is first on screen (before its page has loaded)."""
    create = webview.create_window

    def create_window(*args: Any, **kwargs: Any) -> Any:
        window = create(*args, **kwargs)
        if "first" in OUT:
            return window

        def shown() -> None:
            image = on_gui(lambda: window.native.grab().toImage())
            OUT["first"] = {name: image.pixelColor(x, y).name()
                            for name, (x, y) in {"rail": (30, 500), "brand": (38, 34), "body": (300, 700)}.items()}
            OUT["first_overlay"] = len(skeletons(window.native))

        OUT["first"] = None
        window.events.shown += shown
        return window

    webview.create_window = create_window


def scrollbar(native: Any) -> dict[str, Any]:
    """The Settings screen's scrollbar at 900×600: its width, and the bottom of its track (arrows or not)."""
    box = js(native, "(() => { const s = document.querySelector('#screen-settings .screen-scroll') || "
                     "document.querySelector('#screen-settings'); const r = s.getBoundingClientRect(); s.scrollTop = 0;"
                     " return {right: r.right, bottom: r.bottom, bar: s.offsetWidth - s.clientWidth,"
                     " bg: getComputedStyle(document.body).backgroundColor}; })()")
    time.sleep(0.5)
    image = on_gui(lambda: native.grab().toImage())
    top = on_gui(lambda: native.webview.mapTo(native, native.webview.rect().topLeft()).y())
    x, bottom = int(box["right"]) - int(box["bar"]) // 2 - 1, int(box["bottom"]) + top
    column = {image.pixelColor(x, y).name() for y in range(bottom - 14, bottom - 1)}
    return {"width": box["bar"], "track_bottom": sorted(column), "page": image.pixelColor(x - 40, bottom - 8).name()}


def drive(core: Any, window: Any) -> None:
    native = window.native
    OUT["overlay_after_load"] = len(skeletons(native))
    OUT["title"] = wait_title(native, "Chat — Moka")
    OUT["icon"] = not on_gui(lambda: native.windowIcon().isNull())
    OUT["menus"] = on_gui(lambda: [a.text() for a in native.menuBar().actions()])
    OUT["file_menu"] = on_gui(lambda: [a.text() for a in native.menuBar().actions()[0].menu().actions() if a.text()])
    # A real key press from the X server into the focused window: Ctrl+2 is the Tool runner.
    win_id = str(on_gui(lambda: int(native.winId())))
    subprocess.run(["xdotool", "windowfocus", "--sync", win_id], check=False, timeout=10)
    time.sleep(0.3)
    subprocess.run(["xdotool", "key", "--window", win_id, "ctrl+2"], check=False, timeout=10)
    OUT["title_after_key"] = wait_title(native, "Tool runner — Moka")
    # The menu's own action: View → Servers (what a click on it runs).
    view_menu = on_gui(lambda: native.menuBar().actions()[2].menu())
    servers = on_gui(lambda: next(a for a in view_menu.actions() if a.text().startswith("Servers")))
    on_gui(servers.trigger)
    OUT["title_after_menu"] = wait_title(native, "Servers — Moka")
    # Alt+F in the composer opens File (its mnemonic), and types nothing.
    subprocess.run(["xdotool", "key", "--window", win_id, "ctrl+1"], check=False, timeout=10)
    wait_title(native, "Chat — Moka")
    js(native, "document.getElementById('composer').focus()")
    subprocess.run(["xdotool", "key", "--window", win_id, "alt+f"], check=False, timeout=10)
    from qtpy.QtWidgets import QApplication

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not on_gui(QApplication.activePopupWidget):
        time.sleep(0.1)
    OUT["alt_f_menu"] = on_gui(lambda: QApplication.activePopupWidget() and QApplication.activePopupWidget().title())
    OUT["alt_f_typed"] = js(native, "document.getElementById('composer').value")
    on_gui(lambda: native.resize(900, 600))
    on_gui(lambda: QApplication.activePopupWidget() and QApplication.activePopupWidget().close())
    settings = on_gui(lambda: next(a for a in view_menu.actions() if a.text().startswith("Settings")))
    on_gui(settings.trigger)
    wait_title(native, "Settings — Moka")
    OUT["scrollbar"] = scrollbar(native)
    reply = core.submit(core.web.bridge.handle({"id": 1, "method": "window.notify",
                                                "params": {"title": "Moka", "body": "The reply is ready."}})).result(10)
    OUT["notify"] = reply.get("result")
    time.sleep(0.5)
    on_gui(lambda: native.grab().save(sys.argv[2]))
    OUT["screenshot"] = Path(sys.argv[2]).exists()


if __name__ == "__main__":
    started = time.monotonic()
    watch_first_frame()
    data = Path(sys.argv[1])
    run_desktop(Paths(data / "config.json", data), driver=drive)
    OUT["seconds"] = round(time.monotonic() - started, 2)
    print(json.dumps(OUT))
