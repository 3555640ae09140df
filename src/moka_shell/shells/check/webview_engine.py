"""``moka check --engine webview``: render views in the pywebview engine (Qt offscreen, GTK).

This is how the frozen app checks itself: it ships no Playwright. Only this module and
``shells/desktop/`` import ``webview``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from moka_shell.shells.check.engines import Engine, UrlEngine
from moka_shell.shells.check.qt_grab import qt_grabber
from moka_shell.shells.qt_env import prepare_qt_environment

# What this engine cannot do that Chromium can (the report names each one an option needed).
NO_PROBE = "look inside the view's frame, so a view that never sizes itself is a warning, not a 'blank view' failure"


class WebviewEngine(UrlEngine):
    """The pywebview window; screenshots where the backend can grab it (Qt)."""

    def __init__(self, open_url: Callable[[str], None], grab: Callable[[str], bool] | None) -> None:
        super().__init__("webview", open_url, (NO_PROBE,) if grab else ("screenshots", NO_PROBE))
        self._grab = grab

    def screenshot(self, path: str) -> bool:
        """The whole window (the single-view page), taken on the GUI thread."""
        return bool(self._grab and self._grab(path))


def render_in_webview(render: Callable[[Engine], None]) -> None:
    """Open one window (offscreen without a display) and hand ``render`` the engine that loads pages in it."""
    prepare_qt_environment(offscreen_without_display=True)
    import webview

    window: Any = webview.create_window("Moka check", html="<!doctype html><title>Moka check</title>", width=900, height=800)
    loaded = threading.Event()
    window.events.loaded += lambda *a: loaded.set()
    errors: list[BaseException] = []

    opened = [0]

    def open_url(url: str) -> None:
        loaded.clear()
        if opened[0] == 0:
            window.load_url(url)
        else:
            # WebKitGTK ignores a second load_url to the same page with a new query; a
            # navigation from the page itself works in every engine.
            window.run_js(f"location.replace({json.dumps(url)})")
        opened[0] += 1
        loaded.wait(20)

    def drive(*_a: Any) -> None:
        try:
            loaded.wait(20)
            render(WebviewEngine(open_url, qt_grabber(window)))
        except BaseException as exc:  # reported after the GUI loop ends
            errors.append(exc)
        finally:
            window.destroy()

    webview.start(drive, private_mode=True)
    if errors:
        raise errors[0]
