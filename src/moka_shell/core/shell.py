"""What the core needs from the shell around it: where it is served, and the native actions."""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

Mode = Literal["headless", "desktop", "browser", "check"]
Emit = Callable[[str, Any], None]


@dataclass(frozen=True)
class Endpoints:
    """The two loopback origins and this run's token (set by the web server that serves them)."""

    host_origin: str = ""
    sandbox_origin: str = ""
    token: str = ""
    proxy_page: str = "/proxy.html"  # the sandbox proxy's path; the web server names it by content (cacheable)


class ShellActions(Protocol):
    """Native things a shell does for the core; browser mode and headless runs use events."""

    def open_link(self, url: str) -> None:
        """Open ``url`` outside Moka (the default browser)."""
        ...

    async def save_download(self, file: dict[str, Any]) -> None:
        """Save a view's file: ``{"filename", "mimeType", "text" | "blob"}``."""
        ...


class WindowActions(Protocol):
    """What a shell with native windows also does (the desktop); shells without them lack these."""

    def set_title(self, title: str) -> None:
        """Title the main window (the page's screen and conversation)."""
        ...

    def quit(self) -> None:
        """Close every window and stop."""
        ...

    def zoom(self, step: int) -> float | None:
        """Zoom the focused window in (+1), out (-1) or reset (0); the new factor."""
        ...

    def notify(self, title: str, body: str) -> bool:
        """A desktop notification; False when the platform has no way to show one."""
        ...


class EventShellActions:
    """The default: hand links and downloads to the page as events (browser mode, tests)."""

    def __init__(self, emit: Emit) -> None:
        self._emit = emit

    def open_link(self, url: str) -> None:
        """The page opens the link (``link.open``)."""
        self._emit("link.open", {"url": url})

    async def save_download(self, file: dict[str, Any]) -> None:
        """The page offers the file as a browser download (``download.ready``)."""
        data = file.get("blob") or base64.b64encode((file.get("text") or "").encode("utf-8")).decode("ascii")
        self._emit("download.ready", {"filename": file["filename"], "mimeType": file["mimeType"], "dataBase64": data})
