"""The pywebview desktop shell, offscreen, in a subprocess (Qt starts once per process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gui
HERE = Path(__file__).resolve().parent


def test_desktop_shell_runs_a_tool_and_its_view(tmp_path: Path) -> None:
    """The shell loads the UI, the Tool runner runs roll_dice, the view initialises, a screenshot is written."""
    shot = tmp_path / "desktop.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "QTWEBENGINE_CHROMIUM_FLAGS": "--no-sandbox"}
    env.pop("DISPLAY", None)
    proc = subprocess.run([sys.executable, str(HERE / "desktop_driver.py"), str(tmp_path / "moka"), str(shot)],
                          capture_output=True, text=True, env=env, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["view_ready"], (seen, proc.stderr[-3000:])
    assert seen["page_has_js_api"] == "false"  # no js_api: the page talks to the core over the WebSocket
    assert seen["conn_status"] == "online"
    assert seen["page_gc"] == "function"  # the shell exposes gc() so parked views' memory is given back
    assert seen["gc_after_ready"] >= 1  # and collects once a fresh view is ready (its start's garbage)
    assert seen["keepalive_frames"] == 0  # one renderer runs every frame here: nothing to keep warm
    assert seen["arguments"] == {"sides": 6, "count": 3} and len(seen["rolls"]) == 3  # the form sends defaults too
    assert seen["app_info"]["name"] == "moka-demo-dice"
    assert shot.exists() and shot.stat().st_size > 10_000
    state = json.loads((tmp_path / "moka" / "state.json").read_text())  # window geometry is remembered
    assert state["width"] > 0
    # A view's tools/call goes view → proxy → page → core and back in the desktop shell too.
    probe = seen["probe"]
    assert probe and probe["pings"] == [f"pong {i}" for i in range(5)], seen
    # The page's URL carries the token; nothing the view can reach shows it.
    assert not any(seen["token"] in value for value in probe["seen"].values()), probe["seen"]
    assert probe["seen"]["parent"].startswith("refused") and probe["seen"]["top"].startswith("refused")


def test_core_never_imports_webview() -> None:
    """Only the shells import pywebview; the core, CLI and web server run without it."""
    code = ("import sys, moka_shell.core.app, moka_shell.cli.main, moka_shell.web.server, moka_shell.bridge,"
            " moka_shell.shells.check.run, moka_shell.shells.core_thread;"
            " sys.exit(1 if any(m == 'webview' or m.startswith('webview.') for m in sys.modules) else 0)")
    assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 0
