"""What the desktop shell hands to other programs: arguments no server text can turn into options."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from moka_shell.shells.desktop.actions import DesktopActions, open_in_browser
from support import until

REAL_NOTIFY_SEND = shutil.which("notify-send")


def recording_notify_send(tmp_path: Path) -> Path:
    """A ``notify-send`` first on PATH that runs the real one and keeps what it printed."""
    out = tmp_path / "notify-send.out"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "notify-send"
    wrapper.write_text(f'#!/bin/sh\n"{REAL_NOTIFY_SEND}" "$@" > "{out}.part" 2>&1\n'
                       f'echo "exit $?" >> "{out}.part"\nmv "{out}.part" "{out}"\n', encoding="utf-8")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return out


@pytest.mark.skipif(REAL_NOTIFY_SEND is None, reason="notify-send is not installed (scripts/setup.sh installs libnotify-bin)")
@pytest.mark.parametrize("body", ["-?", "--urgency=bogus", "--version"])
@pytest.mark.anyio
async def test_a_servers_text_is_never_an_option_of_notify_send(body: str, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The real notify-send reads the body as the body (finding G8, row 27).

    Before, ``-?`` printed notify-send's help instead of a notification and ``--urgency=bogus`` was
    rejected as an urgency: GLib took the server's message for options.
    """
    out = recording_notify_send(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)  # no desktop here: the send itself fails
    monkeypatch.delenv("DISPLAY", raising=False)
    assert DesktopActions().notify("Moka: a server asks you something", body)
    await until(out.exists)
    printed = out.read_text(encoding="utf-8")
    assert "Usage:" not in printed and "urgency" not in printed.lower() and "notify-send 0" not in printed, printed
    # It got as far as sending (which fails without a session bus), so the options were parsed fine.
    assert "D-Bus" in printed or "exit 0" in printed, printed


def test_only_links_reach_the_browser_command_line() -> None:
    """``webbrowser`` puts the URL on a command line: only something starting with a scheme gets there."""
    assert not open_in_browser("--new-window=file:///etc/passwd")
    assert not open_in_browser("javascript:alert(1)")
