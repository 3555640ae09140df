"""Views that remember, in the Qt desktop shell: storage comes back after parking, in a pop-out window
and back inline (a subprocess: Qt starts once per process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gui
HERE = Path(__file__).resolve().parent


def test_desktop_view_keeps_its_storage_across_park_and_popout(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "QTWEBENGINE_CHROMIUM_FLAGS": "--no-sandbox"}
    env.pop("DISPLAY", None)
    proc = subprocess.run([sys.executable, str(HERE / "storage_driver.py"), str(tmp_path / "moka")],
                          capture_output=True, text=True, env=env, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    boots = seen["boots"]
    assert boots[0] == {"local": {}, "session": {}}, seen
    assert boots[1] == {"local": {"loads": "1"}, "session": {"draft": "qt"}}, seen  # parked, mounted again
    assert boots[2] == {"local": {"loads": "2"}, "session": {"draft": "qt"}}, seen  # in its own window
    assert boots[3] == {"local": {"loads": "3"}, "session": {"draft": "qt"}}, seen  # back inline
    assert seen["problems"] == []
