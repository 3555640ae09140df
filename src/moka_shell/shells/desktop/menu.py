"""The desktop window's native menu: File, Edit, View and Help, with the platform's shortcuts.

pywebview menus take a title and a function (run on a worker thread). Each top menu's first
letter is its mnemonic (Alt+F opens File). The shortcut is written after a tab, which Qt shows
right-aligned in the menu; the keys themselves are handled by the
page (js/shortcuts.js), so they work the same in a focused view card and in browser mode.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from typing import Any, Protocol

# Help → Documentation opens the docs this install carries, served by Moka at /docs/ (offline, and
# the docs of the version running). "Report an issue" shows what a report needs (version,
# platform, files) for the person to copy.
DOCS_PATH = "/docs/"

MOD = "Cmd" if sys.platform == "darwin" else "Ctrl"

SCREENS = (("chat", "Chat"), ("runner", "Tool runner"), ("servers", "Servers"), ("inspector", "Inspector"),
           ("settings", "Settings"))


class MenuCommands(Protocol):
    """What the menu's items do; the desktop shell provides them."""

    def page(self, command: str, **params: Any) -> None:
        """Ask the main window's page to do something (new chat, a screen, about…)."""
        ...

    def edit(self, action: str) -> None:
        """An edit action in the focused window's page."""
        ...

    def zoom(self, step: int) -> None:
        """Zoom in (+1), out (-1) or reset (0)."""
        ...

    def theme(self, mode: str) -> None:
        """Light, dark or system."""
        ...

    def close_window(self) -> None:
        """Close the focused pop-out window."""
        ...

    def quit(self) -> None:
        """Quit Moka."""
        ...

    def open_url(self, url: str) -> None:
        """Open a link in the default browser."""
        ...

    def docs(self) -> None:
        """Open this install's documentation (Moka serves it at ``DOCS_PATH``)."""
        ...


def label(title: str, keys: str | None = None) -> str:
    """A menu item's text with its shortcut shown on the right (``Ctrl+N``)."""
    return f"{title}\t{MOD}+{keys}" if keys else title


def menu_spec(c: MenuCommands) -> list[tuple[str, list[tuple[str, Callable[[], None]] | None]]]:
    """The menus as (title, items); an item is (label, action) or None for a separator."""
    def page(command: str, **params: Any) -> Callable[[], None]:
        return lambda: c.page(command, **params)

    screens: list[tuple[str, Callable[[], None]] | None] = [
        (label(title, str(i + 1)), page("screen", screen=sid)) for i, (sid, title) in enumerate(SCREENS)]
    return [
        ("File", [(label("New chat", "N"), page("new-chat")), (label("Settings…", ","), page("screen", screen="settings")),
                  None, (label("Close window", "W"), c.close_window), (label("Quit Moka", "Q"), c.quit)]),
        ("Edit", [(label("Undo", "Z"), lambda: c.edit("undo")), (label("Redo", "Shift+Z"), lambda: c.edit("redo")), None,
                  (label("Cut", "X"), lambda: c.edit("cut")), (label("Copy", "C"), lambda: c.edit("copy")),
                  (label("Paste", "V"), lambda: c.edit("paste")), (label("Select all", "A"), lambda: c.edit("selectAll")),
                  None, (label("Find", "K"), page("find"))]),
        ("View", screens + [None, (label("Zoom in", "="), lambda: c.zoom(1)), (label("Zoom out", "-"), lambda: c.zoom(-1)),
                            (label("Actual size", "0"), lambda: c.zoom(0)), None,
                            ("Light theme", lambda: c.theme("light")), ("Dark theme", lambda: c.theme("dark")),
                            ("Match the system", lambda: c.theme("system"))]),
        ("Help", [("Documentation", c.docs), ("Report an issue…", page("report")),
                  None, ("About Moka", page("about"))]),
    ]


def build_menu(c: MenuCommands) -> list[Any]:
    """The spec as pywebview ``Menu`` objects (imported here: only shells import webview)."""
    from webview.menu import Menu, MenuAction, MenuSeparator

    kit = toolkit()
    return [Menu(menu_title(title, kit), [MenuSeparator() if item is None else MenuAction(item[0], item[1])
                                          for item in items])
            for title, items in menu_spec(c)]


def toolkit() -> str:
    """The toolkit pywebview will pick, the way it picks (webview/guilib.py), without starting it."""
    forced = os.environ.get("PYWEBVIEW_GUI", "").lower()
    if forced:
        return forced
    if sys.platform == "darwin":
        return "cocoa"
    if sys.platform == "win32":
        return "winforms"
    if "KDE_FULL_SESSION" in os.environ:
        return "qt"
    return "gtk" if importlib.util.find_spec("gi") is not None else "qt"


def menu_title(title: str, kit: str) -> str:
    """A top menu's title with its first letter as the Alt mnemonic (Alt+F opens File), marked the
    toolkit's way: ``&File`` in Qt and Windows, ``_File`` in GTK; macOS menus have no mnemonics."""
    if kit == "cocoa":
        return title
    return ("_" if kit == "gtk" else "&") + title
