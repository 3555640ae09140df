"""`moka check` tells the truth about storage: it says when a view used Moka's storage, and with
`--no-storage` the view gets what an opaque-origin host without it gives, with a warning."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support import SERVERS

KEEPER = {"command": sys.executable, "args": [str(SERVERS / "storage_server.py")]}


def check(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "config.json").write_text(json.dumps({"mcpServers": {"keeper": KEEPER}}))
    env = {**os.environ, "MOKA_CONFIG": str(tmp_path / "config.json"), "MOKA_DATA_DIR": str(tmp_path / "data")}
    return subprocess.run([sys.executable, "-m", "moka_shell", "check", "keeper", "--tool", "remember", *args],
                          capture_output=True, text=True, env=env, timeout=240)


def test_check_reports_storage_use(tmp_path: Path) -> None:
    done = check(tmp_path, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    view = json.loads(done.stdout)["views"][0]
    assert view["storage"] == {"provided": True, "used": ["localStorage", "sessionStorage"], "denied": []}
    text = check(tmp_path)
    assert "storage: used localStorage and sessionStorage (Moka keeps localStorage per server" in text.stdout


def test_no_storage_behaves_like_an_opaque_origin_host_and_warns(tmp_path: Path) -> None:
    done = check(tmp_path, "--no-storage", "--json")
    view = json.loads(done.stdout)["views"][0]
    assert view["storage"] == {"provided": False, "used": [], "denied": ["localStorage"]}
    assert any("reached for localStorage, which threw SecurityError as in an opaque-origin host without Moka's "
               "storage: such hosts lose" in w for w in view["warnings"]), view["warnings"]
    # the view's own unguarded read threw, as it would there: that is a failure of the view
    assert done.returncode == 1 and any(f["class"] == "storage" for f in view["findings"]), view["findings"]
