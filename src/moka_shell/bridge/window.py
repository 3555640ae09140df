"""Bridge methods for the native window around the page: title, quit, zoom, notifications.

The desktop shell implements them (``WindowActions``); in browser mode the tab is the window,
so each answers that it did nothing and the page does what a browser allows instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from moka_shell.bridge.params import Params, opt_str, req_str
from moka_shell.errors import InvalidParamsError

if TYPE_CHECKING:
    from moka_shell.core.app import MokaApp

TITLE_MAX = 200
NOTIFY_MAX = 400


class WindowMethods:
    """``window.*``."""

    def __init__(self, app: MokaApp) -> None:
        self.app = app

    def methods(self) -> dict[str, Any]:
        """Method name → coroutine function."""
        return {"window.setTitle": self.set_title, "window.quit": self.quit, "window.zoom": self.zoom,
                "window.notify": self.notify}

    def _action(self, name: str) -> Any:
        return getattr(self.app.actions, name, None)

    async def set_title(self, p: Params) -> dict[str, Any]:
        """Title the main window; ``{native}`` says whether there is one to title."""
        title = " ".join(req_str(p, "title").split())[:TITLE_MAX] or "Moka"
        action = self._action("set_title")
        if action is not None:
            action(title)
        return {"native": action is not None}

    async def quit(self, p: Params) -> dict[str, Any]:
        """Quit the desktop app; ``{native: false}`` in browser mode (closing the tab is the person's)."""
        action = self._action("quit")
        if action is not None:
            action()
        return {"native": action is not None}

    async def zoom(self, p: Params) -> dict[str, Any]:
        """Zoom the window one step; ``{factor}`` is null where the shell cannot (the page zooms itself)."""
        step = p.get("step")
        if step not in (-1, 0, 1):
            raise InvalidParamsError("'step' must be -1 (out), 0 (actual size) or 1 (in)")
        action = self._action("zoom")
        return {"factor": action(step) if action is not None else None}

    async def notify(self, p: Params) -> dict[str, Any]:
        """A desktop notification; ``{shown: false}`` where the shell has none (the page may use its own)."""
        title = req_str(p, "title")[:NOTIFY_MAX]
        body = (opt_str(p, "body") or "")[:NOTIFY_MAX]
        action = self._action("notify")
        return {"shown": bool(action(title, body)) if action is not None else False}
