"""`moka check --engine webview` (what the frozen app uses) judges blankness by painted pixels too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gui
SERVERS = Path(__file__).resolve().parents[1] / "servers"
TRUTH = {"command": sys.executable, "args": [str(SERVERS / "truth_server.py")]}


def webview_check(tmp_path: Path, tool: str) -> tuple[int, dict, str]:  # type: ignore[type-arg]
    (tmp_path / "config.json").write_text(json.dumps({"mcpServers": {"truth": TRUTH}}))
    env = {**os.environ, "MOKA_CONFIG": str(tmp_path / "config.json"), "MOKA_DATA_DIR": str(tmp_path / "data"),
           "QT_QPA_PLATFORM": "offscreen", "QTWEBENGINE_CHROMIUM_FLAGS": "--no-sandbox"}
    env.pop("DISPLAY", None)
    proc = subprocess.run([sys.executable, "-m", "moka_shell", "check", "truth", "--tool", tool, "--engine", "webview",
                           "--json"], capture_output=True, text=True, env=env, timeout=240)
    report = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else {}
    return proc.returncode, report, proc.stderr


def test_a_painted_blank_view_fails_by_its_pixels_in_the_webview_engine(tmp_path: Path) -> None:
    """C3 in the webview engine: the frame's pixels in a grab of the window, not a 'never sized' warning."""
    code, report, err = webview_check(tmp_path, "painted_blank")
    assert report, err[-3000:]
    (view,) = report["views"]
    assert code == 1, view["findings"]
    assert view["findings"][0]["class"] == "blank-view", view["findings"]
    assert view["size"]["painted"]["colours"] == 1 and view["size"]["painted"]["width"] > 100


def test_a_painting_view_passes_its_pixels_in_the_webview_engine(tmp_path: Path) -> None:
    """The same judgement does not fail a view that paints (the permissions tool's working view)."""
    code, report, err = webview_check(tmp_path, "permissions")
    assert report, err[-3000:]
    (view,) = report["views"]
    assert code == 0, view["findings"]
    assert view["size"]["painted"]["colours"] > 1
