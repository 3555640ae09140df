"""The legacy HTTP+SSE transport ("type": "sse") against a real SSE server, and the hints when a URL
and a transport do not match (issue 15 item 6)."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterator

import pytest

from support import SERVERS
from support import free_port, manager, until, wait_listening
from moka_shell.config import ServerConfig
from moka_shell.errors import ToolCallError
from moka_shell.inspector import Inspector

pytestmark = pytest.mark.anyio


@pytest.fixture
def sse_server() -> Iterator[int]:
    """tests/servers/sse_server.py on a free loopback port, until the test ends."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(SERVERS / "sse_server.py"), str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, proc)
    except AssertionError:
        proc.kill()
        raise
    try:
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def test_an_sse_server_connects_lists_and_calls(sse_server: int) -> None:
    """"type": "sse": ready, its tools and prompts listed, a call answered."""
    mgr = manager(Inspector(None), connect_timeout=20)
    mgr.load({"old": ServerConfig(type="sse", url=f"http://127.0.0.1:{sse_server}/sse")})
    mgr.start_all()
    try:
        await mgr.wait_ready(timeout=30)
        conn = mgr.get("old")
        assert conn.status == "ready", conn.error
        assert conn.info()["transport"] == "sse" and "echo" in conn.tools
        assert (await conn.call_tool("echo", {"text": "x"}))["content"][0]["text"] == "sse says x"
        assert [p["name"] for p in await conn.requests.prompts()] == ["greet"]
    finally:
        await mgr.stop_all()


async def test_an_sse_url_given_to_streamable_http_says_to_use_sse(sse_server: int) -> None:
    """A /sse URL without "type": the reason names the HTTP status and says to set "type": "sse"."""
    mgr = manager(Inspector(None), connect_timeout=10)
    mgr.load({"mixed": ServerConfig(url=f"http://127.0.0.1:{sse_server}/sse")})
    conn = mgr.get("mixed")
    mgr.start_all()
    try:
        await until(lambda: conn.status == "failed")
        assert 'set "type": "sse"' in (conn.error or ""), conn.error
        assert "HTTP 405" in (conn.error or "") or "HTTP 404" in (conn.error or ""), conn.error
    finally:
        await mgr.stop_all()


async def test_sse_type_without_a_url_is_a_clear_error() -> None:
    """"type": "sse" with no url: said plainly, no traceback."""
    mgr = manager(Inspector(None), connect_timeout=5)
    mgr.load({"nourl": ServerConfig(type="sse", command="x")})
    conn = mgr.get("nourl")
    mgr.start_all()
    try:
        await until(lambda: conn.status == "failed")
        assert "an SSE server needs a 'url'" in (conn.error or "")
    finally:
        await mgr.stop_all()


@pytest.fixture
def garbage_http() -> Iterator[int]:
    """tests/servers/garbage_http_server.py on a free loopback port."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(SERVERS / "garbage_http_server.py"), str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, proc)
    except AssertionError:
        proc.kill()
        raise
    try:
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def test_an_unparsable_http_event_fails_its_call_without_a_traceback(
        garbage_http: int, caplog: pytest.LogCaptureFixture) -> None:
    """An SSE event that is not JSON: that call fails saying so, no traceback is logged, the next call works (R1.4)."""
    mgr = manager(Inspector(None), connect_timeout=20)
    mgr.load({"g": ServerConfig(url=f"http://127.0.0.1:{garbage_http}/mcp")})
    with caplog.at_level(logging.DEBUG):
        mgr.start_all()
        try:
            await mgr.wait_ready(timeout=30)
            conn = mgr.get("g")
            assert conn.status == "ready", conn.error
            with pytest.raises(ToolCallError, match="Failed to parse SSE message"):
                await conn.call_tool("garbage", {})
            assert (await conn.call_tool("echo", {}))["content"][0]["text"] == "echo answered"
        finally:
            await mgr.stop_all()
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records if r.exc_info]
