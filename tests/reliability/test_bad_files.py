"""Files in the way (finding R3.4): a file where the config's folder, the data dir or the inspector's folder
should be, and a config folder nobody may write: clear messages naming the path, never a traceback, and
the file in the way is left as it was."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

DEMO = {"moka-demo": {"command": sys.executable, "args": ["-m", "moka_shell", "demo-server"]}}


def moka(config: Path, data: Path, *args: str, user: str | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "moka_shell", "--config", str(config), "--data-dir", str(data), *args]
    if user is not None:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HOME": "/tmp"} if user else None)


def test_a_file_where_the_config_folder_should_be(tmp_path: Path) -> None:
    """`servers add` with the config's parent a file: rc 1, the blocking file named (R3.4)."""
    blocker = tmp_path / "cfgdir"
    blocker.write_text("in the way")
    done = moka(blocker / "config.json", tmp_path / "data", "servers", "add", "zzz", "--", "true")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"config error in {blocker / 'config.json'}: can't be written" in done.stderr
    assert f"{blocker} is a file, not a folder" in done.stderr
    assert blocker.read_text() == "in the way"


def test_a_file_where_the_data_dir_should_be_stops_a_chat_with_its_name(tmp_path: Path) -> None:
    """`moka chat` with the data dir a file: rc 1, 'is a file, not a folder' (R3.4)."""
    (tmp_path / "config.json").write_text(json.dumps({"mcpServers": {}}))
    (tmp_path / "data").write_text("in the way")
    done = moka(tmp_path / "config.json", tmp_path / "data", "chat", "hello")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"{tmp_path / 'data'} is a file, not a folder" in done.stderr
    assert (tmp_path / "data").read_text() == "in the way"


def test_a_file_where_the_inspector_folder_should_be_costs_only_the_log(tmp_path: Path) -> None:
    """`moka call` still works; the log's problem is said once, without a traceback (R3.4)."""
    (tmp_path / "config.json").write_text(json.dumps({"mcpServers": DEMO}))
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "inspector").write_text("in the way")
    done = moka(tmp_path / "config.json", tmp_path / "data", "call", "moka-demo", "roll_dice", '{"sides": 4}')
    assert done.returncode == 0, done.stderr
    assert "Rolled" in done.stdout and "Traceback" not in done.stderr
    assert done.stderr.count("is a file, not a folder") == 1
    assert (tmp_path / "data" / "inspector").read_text() == "in the way"


def test_a_config_folder_nobody_may_write_is_named(tmp_path: Path) -> None:
    """As an unprivileged user, `servers add` in a root-owned folder: 'can't be written: Permission denied' (R3.4)."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to act as an unprivileged user (root may write anywhere)")
    # Outside pytest's own (0700) tmp dirs, so the other user can reach it without widening them.
    base = Path(tempfile.mkdtemp(prefix="moka-nobody-"))
    try:
        base.chmod(0o755)
        folder = base / "cfg"
        folder.mkdir(mode=0o755)
        (folder / "config.json").write_text(json.dumps({"mcpServers": {}}))
        (folder / "config.json").chmod(0o644)
        before = (folder / "config.json").read_text()
        done = moka(folder / "config.json", base / "data", "servers", "add", "zzz", "--", "true", user="65534")
        if "No module named" in done.stderr:
            pytest.skip(f"the unprivileged user can't run this Python: {done.stderr[-200:]}")
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert f"config error in {folder / 'config.json'}: can't be written: Permission denied" in done.stderr
        assert (folder / "config.json").read_text() == before
        # A config whose folder can't even be entered: "can't be read", not a traceback.
        folder.chmod(0o700)
        done = moka(folder / "config.json", base / "data", "servers", "list", user="65534")
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert "can't be read: Permission denied" in done.stderr
    finally:
        shutil.rmtree(base, ignore_errors=True)
