"""The engines ``moka check`` renders views in, and what each can observe."""

from __future__ import annotations

import importlib.util
import os
import shutil
import time
from pathlib import Path
from collections.abc import Callable
from typing import Any

# Run inside the view's own frame: what is in its DOM, how big the frame is, and whether a container
# as tall as the frame hides content below its bottom (overflow hidden), which no person can reach.
_PROBE = """() => {
  const b = document.body;
  const frame = {width: innerWidth, height: innerHeight};
  if (!b) return {text: 0, elements: 0, height: 0, frame, clipped: null};
  const seen = [...b.querySelectorAll('*')].filter((el) => {
    if (['SCRIPT', 'STYLE', 'TEMPLATE', 'META', 'LINK'].includes(el.tagName)) return false;
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none' &&
      (['IMG', 'CANVAS', 'SVG', 'VIDEO', 'IFRAME', 'INPUT', 'BUTTON', 'SELECT', 'TEXTAREA'].includes(el.tagName)
       || s.backgroundImage !== 'none');
  });
  let clipped = null;
  for (const el of [document.documentElement, b, ...b.querySelectorAll('*')]) {
    if (!/hidden|clip/.test(getComputedStyle(el).overflowY)) continue;
    const r = el.getBoundingClientRect();
    if (r.bottom < innerHeight - 2 || r.height < innerHeight / 2) continue;
    if (el.scrollHeight > el.clientHeight + 2) {
      const name = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '');
      clipped = {by: name, content: el.scrollHeight, shown: el.clientHeight};
      break;
    }
  }
  return {text: (b.innerText || '').trim().length, elements: seen.length,
          height: Math.ceil(document.documentElement.scrollHeight), frame, clipped};
}"""
MAX_COLOURS = 256  # distinct colours counted in a view's pixels; more reads as MAX_COLOURS + 1
# The square left out at each corner: the card's rounded corners (--moka-radius, 10 px) clip the
# frame's bottom corners, and their anti-aliasing is Moka's painting, not the view's.
CORNER = 16


def count_colours(png: bytes) -> dict[str, int] | None:
    """Distinct colours in a PNG but its corners (1: nothing painted), with its size; None without Pillow."""
    try:
        from PIL import Image
    except ImportError:
        return None
    import io

    with Image.open(io.BytesIO(png)) as img:
        rgb = img.convert("RGB")
        width, height = rgb.size
        c = CORNER if min(width, height) > 3 * CORNER else 0
        seen: set[Any] = set()
        for box in ((c, 0, width - c, height), (0, c, width, height - c)):  # a cross: all but the corners
            colours = rgb.crop(box).getcolors(MAX_COLOURS)
            if colours is None:
                return {"colours": MAX_COLOURS + 1, "width": width, "height": height}
            seen.update(colour for _, colour in colours)
        return {"colours": min(len(seen), MAX_COLOURS + 1), "width": width, "height": height}


class Engine:
    """Something that shows a URL headless; optional abilities say what they lack."""

    name = "?"
    lacks: tuple[str, ...] = ()

    def open(self, url: str) -> None:
        """Load the page."""
        raise NotImplementedError

    def probe(self, view_id: str) -> dict[str, Any] | None:
        """What the view's frame renders (text length, visible elements, height); None if unknown."""
        return None

    def screenshot(self, path: str) -> bool:
        """Save a PNG of the view's frame; False if this engine cannot."""
        return False

    def painted(self, view_id: str) -> dict[str, int] | None:
        """What the view's frame paints: its distinct colours and size; None if this engine cannot tell."""
        return None

    def failed_loads(self) -> dict[str, str]:
        """URL → why it did not load (an HTTP status, a network error), as far as this engine saw."""
        return {}

    def set_scheme(self, dark: bool) -> None:
        """The page's colour scheme (prefers-color-scheme)."""

    def pause(self, seconds: float) -> None:
        """Wait, letting the engine process its events meanwhile."""
        time.sleep(seconds)

    def close(self) -> None:
        """Release the engine."""


class UrlEngine(Engine):
    """An engine that can only load URLs (the pywebview engine)."""

    def __init__(self, name: str, open_url: Callable[[str], None], lacks: tuple[str, ...]) -> None:
        self.name = name
        self._open = open_url
        self.lacks = lacks

    def open(self, url: str) -> None:
        """Load the page."""
        self._open(url)


def chromium_path() -> str | None:
    """MOKA_CHROMIUM, or the system's Chromium (None: Playwright's own, if installed)."""
    return os.environ.get("MOKA_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def _playwright_chromium() -> bool:
    """Has ``playwright install chromium`` put a Chromium where Playwright looks?"""
    root = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or Path.home() / ".cache" / "ms-playwright")
    return root.is_dir() and any(p.name.startswith("chromium") for p in root.iterdir())


def pick_engine(engine: str) -> str:
    """chromium when Playwright and a Chromium are here, else the pywebview engine."""
    if engine != "auto":
        return engine
    # Found, not imported: a check with nothing to render never pays for Playwright (launch_hint.py).
    try:
        found = importlib.util.find_spec("playwright") is not None
    except (ImportError, ValueError):  # blocked in sys.modules, or a broken install
        found = False
    if not found:
        return "webview"
    return "chromium" if chromium_path() or _playwright_chromium() else "webview"


class ChromiumEngine(Engine):
    """Chromium through Playwright (sync API, on the calling thread)."""

    name = "chromium"

    def __init__(self, width: int = 900) -> None:
        from playwright.sync_api import sync_playwright

        self._pw = sync_playwright().start()
        self.browser = self._pw.chromium.launch(
            executable_path=chromium_path(), headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run", "--disable-sync"])
        self.page = self.browser.new_page(viewport={"width": width, "height": 800})
        self._failed: dict[str, str] = {}
        # Every frame's requests, the views' out-of-process ones included: the status of a file that
        # did not load, which the view's own error event cannot tell.
        self.page.on("response", self._response)
        self.page.on("requestfailed", lambda req: self._note(req.url, req.failure or "failed"))
        if importlib.util.find_spec("PIL") is None:
            self.lacks = ("read a view's pixels (Pillow is missing: pip install 'moka-shell[check]'), so "
                          "blankness is judged by the DOM alone",)

    def open(self, url: str) -> None:
        """Load the page."""
        self.page.goto(url, wait_until="domcontentloaded")

    def _frame(self, view_id: str) -> Any:
        return next((f for f in self.page.frames if f"/view/{view_id}" in f.url), None)

    def probe(self, view_id: str) -> dict[str, Any] | None:
        """Look inside the view's frame (Playwright reaches cross-origin frames)."""
        from playwright.sync_api import Error

        frame = self._frame(view_id)
        if frame is None:
            return None
        try:
            found = frame.evaluate(_PROBE)
        except Error:
            return None
        return found if isinstance(found, dict) else None

    def screenshot(self, path: str) -> bool:
        """The view's frame as the page shows it, its animations settled and no text caret (baselines compare it)."""
        from playwright.sync_api import Error

        frames = self.page.locator(".view-frame")
        try:
            target = frames.first if frames.count() else self.page.locator("body")
            # Playwright reaches every frame, the view's out-of-process one too: finite CSS animations and
            # transitions jump to their end, infinite ones to their start, and carets are hidden, so the
            # same view gives the same pixels whenever its quiet moment falls.
            target.screenshot(path=path, timeout=5000, animations="disabled", caret="hide")
        except Error:
            return False
        return True

    def painted(self, view_id: str) -> dict[str, int] | None:
        """Count the colours of the frame's pixels: a view that paints nothing is one colour."""
        from playwright.sync_api import Error

        try:
            png = self.page.locator(f'.view-frame[data-view-id="{view_id}"]').screenshot(timeout=5000)
        except Error:
            return None
        return count_colours(png)

    def _response(self, response: Any) -> None:
        if response.status >= 400:
            self._note(response.url, f"HTTP {response.status} {response.status_text}".rstrip())

    def _note(self, url: str, why: str) -> None:
        # The first reason is kept: a 404 for a script is also "blocked by ORB" once Chromium drops it.
        if len(self._failed) < 500 and url not in self._failed:  # bounded; a looping view is noted once
            self._failed[url] = why

    def failed_loads(self) -> dict[str, str]:
        """URL → HTTP status or network error, for every request that failed since Chromium started."""
        return dict(self._failed)

    def pause(self, seconds: float) -> None:
        """Wait inside Playwright: the sync API sees frames and console events only while it runs."""
        self.page.wait_for_timeout(seconds * 1000)

    def set_scheme(self, dark: bool) -> None:
        """Emulate the system colour scheme."""
        self.page.emulate_media(color_scheme="dark" if dark else "light")

    def close(self) -> None:
        """Close Chromium."""
        self.browser.close()
        self._pw.stop()
