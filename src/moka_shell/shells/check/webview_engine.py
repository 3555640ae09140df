"""``moka check --engine webview``: render views in the pywebview engine (Qt offscreen, GTK).

This is how the frozen app checks itself: it ships no Playwright. Only this module and
``shells/desktop/`` import ``webview``.
"""

from __future__ import annotations

import io
import json
import tempfile
import threading
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from moka_shell.shells.check.engines import Engine, UrlEngine, count_colours
from moka_shell.shells.check.qt_grab import qt_grabber
from moka_shell.shells.qt_env import prepare_qt_environment

# What this engine cannot do that Chromium can (the report names each one an option needed).
NO_PROBE = ("look inside the view's frame (its text, elements and clipping); blankness is judged by the pixels "
            "it paints")
# Without a grab (GTK) not even pixels are read.
NO_PROBE_NO_GRAB = "look inside the view's frame, so a view that never sizes itself is a warning, not a 'blank view' failure"


# Where the view's frame is in the window, in device pixels, read from Moka's own page (never
# from inside the frame, which this engine cannot reach).
FRAME_BOX_JS = """(() => { const f = document.querySelector('.view-frame[data-view-id=' + JSON.stringify(%s) + ']');
  if (!f) return null; const r = f.getBoundingClientRect(), k = window.devicePixelRatio || 1;
  return [Math.round(r.left * k), Math.round(r.top * k), Math.round(r.right * k), Math.round(r.bottom * k)]; })()"""


class WebviewEngine(UrlEngine):
    """The pywebview window; screenshots and painted pixels where the backend can grab it (Qt)."""

    def __init__(self, open_url: Callable[[str], None], grab: Callable[[str], bool] | None,
                 run_js: Callable[[str], Any] | None = None) -> None:
        super().__init__("webview", open_url, (NO_PROBE,) if grab else ("screenshots", NO_PROBE_NO_GRAB))
        self._grab = grab
        self._run_js = run_js

    def screenshot(self, path: str) -> bool:
        """The whole window (the single-view page), taken on the GUI thread."""
        return bool(self._grab and self._grab(path))

    def painted(self, view_id: str) -> dict[str, int] | None:
        """The colours of the frame's pixels in a grab of the window: one colour is a blank view."""
        if not (self._grab and self._run_js):
            return None
        box = self._run_js(FRAME_BOX_JS % json.dumps(view_id))
        if not (isinstance(box, list) and len(box) == 4 and box[2] > box[0] and box[3] > box[1]):
            return None
        try:
            from PIL import Image
        except ImportError:  # Pillow comes with the "check" extra; without it, blankness is not judged by pixels
            return None
        with tempfile.TemporaryDirectory(prefix="moka-check-") as tmp:
            path = Path(tmp) / "window.png"
            if not self._grab(str(path)):
                return None
            with Image.open(path) as img:
                crop = img.convert("RGB").crop(tuple(int(v) for v in box))  # type: ignore[arg-type]
                out = io.BytesIO()
                crop.save(out, format="PNG")
        return count_colours(out.getvalue())


def page_script(window: Any) -> Callable[[str], Any] | None:
    """Run a script in Moka's page for its value, as the embedder (Qt only), or None.

    pywebview's ``window.evaluate_js`` wraps the script in ``eval``, which the page's CSP refuses
    (no 'unsafe-eval', by design); the Qt backend's own call runs it without.
    """
    native = getattr(window, "native", None)
    run = getattr(native, "evaluate_js", None)
    if run is None or getattr(native, "webview", None) is None:
        return None

    def value(source: str) -> Any:
        text = run(f"JSON.stringify({source})", True)
        try:
            return json.loads(text) if isinstance(text, str) else text
        except ValueError:
            return None

    return value


def showing(window: Any, url: str) -> bool:
    """Does the window show the page ``url`` names (the same view), as far as the backend can say?"""
    try:
        current = window.get_current_url()
    except Exception:  # pywebview raises its own errors and the backend's here: unknown counts as yes
        return True
    if not isinstance(current, str):
        return True
    want = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("view")
    return urllib.parse.parse_qs(urllib.parse.urlsplit(current).query).get("view") == want


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
        # A navigation that did not happen would show up a minute later as a view that never
        # started: it is checked (the page loaded, and it is the page asked for) and tried again.
        for _attempt in range(3):
            loaded.clear()
            if opened[0] == 0:
                window.load_url(url)
            else:
                # WebKitGTK ignores a second load_url to the same page with a new query; a
                # navigation from the page itself works in every engine.
                window.run_js(f"location.replace({json.dumps(url)})")
            opened[0] += 1
            if loaded.wait(20) and showing(window, url):
                return

    def drive(*_a: Any) -> None:
        try:
            loaded.wait(20)
            render(WebviewEngine(open_url, qt_grabber(window), page_script(window)))
        except BaseException as exc:  # reported after the GUI loop ends
            errors.append(exc)
        finally:
            window.destroy()

    webview.start(drive, private_mode=True)
    if errors:
        raise errors[0]
