"""Native things pywebview does not offer, done on Qt's GUI thread: edit actions and zoom.

Qt widgets may only be touched on the GUI thread, while menu actions and bridge calls arrive on
other threads; ``on_gui_thread`` hands a function over through a queued signal. Everything here
is a no-op (returning False) on a non-Qt backend, where the caller falls back to the page.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

ZOOM_STEPS = (0.5, 0.67, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0)

_invoker: Any = None
_invoker_lock = threading.Lock()


def _qt_view(window: Any) -> Any:
    """The window's QWebEngineView, or None on another backend."""
    native = getattr(window, "native", None)
    return getattr(native, "webview", None)


def on_gui_thread(fn: Callable[[], None], wait: float = 5.0) -> bool:
    """Run ``fn`` on Qt's GUI thread and wait for it; False when Qt is not running.

    An exception ``fn`` raises is raised here, in the caller's thread.
    """
    global _invoker
    try:
        from qtpy.QtCore import QCoreApplication, QObject, Signal, Slot
    except ImportError:
        return False
    qapp = QCoreApplication.instance()
    if qapp is None:
        return False
    if threading.current_thread() is threading.main_thread():
        fn()
        return True
    with _invoker_lock:
        if _invoker is None:
            class Invoker(QObject):  # one per process, living on the GUI thread
                call = Signal(object)

                # A declared slot: PyQt connects a plain Python method through a helper object in
                # the *connecting* thread, and the call would then run there, not on the GUI thread.
                @Slot(object)
                def run(self, job: Any) -> None:
                    job()

            invoker = Invoker()
            invoker.moveToThread(qapp.thread())
            invoker.call.connect(invoker.run)
            _invoker = invoker
    done = threading.Event()
    failed: list[BaseException] = []

    def job() -> None:
        # An exception escaping a slot makes PyQt abort the whole process: carry it back instead.
        try:
            fn()
        except BaseException as exc:
            failed.append(exc)
        finally:
            done.set()

    _invoker.call.emit(job)
    finished = done.wait(wait)
    if failed:
        raise failed[0]
    return finished


def edit_action(window: Any, name: str) -> bool:
    """Undo, redo, cut, copy, paste or select all in the window's page, as its own menu would."""
    view = _qt_view(window)
    if view is None:
        return False
    from qtpy.QtWebEngineWidgets import QWebEnginePage

    actions = {"undo": QWebEnginePage.Undo, "redo": QWebEnginePage.Redo, "cut": QWebEnginePage.Cut,
               "copy": QWebEnginePage.Copy, "paste": QWebEnginePage.Paste, "selectAll": QWebEnginePage.SelectAll}
    action = actions.get(name)
    if action is None:
        return False
    return on_gui_thread(lambda: view.page().triggerAction(action))


def zoom(window: Any, step: int) -> float | None:
    """Zoom the window's page one step in (+1), out (-1) or back to 100 % (0); the new factor."""
    view = _qt_view(window)
    if view is None:
        return None
    result: list[float] = []

    def apply() -> None:
        current = float(view.zoomFactor())
        if step == 0:
            target = 1.0
        else:
            nearest = min(range(len(ZOOM_STEPS)), key=lambda i: abs(ZOOM_STEPS[i] - current))
            target = ZOOM_STEPS[max(0, min(len(ZOOM_STEPS) - 1, nearest + (1 if step > 0 else -1)))]
        view.setZoomFactor(target)
        result.append(target)

    on_gui_thread(apply)
    return result[0] if result else None
