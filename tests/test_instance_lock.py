"""One writer per data dir (findings R2.3, R2.5): a second `moka serve` says who holds the data dir and
stops; CLI commands that only read keep working beside it; a desktop launch can ask the first to come
forward; a lock never outlives its process, even after kill -9."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from serve_driver import Serve
from moka_shell.core.instance_lock import INFO_NAME, InstanceLock, read_holder, request_focus
from moka_shell.errors import InstanceRunningError


def moka(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "moka_shell", "--config", str(tmp_path / "config.json"),
                           "--data-dir", str(tmp_path / "data"), *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"mcpServers": {
        "moka-demo": {"command": sys.executable, "args": ["-m", "moka_shell", "demo-server"]}}}))
    return path


def test_a_second_serve_on_the_same_data_dir_says_who_holds_it(tmp_path: Path, config: Path) -> None:
    """The second exits 1 naming the first's pid and origin, no traceback; the first keeps answering."""
    first = Serve(config, tmp_path / "data")
    try:
        first.wait_url()
        second = Serve(config, tmp_path / "data")
        assert second.wait_exit() == 1
        said = "\n".join(second.errors)
        origin = first.wait_url().split("/?")[0]
        assert f"Moka is already running on the data dir {tmp_path / 'data'} (pid {first.proc.pid}, at {origin})" in said
        assert "Traceback" not in said and second.url is None
        assert "result" in first.rpc("servers.list")
        # Reading commands work beside it, and a chat turn (a writer) is refused with the same words.
        tools = moka(tmp_path, "tools", "moka-demo")
        assert tools.returncode == 0 and "roll_dice" in tools.stdout, tools.stderr
        chat = moka(tmp_path, "chat", "hello")
        assert chat.returncode == 1 and "Moka is already running on the data dir" in chat.stderr, chat.stderr
        assert "Traceback" not in chat.stderr
        holder = read_holder(tmp_path / "data")
        assert "token" not in json.dumps(holder) and holder["pid"] == first.proc.pid
        assert (tmp_path / "data" / INFO_NAME).stat().st_mode & 0o077 == 0
    finally:
        assert first.terminate() == 0
    again = Serve(config, tmp_path / "data")  # released on a clean stop
    try:
        again.wait_url()
    finally:
        again.terminate()


def test_a_lock_never_outlives_a_killed_instance(tmp_path: Path, config: Path) -> None:
    """After kill -9 of the holder, the next start takes the data dir at once (the OS dropped the lock)."""
    first = Serve(config, tmp_path / "data")
    first.wait_url()
    os.kill(first.proc.pid, signal.SIGKILL)
    first.proc.wait(10)
    assert (tmp_path / "data" / "moka.lock").exists()  # the file stays; the lock went with the process
    nxt = Serve(config, tmp_path / "data")
    try:
        nxt.wait_url()
        assert "result" in nxt.rpc("app.info")
    finally:
        nxt.terminate()


def test_a_second_launch_asks_the_first_to_come_forward(tmp_path: Path) -> None:
    """listen_for_focus runs the callback for a request with the secret, and for nothing else."""
    first = InstanceLock(tmp_path)
    first.acquire()
    focused = threading.Event()
    first.listen_for_focus(focused.set)
    try:
        with pytest.raises(InstanceRunningError) as caught:
            InstanceLock(tmp_path).acquire()
        assert caught.value.holder["pid"] == os.getpid()
        with socket.create_connection(("127.0.0.1", read_holder(tmp_path)["focusPort"]), timeout=5) as conn:
            conn.sendall(b"focus not-the-secret\n")
            conn.recv(16)
        assert not focused.is_set()
        assert request_focus(tmp_path) is True
        assert focused.wait(5)
    finally:
        first.release()
    assert request_focus(tmp_path) is False  # nobody holds it any more
    again = InstanceLock(tmp_path)
    again.acquire()
    again.release()


def test_a_data_dir_that_is_a_file_is_named_not_a_traceback(tmp_path: Path, config: Path) -> None:
    """`moka serve` with a file where the data dir should be: rc 1 and what is in the way (R3.4)."""
    (tmp_path / "data").write_text("not a folder")
    done = moka(tmp_path, "serve")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{tmp_path / 'data'} is a file, not a folder" in done.stderr
    assert (tmp_path / "data").read_text() == "not a folder"
