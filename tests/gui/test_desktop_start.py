"""The desktop app's start-up order: the core starts on its thread while the window is built."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gui
HERE = Path(__file__).resolve().parent


def test_a_config_it_cannot_read_is_shown_in_the_window_and_printed(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text('{"mcpServers": {"x": {"command": 5}}', encoding="utf-8")  # not valid JSON
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "QTWEBENGINE_CHROMIUM_FLAGS": "--no-sandbox"}
    env.pop("DISPLAY", None)
    proc = subprocess.run([sys.executable, str(HERE / "start_error_driver.py"), str(config), str(tmp_path / "data")],
                          capture_output=True, text=True, env=env, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "Moka could not start" in seen.get("window_text", ""), (seen, proc.stderr[-3000:])
    assert "not valid JSON" in seen["window_text"] and str(config) in seen["window_text"]
    assert seen["exit_code"] == 1
    assert "moka: config error in" in seen["stderr"] and "not valid JSON" in seen["stderr"]
