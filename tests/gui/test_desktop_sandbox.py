"""The desktop shell's sandbox for real (findings S3, S4, S14), offscreen, in a subprocess (Qt starts once per process).

sandbox_driver.py opens three views of tests/servers/hostile_server.py (`escape`) in the real Qt
shell: each tries WebRTC to local UDP/TCP sinks and window.open by itself; the page then asks
for a new window itself. Before shells/desktop/sandbox.py the UDP sink got dozens of STUN/TURN packets,
the TCP sink connections, window.open returned a window, and the page's new window went to the
system browser unasked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gui
HERE = Path(__file__).resolve().parent


def test_views_get_no_webrtc_no_popups_and_new_windows_ask(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "QTWEBENGINE_CHROMIUM_FLAGS": "--no-sandbox",
           "BROWSER": "true"}  # should anything reach webbrowser.open, it opens nothing on this machine
    env.pop("DISPLAY", None)
    proc = subprocess.run([sys.executable, str(HERE / "sandbox_driver.py"), str(tmp_path / "moka")],
                          capture_output=True, text=True, env=env, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    report = seen["report"]
    assert report is not None, seen
    assert report["own"] == {"type": "undefined"}  # no RTCPeerConnection in the view
    assert report["child"]["type"].startswith("unreadable")  # nor through a fresh about:blank child
    assert report["popup"] == "null"  # window.open opened nothing
    assert seen["udp"] == [] and seen["tcp"] == 0  # nothing reached the sinks
    asked = [c for c in seen["consent"] if c["action"] == "open_link"]
    assert asked and asked[0]["detail"]["url"].endswith("/from-the-page")  # the page's new window asked first
    # S14, measured: opening views starts no process (Chromium's renderers fork from the zygote and
    # keep its command line, so the processes are counted, and the page's renderer is the largest).
    before, after = seen["renderers_before"], seen["renderers_with_views"]
    assert before and len(after) == len(before), seen
    print("QtWebEngine processes:", len(before), "; largest RSS before/after 3 views (kB):",
          max(r["rss_kb"] for r in before), max(r["rss_kb"] for r in after))
