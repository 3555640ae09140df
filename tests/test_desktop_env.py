"""The Chromium flags the shells give QtWebEngine before Qt starts (desktop app and moka check)."""

from __future__ import annotations

import os

import pytest

from moka_shell.shells.qt_env import prepare_qt_environment


def flags_after(monkeypatch: pytest.MonkeyPatch, given: str | None) -> list[str]:
    if given is None:
        monkeypatch.delenv("QTWEBENGINE_CHROMIUM_FLAGS", raising=False)
    else:
        monkeypatch.setenv("QTWEBENGINE_CHROMIUM_FLAGS", given)
    prepare_qt_environment()
    return os.environ["QTWEBENGINE_CHROMIUM_FLAGS"].split()


def test_gc_is_exposed_so_parked_views_can_be_collected(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without it QtWebEngine's one renderer kept every parked view's memory (performance.md §4)."""
    assert "--js-flags=--expose-gc" in flags_after(monkeypatch, None)
    assert flags_after(monkeypatch, "--no-sandbox --disable-gpu")[:2] == ["--no-sandbox", "--disable-gpu"]


def test_a_persons_own_js_flags_win(monkeypatch: pytest.MonkeyPatch) -> None:
    """Someone who sets --js-flags themselves keeps exactly theirs."""
    flags = flags_after(monkeypatch, "--js-flags=--max-old-space-size=512")
    assert [f for f in flags if f.startswith("--js-flags")] == ["--js-flags=--max-old-space-size=512"]


def test_no_sandbox_added_once_as_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Root needs --no-sandbox; it is never doubled."""
    monkeypatch.setattr(os, "getuid", lambda: 0)
    assert flags_after(monkeypatch, "--no-sandbox").count("--no-sandbox") == 1
    assert flags_after(monkeypatch, "").count("--no-sandbox") == 1
