"""The desktop's ``ShellActions``: the default browser, the native save dialog, notifications, zoom."""

from __future__ import annotations

import base64
import shutil
import subprocess
import sys
import threading
import webbrowser
from pathlib import Path
from typing import Any

from moka_shell.shells.desktop import qt as desktop_qt


BROWSER_SCHEMES = ("http://", "https://", "mailto:")


def open_in_browser(url: str) -> bool:
    """Hand ``url`` to the default browser on a thread; False (and nothing run) unless it is a link.

    ``webbrowser`` puts the URL on a command line (``xdg-open URL``, a browser's own); one that
    starts with a scheme can never be read as an option there.
    """
    if not url.lower().startswith(BROWSER_SCHEMES):
        return False
    threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
    return True


class DesktopActions:
    """The desktop's ``ShellActions``: the default browser, and the native save dialog."""

    def __init__(self) -> None:
        self.window: Any = None  # the main window, once it exists
        self.popouts: dict[str, Any] = {}  # view id → its pop-out window

    def set_title(self, title: str) -> None:
        """Title the main window as the page is titled (screen and conversation)."""
        if self.window is not None:
            self.window.set_title(title)

    def quit(self) -> None:
        """Close the pop-outs, then the main window (which ends ``webview.start``)."""
        for win in list(self.popouts.values()):
            win.destroy()
        if self.window is not None:
            self.window.destroy()

    def zoom(self, step: int) -> float | None:
        """Zoom the focused window's page (Qt); None where the backend cannot."""
        import webview

        return desktop_qt.zoom(webview.active_window() or self.window, step)

    def focus(self) -> None:
        """Bring the main window forward (a second launch asked for it)."""
        win = self.window
        if win is None:
            return
        win.restore()
        win.show()
        native = getattr(win, "native", None)
        if native is not None:
            def forward() -> None:
                native.raise_()
                native.activateWindow()

            desktop_qt.on_gui_thread(forward)

    def notify(self, title: str, body: str) -> bool:
        """A desktop notification through the platform's own tool; False when there is none."""
        # Title and body are a server's words: after "--" neither can be read as an option
        # (a body "-?" or "--app-name=Your Bank" was one; finding G8). osascript takes them as
        # the script's arguments, never as script text.
        if sys.platform.startswith("linux") and shutil.which("notify-send"):
            command = ["notify-send", "--app-name=Moka", "--", title, body]
        elif sys.platform == "darwin":
            command = ["osascript", "-e", "on run argv", "-e",
                       "display notification (item 2 of argv) with title (item 1 of argv)",
                       "-e", "end run", "--", title, body]
        else:
            return False
        try:
            subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError:
            return False
        return True

    def open_link(self, url: str) -> None:
        """Open the link in the default browser (off the core loop: it may take a while)."""
        open_in_browser(url)

    async def save_download(self, file: dict[str, Any]) -> None:
        """Ask where to save a view's download with the native dialog, then write it."""
        import asyncio  # here: this module loads before the window, and asyncio is the core loop's (§13)

        import webview

        window = self.window
        if window is None:
            return

        def ask() -> Any:
            return window.create_file_dialog(webview.FileDialog.SAVE, save_filename=file["filename"])

        chosen = await asyncio.to_thread(ask)
        if not chosen:
            return
        target = Path(chosen if isinstance(chosen, str) else chosen[0])
        data = base64.b64decode(file["blob"]) if file.get("blob") else (file.get("text") or "").encode("utf-8")
        target.write_bytes(data)
