"""The desktop app under a real X server (Xvfb): its first frame, title, native menu with mnemonics, a shortcut,
thin scrollbars, icon, notification."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from moka_shell.testing.xvfb import have_xvfb, xvfb_display

pytestmark = pytest.mark.gui
HERE = Path(__file__).resolve().parent


@pytest.fixture
def xvfb() -> Iterator[str]:
    """A private Xvfb display for the test."""
    if not have_xvfb():
        pytest.skip("Xvfb is not installed (scripts/setup.sh installs it)")
    with xvfb_display() as display:
        yield display


def test_window_title_menu_shortcut_icon_and_notification(tmp_path: Path, xvfb: str) -> None:
    shot = tmp_path / "desktop-native.png"
    # A notify-send of our own on PATH records what the app asked the desktop to show.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "notified.txt"
    fake = bin_dir / "notify-send"
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {record}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "DISPLAY": xvfb, "QT_QPA_PLATFORM": "xcb", "QTWEBENGINE_CHROMIUM_FLAGS": "--no-sandbox",
           "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run([sys.executable, str(HERE / "native_driver.py"), str(tmp_path / "moka"), str(shot)],
                          capture_output=True, text=True, env=env, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["title"] == "Chat — Moka", seen
    assert seen["icon"] is True
    assert seen["menus"] == ["&File", "&Edit", "&View", "&Help"]  # Alt+F, Alt+E, Alt+V, Alt+H
    assert seen["alt_f_menu"] == "&File" and seen["alt_f_typed"] == "", seen  # before: "f" in the composer
    # The first frame on screen is Moka's frame, painted by Qt (rail, accent, page), not a white window;
    # it gives way to the page once that has loaded.
    from moka_shell.shells.desktop.skeleton import LIGHT
    assert seen["first"] == {"rail": LIGHT["rail"], "brand": LIGHT["accent"], "body": LIGHT["bg"]}, seen["first"]
    assert seen["first_overlay"] == 1 and seen["overlay_after_load"] == 0, seen
    # Thin scrollbars with nothing at the ends of the track (before: Chromium's arrow buttons).
    bar = seen["scrollbar"]
    assert bar["width"] == 10 and bar["track_bottom"] == [bar["page"]], bar
    assert "New chat\tCtrl+N" in seen["file_menu"] and "Quit Moka\tCtrl+Q" in seen["file_menu"]
    assert seen["title_after_key"] == "Tool runner — Moka", seen
    assert seen["title_after_menu"] == "Servers — Moka", seen
    assert seen["notify"] == {"shown": True}
    for _ in range(50):
        if record.exists():
            break
        time.sleep(0.1)
    assert record.read_text().split("\n")[:4] == ["--app-name=Moka", "--", "Moka", "The reply is ready."]
    assert shot.exists() and shot.stat().st_size > 10_000
