"""The environment QtWebEngine needs before pywebview starts it (desktop app and `moka check`)."""

from __future__ import annotations

import os
import sys


def prepare_qt_environment(*, offscreen_without_display: bool = False) -> None:
    """Set QtWebEngine's Chromium flags (and, if asked, the offscreen platform with no display)."""
    if offscreen_without_display and sys.platform.startswith("linux") \
            and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    flags = os.environ.get("QTWEBENGINE_CHROMIUM_FLAGS", "").split()
    # QtWebEngine refuses to run as root without --no-sandbox.
    if hasattr(os, "getuid") and os.getuid() == 0 and "--no-sandbox" not in flags:
        flags.append("--no-sandbox")
    # QtWebEngine runs the page and every view in one renderer, and V8 seldom runs a full
    # collection there on its own: a parked view's memory stayed until the app quit (100 views
    # took 3.6 GB). With gc() exposed, js/views/host.js collects once after views are parked or closed
    # (docs/performance.md §4). A view can call it too; that costs it CPU time, nothing more.
    if not any(f.startswith("--js-flags") for f in flags):
        flags.append("--js-flags=--expose-gc")
    os.environ["QTWEBENGINE_CHROMIUM_FLAGS"] = " ".join(flags)
