"""Reliability of server connections against real subprocess servers (findings R2.6, R1.3, R1.4, R1.6,
R1.8, R1.9, R1.12, R1.24): bad output, a broken log or a broken listener never stop a connection."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
import signal
import time
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from support import manager, stdio, until
from moka_shell.config import ServerConfig
from moka_shell.core.mcp.connection import ServerConnection
from moka_shell.core.mcp.servers import ServerManager
from moka_shell.core.mcp.stderr import MAX_LINE
from moka_shell.inspector import EventFilter, Inspector
from moka_shell.plugins import PluginHost

pytestmark = pytest.mark.anyio


async def test_a_log_that_cannot_be_written_breaks_no_call_and_no_reconnect(tmp_path: Path) -> None:
    """Inspector writes fail and the status listener raises: calls work, a killed server comes back (R2.6)."""
    folder = tmp_path / "insp"
    (folder / f"events-{dt.date.today():%Y-%m-%d}.jsonl").mkdir(parents=True)  # every write fails
    insp = Inspector(folder)
    mgr = manager(insp)
    mgr.load({"fault": stdio("fault_server.py"), "other": stdio("fault_server.py")})
    fault = mgr.get("fault")

    def broken_listener(_conn: ServerConnection) -> None:
        raise RuntimeError("a listener bug")

    fault.on_change = broken_listener
    mgr.start_all()
    try:
        await mgr.wait_ready(timeout=30)
        assert fault.status == "ready", fault.error
        for i in range(20):
            assert (await fault.call_tool("echo", {"text": f"n{i}"}))["content"][0]["text"] == f"n{i}"
        assert insp.problem is not None and insp.status()["dropped"] > 0
        pid = int((await fault.call_tool("pid", {}))["content"][0]["text"])
        os.kill(pid, signal.SIGKILL)
        await until(lambda: fault.generation >= 2 and fault.status == "ready")
        assert (await fault.call_tool("echo", {"text": "back"}))["content"][0]["text"] == "back"
        assert (await mgr.get("other").call_tool("echo", {}))["content"][0]["text"] == "hi"
    finally:
        await mgr.stop_all()


async def test_five_megabytes_of_stderr_without_a_newline_are_kept_short(tmp_path: Path) -> None:
    """Lines are cut at MAX_LINE, the tail is small, info() carries a short tail (R1.8, R1.7)."""
    insp = Inspector(None)
    mgr = manager(insp)
    mgr.load({"loud": stdio("noisy_server.py", "--stderr-no-newline", "5")})
    mgr.start_all()
    try:
        await mgr.wait_ready(timeout=60)
        conn = mgr.get("loud")
        assert conn.status == "ready", conn.error
        await until(lambda: "last words before serving" in list(conn.stderr))
        lines = list(conn.stderr)
        assert all(len(line) <= MAX_LINE + 60 for line in lines)
        assert any("line cut at" in line for line in lines)
        info = conn.info()
        assert sum(len(line) for line in info["stderr"]) <= 4000
        assert info["stderr"][-1] == "last words before serving"
        events = insp.query(EventFilter(server="loud", method="stderr"), limit=100)
        assert events and all(len(e["message"]["stderr"]) <= MAX_LINE + 60 for e in events)
        assert (await conn.call_tool("ping", {}))["content"][0]["text"] == "pong"
    finally:
        await mgr.stop_all()


async def test_invalid_utf8_on_stdout_costs_a_line_not_the_connection(tmp_path: Path,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    """The server works despite invalid UTF-8 on stdout; the SDK logs no traceback for it (R1.6, R1.4)."""
    insp = Inspector(None)
    mgr = manager(insp, connect_timeout=20)
    mgr.load({"bytes": stdio("noisy_server.py", "--bad-utf8")})
    with caplog.at_level(logging.DEBUG, logger="mcp.client.stdio"):
        mgr.start_all()
        try:
            await mgr.wait_ready(timeout=30)
            conn = mgr.get("bytes")
            assert conn.status == "ready" and conn.generation == 1, conn.error
            assert (await conn.call_tool("ping", {}))["content"][0]["text"] == "pong"
            assert insp.query(EventFilter(server="bytes", method="transport/error"))
        finally:
            await mgr.stop_all()
    assert not [r for r in caplog.records if "Failed to parse" in r.getMessage()]


async def test_a_server_that_exits_shows_its_last_words_and_keeps_the_reason_while_retrying(
        tmp_path: Path) -> None:
    """'the connection closed — stderr: exiting on purpose', still shown during the next attempt (R1.9, R1.3)."""
    mgr = manager(Inspector(None))
    mgr.load({"quits": stdio("noisy_server.py", "--exit-after", "1")})
    conn = mgr.get("quits")
    seen: list[tuple[str, str | None, int]] = []
    conn.on_change = lambda c: seen.append((c.status, c.error, c.generation))
    mgr.start_all()
    try:
        await until(lambda: any(s == "connecting" and g >= 2 for s, _e, g in seen))
        failed = next(e for s, e, _g in seen if s == "failed")
        assert failed is not None and "the connection closed" in failed and "exiting on purpose" in failed
        again = next(e for s, e, g in seen if s == "connecting" and g >= 2)
        assert again is not None and "exiting on purpose" in again and "connecting again" in again
    finally:
        await mgr.stop_all()


async def test_a_missing_cwd_is_not_command_not_found(tmp_path: Path) -> None:
    """A working directory that does not exist is named as such (R1.24)."""
    mgr = manager(Inspector(None), connect_timeout=5)
    mgr.load({"nocwd": stdio("fault_server.py", cwd=str(tmp_path / "no-such-dir"))})
    mgr.start_all()
    try:
        conn = mgr.get("nocwd")
        await until(lambda: conn.status == "failed")
        assert "working directory does not exist" in (conn.error or "")
        assert "command not found" not in (conn.error or "")
    finally:
        await mgr.stop_all()


async def test_a_list_changed_burst_makes_one_refresh_that_rereads_nothing_unchanged(tmp_path: Path) -> None:
    """200 list_changed notifications: one tools/list, and the unchanged ui:// resource is not re-read (R1.12)."""
    insp = Inspector(None)
    mgr = manager(insp)
    mgr.load({"fault": stdio("fault_server.py")})
    mgr.start_all()
    try:
        await mgr.wait_ready(timeout=30)
        conn = mgr.get("fault")
        assert conn.status == "ready"
        await conn.listing.ui.idle()  # ui:// resources are read after connecting, in the background
        assert "ui://fault/view" in conn.listing.ui.entries

        def sent(method: str) -> int:
            return len([e for e in insp.query(EventFilter(server="fault", method=method), limit=10_000)
                        if e["direction"] == "out"])

        lists, reads = sent("tools/list"), sent("resources/read")
        changes: list[int] = []
        conn.on_change = lambda c: changes.append(c.generation)
        for i in range(200):
            kind = types.ToolListChangedNotification if i % 2 else types.ResourceListChangedNotification
            await conn.events.on_message(kind())  # as the SDK hands them to message_handler
        await until(lambda: changes and conn.listing.refresher.task is not None and conn.listing.refresher.task.done())
        assert sent("tools/list") - lists == 1
        assert sent("resources/read") == reads
        assert len(changes) == 1 and conn.listing.ui.entries["ui://fault/view"].html
        assert (await conn.call_tool("echo", {}))["content"][0]["text"] == "hi"
    finally:
        await mgr.stop_all()


def test_stderr_lines_reach_the_loop_in_batches_with_back_pressure() -> None:
    """While the loop is busy, the reader thread stops at max_pending queued lines instead of queueing
    one callback per line without bound; once the loop runs, every line arrives, in order (R1.7)."""
    import threading

    from moka_shell.core.mcp.stderr import LineRelay

    loop = asyncio.new_event_loop()
    got: list[str] = []
    relay = LineRelay(loop, got.append, max_pending=100, batch=30)
    reader = threading.Thread(target=lambda: [relay.put(f"line {i}") for i in range(1000)], daemon=True)
    try:
        reader.start()
        deadline = time.monotonic() + 30
        while len(relay._pending) < 100 and time.monotonic() < deadline:  # the loop is not running yet
            time.sleep(0.01)
        assert len(relay._pending) == 100 and reader.is_alive()  # held back, not queued without bound
        loop.run_until_complete(asyncio.wait_for(asyncio.to_thread(reader.join), 30))
        loop.run_until_complete(asyncio.sleep(0.05))
        while relay._pending:
            loop.run_until_complete(asyncio.sleep(0.01))
        assert got == [f"line {i}" for i in range(1000)]
    finally:
        loop.close()
