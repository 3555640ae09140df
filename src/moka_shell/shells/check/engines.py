"""The engines ``moka check`` renders views in, and what each can observe."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from collections.abc import Callable
from typing import Any

# Run inside the view's own frame: is anything there to see?
_PROBE = """() => {
  const b = document.body;
  if (!b) return {text: 0, elements: 0, height: 0};
  const seen = [...b.querySelectorAll('*')].filter((el) => {
    if (['SCRIPT', 'STYLE', 'TEMPLATE', 'META', 'LINK'].includes(el.tagName)) return false;
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none' &&
      (['IMG', 'CANVAS', 'SVG', 'VIDEO', 'IFRAME', 'INPUT', 'BUTTON', 'SELECT', 'TEXTAREA'].includes(el.tagName)
       || s.backgroundImage !== 'none');
  });
  return {text: (b.innerText || '').trim().length, elements: seen.length,
          height: Math.ceil(document.documentElement.scrollHeight)};
}"""


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
    try:
        import playwright  # noqa: F401
    except ImportError:
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
        """The view's frame as the page shows it."""
        from playwright.sync_api import Error

        frames = self.page.locator("iframe")
        try:
            target = frames.first if frames.count() else self.page.locator("body")
            target.screenshot(path=path, timeout=5000)
        except Error:
            return False
        return True

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
