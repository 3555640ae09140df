"""The GTK build loads no Qt: PyQt6 is installed on Linux beside it, and its WebEngine cost 55 MiB.

Needs a Python that has PyGObject and WebKit2 4.1 and Moka (bench/memory_gtk.py says how to make
one; MOKA_GTK_PYTHON names it); skipped otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

GTK_PYTHON = os.environ.get("MOKA_GTK_PYTHON", "/tmp/venv-gtk/bin/python")
CHECK = ("import gi; gi.require_version('Gtk', '3.0'); gi.require_version('WebKit2', '4.1'); "
         "from gi.repository import Gtk, WebKit2; import webview, moka_shell")
HARDEN = """
import json, sys
from moka_shell.shells.desktop.sandbox import harden_qt
hardened = harden_qt(lambda url: None)
print(json.dumps({"hardened": hardened, "qt": sorted(m for m in sys.modules if m.startswith(("PyQt6", "qtpy")))}))
"""


def gtk_python() -> str:
    if not Path(GTK_PYTHON).exists():
        pytest.skip(f"no GTK Python at {GTK_PYTHON} (MOKA_GTK_PYTHON; see bench/memory_gtk.py)")
    if subprocess.run([GTK_PYTHON, "-c", CHECK], capture_output=True, timeout=60, check=False).returncode:
        pytest.skip(f"{GTK_PYTHON} cannot load PyGObject + WebKit2 4.1 + pywebview + Moka")
    return GTK_PYTHON


def run_harden(python: str, gui: str) -> dict[str, object]:
    env = {**os.environ, "PYWEBVIEW_GUI": gui}
    env.pop("DISPLAY", None)
    out = subprocess.run([python, "-c", HARDEN], capture_output=True, text=True, env=env, timeout=120, check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def test_a_gtk_window_does_not_load_qt_webengine() -> None:
    """When pywebview will start GTK, the Qt hardening is not needed and Qt is not imported."""
    seen = run_harden(gtk_python(), "gtk")
    assert seen == {"hardened": False, "qt": []}, seen


def test_qt_is_still_hardened_when_qt_is_asked_for() -> None:
    """The same Python with PYWEBVIEW_GUI=qt: Qt starts, so its new windows and WebRTC are guarded."""
    seen = run_harden(gtk_python(), "qt")
    assert seen["hardened"] is True and "PyQt6.QtWebEngineCore" in seen["qt"], seen
