"""SIGTERM ends `moka serve`, also while servers are being added (reliability findings N8a, N8b).

A real `moka serve` with one real server gets `servers.add` calls from several threads, as a page or
a script adding servers in a loop, and is sent SIGTERM in the middle of them. It must exit on its
own, rc 0, with every server it acknowledged in the file. Before the fix it printed "Stopping Moka…"
and then never exited (3 of 3 runs in the finding; 2 of 2 here with six threads): a server added
while the others were being stopped kept its supervisor, which lost the cancellation asyncio.run
sent it and went on retrying forever.

The waits are conditions with generous caps, never a claim about time (bench/ times the stop).
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from serve_driver import Serve
from support import until_sync

pytestmark = pytest.mark.xdist_group("shutdown")
SERVERS = Path(__file__).resolve().parent.parent / "servers"
EXIT_CAP = 90.0  # a hang guard: a stop that works takes seconds, the broken one never ended


def exit_code(serve: Serve) -> int:
    """The serve's exit code once it ends by itself; SIGKILL and AssertionError at the hang guard."""
    try:
        return serve.proc.wait(EXIT_CAP)
    except subprocess.TimeoutExpired:
        serve.proc.kill()
        serve.proc.wait(10)
        raise AssertionError(f"moka serve was still running {EXIT_CAP:g} s after SIGTERM; its stderr: "
                             f"{serve.errors[-10:]}") from None


def adders(serve: Serve, entry: dict[str, Any], threads: int) -> tuple[threading.Event, list[str], list[threading.Thread]]:
    """Threads calling servers.add in a loop; the names Moka acknowledged."""
    stop = threading.Event()
    acked: list[str] = []

    def add(i: int) -> None:
        k = 0
        while not stop.is_set():
            k += 1
            name = f"t{i}_{k}"
            try:
                reply = serve.rpc("servers.add", {"name": name, "config": entry}, timeout=20)
            except OSError:  # refused, reset or cut short while Moka stops: keep adding until it is gone
                if serve.proc.poll() is not None:
                    return
                continue
            if "result" in reply:
                acked.append(name)

    workers = [threading.Thread(target=add, args=(i,), daemon=True) for i in range(threads)]
    for w in workers:
        w.start()
    return stop, acked, workers


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["exits", "never-answers"])
def test_sigterm_during_a_burst_of_server_adds_ends_moka(tmp_path: Path, kind: str) -> None:
    """Servers that exit at once (retrying) or never answer initialize (connecting) are being added."""
    entry = ({"command": "/bin/true"} if kind == "exits"
             else {"command": sys.executable, "args": [str(SERVERS / "mute_server.py")]})
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"mcpServers": {"demo": {"command": sys.executable,
                                                          "args": ["-m", "moka_shell.demo.stdio_server"]}}}))
    serve = Serve(config, tmp_path / "data")
    serve.wait_url()
    stop, acked, workers = adders(serve, entry, threads=6)
    try:
        until_sync(lambda: len(acked) >= 150, "150 servers added", timeout=60)
        serve.proc.send_signal(signal.SIGTERM)
        rc = exit_code(serve)
    finally:
        stop.set()
        for w in workers:
            w.join(30)
    assert rc == 0, serve.errors[-10:]
    assert any("Stopping Moka" in line for line in serve.lines)
    on_disk = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]
    assert set(acked) <= set(on_disk), sorted(set(acked) - set(on_disk))
    assert not list(tmp_path.glob(".*.tmp")), "a half-made save was left"
    assert not any("never awaited" in line for line in serve.errors), serve.errors


@pytest.mark.slow
def test_sigterm_during_a_burst_of_config_writes_ends_moka(tmp_path: Path) -> None:
    """N8a, which held: SIGTERM while the UI saves settings leaves a whole file and no temp file."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"mcpServers": {}}))
    serve = Serve(config, tmp_path / "data")
    serve.wait_url()
    stop = threading.Event()
    acked: list[int] = []

    def saves() -> None:
        k = 0
        while not stop.is_set():
            k += 1
            try:
                reply = serve.rpc("settings.set", {"key": "agent.systemPrompt", "value": f"prompt {k}"}, timeout=20)
            except OSError:
                return
            if "result" in reply:
                acked.append(k)

    worker = threading.Thread(target=saves, daemon=True)
    worker.start()
    try:
        until_sync(lambda: len(acked) >= 30, "30 settings saved", timeout=60)
        serve.proc.send_signal(signal.SIGTERM)
        rc = exit_code(serve)
    finally:
        stop.set()
        worker.join(30)
    assert rc == 0, serve.errors[-10:]
    saved = json.loads(config.read_text(encoding="utf-8"))["agent"]["systemPrompt"]
    assert int(saved.split()[1]) >= max(acked)  # the last acknowledged save (or a later one) is in the file
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".*.tmp"))


@pytest.mark.anyio
async def test_a_server_added_while_the_others_stop_is_stopped_too(tmp_path: Path) -> None:
    """The cause of N8b: stop_all stopped the servers it had when it began; one added meanwhile (the
    bridge still answers while Moka stops) kept a supervisor that went on connecting and retrying."""
    from moka_shell.config import ServerConfig
    from moka_shell.inspector import Inspector
    from support import manager, stdio

    servers = manager(Inspector(tmp_path / "inspector"), connect_timeout=60)
    servers.load({"demo": ServerConfig(command=sys.executable, args=["-m", "moka_shell.demo.stdio_server"])})
    servers.start_all()
    await servers.wait_ready(timeout=60)
    stopping = asyncio.ensure_future(servers.stop_all())
    await asyncio.sleep(0)  # stop_all has begun (it is waiting for the demo server to go)
    late = [await servers.add(f"late{i}", entry) for i, entry in enumerate(
        [ServerConfig(command="/bin/true"), stdio("mute_server.py")])]
    try:
        await stopping
        assert [(c.name, c.status) for c in late] == [("late0", "stopped"), ("late1", "stopped")]
        assert all(c.status in ("stopped", "disabled") for c in servers.connections.values())
        late[0].start()  # nothing starts once Moka is stopping
        assert late[0].status == "stopped"
    finally:  # on the old code the late ones were still going: stop them, or the test's loop never ends
        await asyncio.gather(*(c.stop() for c in late))
