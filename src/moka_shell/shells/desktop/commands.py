"""What the desktop menu's items do: page commands through the core, native edits, zoom, quit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from moka_shell.shells.desktop import qt as desktop_qt
from moka_shell.shells.desktop.actions import open_in_browser
from moka_shell.shells.desktop.menu import DOCS_PATH

if TYPE_CHECKING:
    from moka_shell.shells.core_thread import CoreThread
    from moka_shell.shells.desktop.actions import DesktopActions

# Edit actions the page can do itself where Qt is not there to do them natively.
_PAGE_EDITS = {"undo": "undo", "redo": "redo", "cut": "cut", "copy": "copy", "selectAll": "selectAll"}


class DesktopCommands:
    """The desktop's ``MenuCommands``; menu actions arrive on pywebview's worker threads."""

    def __init__(self, core: CoreThread, actions: DesktopActions) -> None:
        self.core = core
        self.actions = actions

    def page(self, command: str, **params: Any) -> None:
        """Tell the main window's page (``shell.command``); it routes like its own shortcuts."""
        app = self.core.app
        if app is None:
            return  # still starting: the skeleton has nothing to act on

        async def emit() -> None:
            app.emit("shell.command", {"command": command, **params})

        self.core.submit(emit())

    def edit(self, action: str) -> None:
        """The edit action in the focused window, natively (Qt) or by the page's own command."""
        import webview

        window = webview.active_window() or self.actions.window
        if window is None or desktop_qt.edit_action(window, action):
            return
        if action in _PAGE_EDITS:
            window.run_js(f"document.execCommand({_PAGE_EDITS[action]!r})")

    def zoom(self, step: int) -> None:
        """Zoom the focused window."""
        self.actions.zoom(step)

    def theme(self, mode: str) -> None:
        """Switch light/dark/system for every window (saved like the Settings switch)."""
        app = self.core.app
        if app is None:
            return

        async def apply() -> None:
            app.appearance.set(None, mode)

        self.core.submit(apply())

    def close_window(self) -> None:
        """Close the focused pop-out (its view goes back inline); the main window stays."""
        import webview

        window = webview.active_window()
        if window is not None and window in self.actions.popouts.values():
            window.destroy()

    def quit(self) -> None:
        """Quit Moka."""
        self.actions.quit()

    def open_url(self, url: str) -> None:
        """Open a link in the default browser."""
        open_in_browser(url)

    def docs(self) -> None:
        """This install's docs in the default browser, from Moka's own loopback server."""
        web = getattr(self.core, "web", None)
        if web is not None:  # still starting: nothing serves them yet
            open_in_browser(web.endpoints.host_origin + DOCS_PATH)
