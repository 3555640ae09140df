"""The desktop menu's titles carry their Alt mnemonic the way the toolkit pywebview picks reads it."""

from __future__ import annotations

import pytest

from moka_shell.shells.desktop import menu


def test_each_toolkit_gets_its_own_mnemonic_mark() -> None:
    """&File for Qt and Windows, _File for GTK, plain File on macOS (no mnemonics there)."""
    assert [menu.menu_title("File", kit) for kit in ("qt", "winforms", "gtk", "cocoa")] == [
        "&File", "&File", "_File", "File"]


def test_the_toolkit_is_guessed_as_pywebview_picks_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """PYWEBVIEW_GUI wins; on Linux KDE means Qt; otherwise GTK only if its bindings are installed."""
    monkeypatch.setenv("PYWEBVIEW_GUI", "GTK")
    assert menu.toolkit() == "gtk"
    monkeypatch.delenv("PYWEBVIEW_GUI")
    monkeypatch.setattr(menu.sys, "platform", "linux")
    monkeypatch.setenv("KDE_FULL_SESSION", "true")
    assert menu.toolkit() == "qt"
    monkeypatch.delenv("KDE_FULL_SESSION")
    monkeypatch.setattr(menu.importlib.util, "find_spec", lambda name: object() if name == "gi" else None)
    assert menu.toolkit() == "gtk"
    monkeypatch.setattr(menu.importlib.util, "find_spec", lambda name: None)
    assert menu.toolkit() == "qt"
    monkeypatch.setattr(menu.sys, "platform", "darwin")
    assert menu.toolkit() == "cocoa"
