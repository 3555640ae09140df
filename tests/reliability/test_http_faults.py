"""Faults over streamable HTTP (findings R1.19, N5b) against a real HTTP server child
(tests/servers/http_faults_server.py): an error status is said with its body on the call it answers,
and a reply over Moka's message cap is refused as it arrives, in bounded memory, whatever its framing."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import free_port, manager, wait_listening
from moka_shell.config import ServerConfig
from moka_shell.errors import ToolCallError
from moka_shell.inspector import Inspector

pytestmark = pytest.mark.anyio
SERVER = Path(__file__).resolve().parents[1] / "servers" / "http_faults_server.py"


@pytest.fixture
def faults_url() -> Iterator[str]:
    """The fault server on a free loopback port; its URL."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(SERVER), str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def test_an_http_error_on_a_tool_call_says_its_status_and_body(faults_url: str) -> None:
    """A 500 on tools/call names the status and the body, not "Server returned an error response
    (code -32603)" (R1.19); the connection stays up and the next call works."""
    mgr = manager(Inspector(None), connect_timeout=20)
    mgr.load({"h": ServerConfig(url=faults_url)})
    mgr.start_all()
    try:
        await mgr.wait_ready(timeout=60)
        conn = mgr.get("h")
        with pytest.raises(ToolCallError) as failed:
            await conn.call_tool("fail", {})
        assert "HTTP 500 Internal Server Error from POST /mcp: upstream exploded: database on fire" in str(failed.value)
        assert str(failed.value).count("database on fire") == 1
        assert "Server returned an error response" not in str(failed.value)
        done = await conn.call_tool("echo", {})
        assert done["content"][0]["text"] == "echo answered" and conn.status == "ready"
    finally:
        await mgr.stop_all()


@pytest.mark.parametrize("framing", ["length", "chunked", "sse"])
async def test_a_reply_over_the_cap_is_refused_as_it_arrives(faults_url: str, framing: str) -> None:
    """A 40 MiB result, however it is framed, is refused with the stdio transport's message; the
    connection lives (N5b)."""
    mgr = manager(Inspector(None), connect_timeout=20)
    mgr.load({"h": ServerConfig(url=faults_url)})
    mgr.start_all()
    try:
        await mgr.wait_ready(timeout=60)
        conn = mgr.get("h")
        with pytest.raises(ToolCallError) as refused:
            await conn.call_tool("big", {"mib": 40, "framing": framing})
        assert "over Moka's limit of 32 MiB for one message; Moka dropped it unread" in str(refused.value)
        done = await conn.call_tool("echo", {})
        assert done["content"][0]["text"] == "echo answered" and conn.status == "ready"
        # Under the cap, a big result still arrives, cut to the result cap as over stdio.
        kept = await conn.call_tool("big", {"mib": 6, "framing": framing})
        assert kept.get("_meta", {}).get("moka/truncated"), list(kept)
    finally:
        await mgr.stop_all()


def _moka_call_peak(url: str, tmp_path: Path, arguments: dict[str, Any]) -> tuple[int, str, int]:
    """(exit code, stderr, peak resident KiB) of one `moka call h big ARGUMENTS` in a child of its own."""
    home = tmp_path / f"call-{arguments['mib']}"
    home.mkdir()
    config = home / "config.json"
    config.write_text(json.dumps({"mcpServers": {"h": {"url": url}}}))
    out, err = home / "out.txt", home / "err.txt"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "moka_shell", "--config", str(config), "--data-dir",
                                 str(home / "data"), "call", "h", "big", json.dumps(arguments)],
                                stdout=stdout, stderr=stderr)
        _pid, status, usage = os.wait4(proc.pid, 0)  # this child's own peak, not the test run's
    return os.waitstatus_to_exitcode(status), err.read_text(), usage.ru_maxrss  # ru_maxrss is in KiB


def test_a_100_mib_reply_over_http_takes_bounded_memory(faults_url: str, tmp_path: Path) -> None:
    """`moka call` of a 100 MiB chunked result is refused, its peak resident size above a 1 MiB call's
    well under the reply's: it was +470 MB before the cap (N5b). Measured against the same command's
    own baseline, so what the interpreter and its imports take on this machine is not counted."""
    rc, said, peak = _moka_call_peak(faults_url, tmp_path, {"mib": 100, "framing": "chunked"})
    assert rc == 1 and "over Moka's limit of 32 MiB for one message" in said, said
    assert "Traceback" not in said
    rc, said, base = _moka_call_peak(faults_url, tmp_path, {"mib": 1, "framing": "chunked"})
    assert rc == 0, said
    assert peak - base < 128 * 1024, f"peak {peak >> 10} MiB, a 1 MiB call's {base >> 10} MiB"


async def test_nothing_of_a_refused_reply_is_kept(faults_url: str) -> None:
    """While a 40 MiB chunked reply is refused, Python holds at most about the cap; afterwards none of it."""
    mgr = manager(Inspector(None), connect_timeout=20)
    mgr.load({"h": ServerConfig(url=faults_url)})
    mgr.start_all()
    try:
        await mgr.wait_ready(timeout=60)
        conn = mgr.get("h")
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            with pytest.raises(ToolCallError):
                await conn.call_tool("big", {"mib": 40, "framing": "chunked"})
            gc.collect()
            after, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak - before < 72 * 2**20, f"peak +{(peak - before) >> 20} MiB"
        assert after - before < 4 * 2**20, f"kept +{(after - before) >> 20} MiB"
    finally:
        await mgr.stop_all()
