"""Screenshots for ``moka check --engine webview`` under Qt: grab the window on the GUI thread.

Only the Qt backend of pywebview is supported (WebKitGTK has no such call here); the check's
thread asks through a queued signal and waits for the PNG to be written.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

GRAB_TIMEOUT = 10.0


def qt_grabber(window: Any) -> Callable[[str], bool] | None:
    """A function that saves the window as a PNG (True on success), or None outside Qt."""
    native = getattr(window, "native", None)
    if native is None:
        return None
    try:
        from qtpy import QtCore, QtWidgets
    except ImportError:
        return None
    app = QtWidgets.QApplication.instance()
    if app is None or not isinstance(native, QtWidgets.QWidget):
        return None

    class Grabber(QtCore.QObject):  # type: ignore[misc]
        """Lives on the GUI thread; grabs when asked."""

        asked = QtCore.Signal(str)

        def __init__(self) -> None:
            super().__init__()
            self.done = threading.Event()
            self.ok = False
            self.asked.connect(self._grab)

        def _grab(self, path: str) -> None:
            try:
                target: Any = getattr(native, "webview", None) or native
                self.ok = bool(target.grab().save(path, "PNG"))
            except Exception:  # a grab that fails is reported as "no screenshot", never a crash
                self.ok = False
            finally:
                self.done.set()

    grabber = Grabber()
    grabber.moveToThread(app.thread())

    def shoot(path: str) -> bool:
        grabber.done.clear()
        grabber.asked.emit(path)
        return grabber.done.wait(GRAB_TIMEOUT) and grabber.ok

    return shoot
