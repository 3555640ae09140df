"""Drives the desktop app under a real X server: title, native menu, a shortcut, icon, notification.

Run in a fresh process by tests/gui/test_desktop_native.py (Qt starts once per process), with
DISPLAY set to an Xvfb display. Prints one JSON line with what it saw.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

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


def drive(core: Any, window: Any) -> None:
    native = window.native
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
    reply = core.submit(core.web.bridge.handle({"id": 1, "method": "window.notify",
                                                "params": {"title": "Moka", "body": "The reply is ready."}})).result(10)
    OUT["notify"] = reply.get("result")
    time.sleep(0.5)
    on_gui(lambda: native.grab().save(sys.argv[2]))
    OUT["screenshot"] = Path(sys.argv[2]).exists()


if __name__ == "__main__":
    started = time.monotonic()
    data = Path(sys.argv[1])
    run_desktop(Paths(data / "config.json", data), driver=drive)
    OUT["seconds"] = round(time.monotonic() - started, 2)
    print(json.dumps(OUT))
