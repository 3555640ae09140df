"""``moka check --engine webview``: render views in the pywebview engine (Qt offscreen, GTK).

This is how the frozen app checks itself: it ships no Playwright. Only this module and
``shells/desktop.py`` import ``webview``.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

from moka_shell.shells.check_engines import UrlEngine
from moka_shell.shells.qt_env import prepare_qt_environment

if TYPE_CHECKING:
    from moka_shell.core.mcp.catalog import ToolEntry
    from moka_shell.shells.check import Checker
    from moka_shell.shells.check_profiles import ProfileSpec

# What this engine cannot do that Chromium can (the report names each one an option needed).
LACKS = ("screenshots",
         "look inside the view's frame, so a view that never sizes itself is a warning, not a 'blank view' failure")


def render_all_in_webview(checker: Checker, entries: list[ToolEntry], specs: list[ProfileSpec]) -> None:
    """Open one window (offscreen without a display) and render each view in it in turn."""
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
            checker.render_all(entries, UrlEngine("webview", open_url, LACKS), specs)
        except BaseException as exc:  # reported after the GUI loop ends
            errors.append(exc)
        finally:
            window.destroy()

    webview.start(drive, private_mode=True)
    if errors:
        raise errors[0]
