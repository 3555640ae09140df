"""Server connections against real subprocess servers: concurrency, faults, reconnects, the catalogue."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time

import pytest

from support import free_port, manager, node, npm_server, server_script, stdio, wait_listening
from moka_shell.config import ServerConfig
from moka_shell.errors import ServerUnavailableError, ToolCallError
from moka_shell.inspector import EventFilter, Inspector

pytestmark = pytest.mark.anyio


def demo() -> ServerConfig:
    return ServerConfig(command="moka", args=["demo-server"])


async def test_demo_catalogue_keeps_meta_ui_and_visibility(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The catalogue keeps each tool's _meta whole and knows its UI resource and visibility."""
    mgr = manager(Inspector(tmp_path / "insp"))
    mgr.load({"moka-demo": demo()})
    mgr.start_all()
    try:
        await mgr.wait_ready(timeout=30)
        conn = mgr.get("moka-demo")
        assert conn.status == "ready", conn.error
        dice = conn.tools["roll_dice"]
        assert dice.resource_uri == "ui://moka-demo/dice" and dice.visibility == ["model", "app"]
        assert dice.meta["ui"]["resourceUri"] == "ui://moka-demo/dice"
        assert conn.tools["reroll_dice"].visibility == ["app"] and conn.tools["reroll_dice"].resource_uri is None
        assert conn.tools["summarize_rolls"].visibility == ["model"]
        ui = await conn.ui_resource("ui://moka-demo/dice")  # prefetched after tools/list, or read now
        assert ui.error is None and "<html" in (ui.html or "").lower()
        assert ui.ui_meta["prefersBorder"] is True
        assert ui.ui_meta["csp"]["connectDomains"] == ["https://api.example.com"]
        result = await conn.call_tool("roll_dice", {"sides": 6, "count": 3})
        assert all(1 <= r <= 6 for r in result["structuredContent"]["rolls"])
        methods = {e.get("method") for e in mgr.inspector.query(EventFilter(channel="mcp.rpc"))}
        assert {"tools/list", "tools/call", "resources/read"} <= methods
    finally:
        await mgr.stop_all()


async def test_server_killed_mid_call_errors_clearly_and_reconnects(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Killing a stdio server during a call fails that call clearly; the supervisor reconnects."""
    mgr = manager(Inspector(tmp_path / "insp"))
    mgr.load({"fault": stdio("fault_server.py")})
    mgr.start_all()
    try:
        await mgr.wait_ready(timeout=30)
        conn = mgr.get("fault")
        pid = int((await conn.call_tool("pid", {}))["content"][0]["text"])
        call = asyncio.ensure_future(conn.call_tool("slow", {"seconds": 30}))
        await asyncio.sleep(0.5)
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(ToolCallError, match="connection closed|connection was lost"):
            await asyncio.wait_for(call, 10)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not (conn.status == "ready" and conn.generation >= 2):
            await asyncio.sleep(0.1)
        assert conn.status == "ready" and conn.generation >= 2, (conn.status, conn.error)
        assert (await conn.call_tool("echo", {"text": "back"}))["content"][0]["text"] == "back"
        assert "fault-server starting" in "\n".join(conn.stderr)  # stderr captured, never on our stdout
    finally:
        await mgr.stop_all()


async def test_idle_server_death_is_noticed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A stdio server that dies while idle is marked failed with a reason and comes back."""
    mgr = manager(Inspector(tmp_path / "insp"))
    mgr.load({"fault": stdio("fault_server.py")})
    mgr.start_all()
    try:
        await mgr.wait_ready(timeout=30)
        conn = mgr.get("fault")
        with pytest.raises(ToolCallError):
            await conn.call_tool("die", {})
        seen_failed = False
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            seen_failed = seen_failed or conn.status in ("failed", "connecting")
            if seen_failed and conn.status == "ready":
                break
            await asyncio.sleep(0.05)
        assert conn.status == "ready" and conn.generation >= 2
    finally:
        await mgr.stop_all()


async def test_mute_server_hits_connect_deadline_while_others_work(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A server that never answers fails at the deadline with a clear message; the demo still works."""
    # The 2 s deadline is the mute server's own ("timeout" in its config): a manager-wide one would
    # also fail the demo server whenever its start takes over 2 s on a loaded machine.
    mgr = manager(Inspector(tmp_path / "insp"))
    mute_cmd = server_script("mute_server.py")
    mgr.load({"mute": ServerConfig(command=mute_cmd[0], args=mute_cmd[1:], timeout=2.0), "moka-demo": demo()})
    mgr.start_all()
    try:
        await mgr.wait_ready(timeout=15)
        mute, good = mgr.get("mute"), mgr.get("moka-demo")
        assert good.status == "ready"
        deadline = time.monotonic() + 10
        while mute.status != "failed" and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert mute.status == "failed"
        assert "did not finish connecting within 2 s" in (mute.error or "")
        assert "mute server" in (mute.error or "")  # the last stderr lines say what the server said
        assert (await good.call_tool("roll_dice", {}))["structuredContent"]["count"] == 1
        with pytest.raises(ServerUnavailableError, match="mute"):
            await mute.call_tool("anything", {})
    finally:
        await mgr.stop_all()


async def test_missing_command_and_refused_port_give_clear_errors(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A command that does not exist and a closed HTTP port each fail with a reason a person can act on."""
    mgr = manager(Inspector(tmp_path / "insp"), connect_timeout=5.0)
    port = free_port()
    mgr.load({"nocmd": ServerConfig(command="definitely-not-a-real-command-xyz"),
              "refused": ServerConfig(url=f"http://127.0.0.1:{port}/mcp")})
    mgr.start_all()
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not all(c.status == "failed" for c in mgr.connections.values()):
            await asyncio.sleep(0.05)
        assert "command not found: 'definitely-not-a-real-command-xyz'" in (mgr.get("nocmd").error or "")
        refused = mgr.get("refused").error or ""
        assert "could not connect" in refused and "retrying" in refused
    finally:
        await mgr.stop_all()


async def test_streamable_http_server_and_restart(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A streamable-HTTP server connects; restart gives a new generation."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moka_shell.demo", "--http", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_listening(port)
        mgr = manager(Inspector(tmp_path / "insp"))
        mgr.load({"demo-http": ServerConfig(url=f"http://127.0.0.1:{port}/mcp")})
        mgr.start_all()
        try:
            await mgr.wait_ready(timeout=30)
            conn = mgr.get("demo-http")
            assert conn.status == "ready", conn.error
            assert conn.tools["roll_dice"].resource_uri == "ui://moka-demo/dice"
            await conn.restart()
            await conn.wait_ready(20)
            assert conn.generation == 2 and conn.status == "ready"
        finally:
            await mgr.stop_all()
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.npm
async def test_official_example_server_over_stdio_and_http(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """server-basic-vanillajs from npm: its tools with their _meta, over stdio and streamable HTTP."""
    bin_path = npm_server("mcp-server-basic-vanillajs")
    port = free_port()
    proc = subprocess.Popen([node(), bin_path], env={**os.environ, "PORT": str(port)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port)
        mgr = manager(Inspector(tmp_path / "insp"))
        mgr.load({"vanilla-stdio": ServerConfig(command=node(), args=[bin_path, "--stdio"]),
                  "vanilla-http": ServerConfig(url=f"http://127.0.0.1:{port}/mcp")})
        mgr.start_all()
        try:
            await mgr.wait_ready(timeout=30)
            for name in ("vanilla-stdio", "vanilla-http"):
                conn = mgr.get(name)
                assert conn.status == "ready", (name, conn.error)
                tool = conn.tools["get-time"]
                assert tool.meta["ui"]["resourceUri"] == "ui://get-time/mcp-app.html"
                assert tool.meta["ui/resourceUri"] == "ui://get-time/mcp-app.html"
                assert (await conn.ui_resource(tool.resource_uri)).error is None  # 200+ KB over SSE too
                assert conn.protocol_version == "2025-11-25"
        finally:
            await mgr.stop_all()
    finally:
        proc.terminate()
        proc.wait(10)
