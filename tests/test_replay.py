"""`moka check --record` then `moka replay --check`, as an app author keeps a recording as a regression test.

Real processes throughout: `moka check` starts the demo server and Chromium, writes the recording
and stops; `moka replay` runs with a config that has no servers at all, so nothing but the file
can answer the view. An edited recording fails, naming what diverged.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support import SERVERS

pytestmark = pytest.mark.skipif(not (os.environ.get("MOKA_CHROMIUM") or shutil.which("chromium")),
                                reason="chromium is not installed")


def moka(tmp_path: Path, servers: dict[str, Any], *args: str) -> subprocess.CompletedProcess[str]:
    config = tmp_path / f"config-{len(servers)}.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    env = {**os.environ, "MOKA_CONFIG": str(config), "MOKA_DATA_DIR": str(tmp_path / "data")}
    return subprocess.run([sys.executable, "-m", "moka_shell", *args], capture_output=True, text=True, env=env,
                          timeout=240, cwd=tmp_path)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One `moka check moka-demo --tool roll_dice --record r.json` for the module."""
    tmp = tmp_path_factory.mktemp("rec")
    done = moka(tmp, {"moka-demo": {"command": "moka", "args": ["demo-server"]}},
                "check", "moka-demo", "--tool", "roll_dice", "--record", "r.json")
    assert done.returncode == 0, done.stdout + done.stderr
    return tmp / "r.json"


def replay(tmp_path: Path, rec: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(rec))
    return moka(tmp_path, {}, "replay", str(path), "--check")  # no server configured at all


def test_a_recording_replays_with_no_server(recorded: Path, tmp_path: Path) -> None:
    rec = json.loads(recorded.read_text())
    assert rec["server"] == "moka-demo" and rec["tool"]["name"] == "roll_dice"
    assert rec["toolResult"]["structuredContent"]["total"] >= 1
    done = moka(tmp_path, {}, "replay", str(recorded), "--check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OK: the view replayed without divergence" in done.stdout


def test_an_edited_result_is_a_named_divergence(recorded: Path, tmp_path: Path) -> None:
    rec = json.loads(recorded.read_text())
    total = rec["toolResult"]["structuredContent"]["total"]
    rec["toolResult"]["structuredContent"]["total"] = total + 1000
    done = replay(tmp_path, rec)
    assert done.returncode == 1, done.stdout + done.stderr
    assert (f"divergence: ui/notifications/tool-result: the view was given a different result than when recorded, "
            f"structuredContent.total: {total} → {total + 1000}") in done.stdout


def test_different_params_and_a_request_not_in_the_recording(recorded: Path, tmp_path: Path) -> None:
    rec = json.loads(recorded.read_text())
    init = next(m for m in rec["messages"] if m["message"].get("method") == "ui/initialize")
    init["message"]["params"]["appInfo"]["version"] = "0.0.0-recorded"
    done = replay(tmp_path, rec)
    assert done.returncode == 1
    assert "divergence: ui/initialize: different params than recorded, appInfo.version: \"0.0.0-recorded\" →" \
        in done.stdout
    rec["messages"] = [m for m in rec["messages"] if m["message"].get("method") != "ui/notifications/initialized"]
    done = replay(tmp_path, rec)
    assert done.returncode == 1
    assert "divergence: the view sent ui/notifications/initialized, which is not in the recording" in done.stdout


def test_a_view_that_throws_in_the_replay_diverges(tmp_path: Path) -> None:
    """A view that throws (here: a recording of the broken server's `throws` view) names the error."""
    broken = {"command": sys.executable, "args": [str(SERVERS / "broken_apps_server.py")]}
    moka(tmp_path, {"broken": broken}, "check", "broken", "--tool", "throws", "--record", "t.json")
    assert (tmp_path / "t.json").exists()  # recorded although the check failed
    done = moka(tmp_path, {}, "replay", str(tmp_path / "t.json"), "--check")
    assert done.returncode == 1
    assert "broken-apps: deliberate uncaught error" in done.stdout


def test_not_a_recording(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("{}")
    done = moka(tmp_path, {}, "replay", str(tmp_path / "x.json"), "--check")
    assert done.returncode == 1 and "is not a Moka view recording" in done.stderr
