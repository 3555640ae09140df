"""Connections that cannot be starved and always say why (issue 14 item 3, issue 15 item 7; findings R1.6,
R1.9, R1.13, R1.15, R1.17, R1.19, R1.24), against real subprocess servers and a real HTTP server."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from support import manager, stdio, until
from moka_shell.config import ServerConfig
from moka_shell.core.mcp.backoff import Backoff
from moka_shell.errors import ToolCallError
from moka_shell.inspector import EventFilter, Inspector

pytestmark = pytest.mark.anyio


async def test_reading_ui_resources_is_not_part_of_connecting() -> None:
    """A ui:// read slower than the connect deadline: the server is ready, and the view's HTML comes later (R1.15)."""
    mgr = manager(Inspector(None), connect_timeout=2)
    mgr.load({"slow": stdio("raw_server.py", "--slow-ui", "4")})
    mgr.start_all()
    try:
        await mgr.wait_ready(timeout=30)
        conn = mgr.get("slow")
        assert conn.status == "ready" and conn.generation == 1, conn.error
        assert (await conn.call_tool("echo", {"text": "meanwhile"}))["content"][0]["text"] == "meanwhile"
        view = await conn.ui_resource("ui://raw/view")
        assert view.error is None and view.html is not None and "raw view" in view.html
        assert conn.generation == 1
    finally:
        await mgr.stop_all()


async def test_a_view_over_the_size_cap_is_refused_with_its_size() -> None:
    """A 25 MiB ui:// resource: a clear error for that view; the server stays ready (R1.17)."""
    mgr = manager(Inspector(None))
    mgr.load({"big": stdio("raw_server.py", "--big-ui", "25")})
    mgr.start_all()
    try:
        await mgr.wait_ready(timeout=30)
        conn = mgr.get("big")
        assert conn.status == "ready", conn.error
        view = await conn.ui_resource("ui://raw/view")
        assert view.html is None and view.error is not None
        assert "MiB of HTML" in view.error and "at most 24 MiB" in view.error
        assert (await conn.call_tool("echo", {}))["content"][0]["text"] == "hi"
    finally:
        await mgr.stop_all()


async def test_a_huge_reply_is_refused_unread_and_the_connection_lives() -> None:
    """A 40 MiB reply on one line: that call fails saying the size and the limit; the next call works (R1.13)."""
    insp = Inspector(None)
    mgr = manager(insp)
    mgr.load({"raw": stdio("raw_server.py")})
    mgr.start_all()
    try:
        await mgr.wait_ready(timeout=30)
        conn = mgr.get("raw")
        with pytest.raises(ToolCallError) as caught:
            await conn.call_tool("huge", {"mb": 40})
        assert "40.0 MiB, over Moka's limit of 32 MiB" in str(caught.value)
        assert (await conn.call_tool("echo", {"text": "after"}))["content"][0]["text"] == "after"
        assert conn.status == "ready" and conn.generation == 1
        # The inspector never held the 40 MiB either: only the error reply went in.
        events = insp.query(EventFilter(server="raw", channel="mcp.rpc"), limit=10_000)
        assert max(len(str(e["message"])) for e in events) < 100_000
    finally:
        await mgr.stop_all()


async def test_invalid_utf8_inside_a_reply_is_replaced_and_reported(caplog: pytest.LogCaptureFixture) -> None:
    """A reply with a 0xff byte in its JSON: the call succeeds with U+FFFD, the byte is reported (R1.6)."""
    insp = Inspector(None)
    mgr = manager(insp)
    mgr.load({"raw": stdio("raw_server.py", "--garbage")})
    with caplog.at_level(logging.DEBUG):
        mgr.start_all()
        try:
            await mgr.wait_ready(timeout=30)
            conn = mgr.get("raw")
            assert conn.status == "ready", conn.error
            result = await conn.call_tool("bytes_tool", {})
            assert result["content"][0]["text"] == "caf\ufffd!"
            problems = [e["message"]["error"] for e in insp.query(EventFilter(server="raw", method="transport/error"))]
            assert any("invalid UTF-8" in p and "0xff" in p for p in problems)
            assert any("not JSON-RPC" in p for p in problems)  # the --garbage lines, each reported and skipped
            assert conn.generation == 1
        finally:
            await mgr.stop_all()
    assert not [r for r in caplog.records if r.exc_info]  # no traceback anywhere for any of it (R1.4)


async def test_every_page_of_tools_is_listed_and_a_tool_on_page_two_is_callable() -> None:
    """tools/list in three pages: all six tools are known; beta_on_page_two runs (issue 15 item 6)."""
    mgr = manager(Inspector(None))
    mgr.load({"raw": stdio("raw_server.py")})
    mgr.start_all()
    try:
        await mgr.wait_ready(timeout=30)
        conn = mgr.get("raw")
        assert sorted(conn.tools) == ["alpha", "beta_on_page_two", "bytes_tool", "echo", "huge", "slow_ui"]
        result = await conn.call_tool("beta_on_page_two", {})
        assert result["content"][0]["text"] == "beta_on_page_two ran"
        assert "ui://raw/view" in conn.listing.listing_meta  # resources/list page 2
    finally:
        await mgr.stop_all()


async def test_an_exit_code_and_a_signal_are_named() -> None:
    """'exited with code 3' with its last stderr line; 'killed by SIGKILL' after kill -9 (R1.9, R1.1)."""
    mgr = manager(Inspector(None))
    mgr.load({"quits": stdio("noisy_server.py", "--exit-after", "1"), "killed": stdio("fault_server.py")})
    quits, killed = mgr.get("quits"), mgr.get("killed")
    mgr.start_all()
    try:
        await until(lambda: quits.status == "failed")
        assert "the server process exited with code 3" in (quits.error or "")
        assert "exiting on purpose" in (quits.error or "")
        await until(lambda: killed.status == "ready")
        pid = int((await killed.call_tool("pid", {}))["content"][0]["text"])
        os.kill(pid, signal.SIGKILL)
        await until(lambda: killed.status == "failed")
        assert "killed by SIGKILL" in (killed.error or ""), killed.error
    finally:
        await mgr.stop_all()


class _Failing(BaseHTTPRequestHandler):
    """Every request: 500 with a short text body."""

    def _fail(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = b"database is down\n\n(try again later)"
        self.send_response(500)
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET = do_DELETE = _fail

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def failing_http() -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 that answers 500 to everything."""
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Failing)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/mcp?key=secret-in-query"
    finally:
        srv.shutdown()
        srv.server_close()


async def test_an_http_error_shows_its_status_and_body(failing_http: str) -> None:
    """'HTTP 500 Internal Server Error from POST /mcp: database is down', never the query (R1.19)."""
    mgr = manager(Inspector(None), connect_timeout=10)
    mgr.load({"web": ServerConfig(url=failing_http)})
    conn = mgr.get("web")
    mgr.start_all()
    try:
        await until(lambda: conn.status == "failed")
        assert "HTTP 500 Internal Server Error from POST /mcp: database is down (try again later)" in (conn.error or "")
        assert (conn.error or "").count("database is down") == 1, conn.error  # said once, not once per request
        assert "secret-in-query" not in (conn.error or "") and not any("secret" in line for line in conn.stderr)
    finally:
        await mgr.stop_all()


def test_the_backoff_starts_over_after_a_healthy_session() -> None:
    """Failures in a row grow the delay; a session that was healthy resets it (R1.9)."""
    b = Backoff(delays=(1.0, 2.0, 5.0), healthy_seconds=3600)
    assert [b.next_delay() for _ in range(4)] == [2.0, 5.0, 5.0, 5.0]
    b.ready()
    assert b.next_delay() == 5.0  # ready, but not for long: still failing
    healthy = Backoff(delays=(1.0, 2.0, 5.0), healthy_seconds=0)
    healthy.next_delay(), healthy.next_delay()
    healthy.ready()
    assert healthy.next_delay() == 1.0


async def test_a_followed_resource_on_a_2026_server_reports_its_updates() -> None:
    """2026-07-28: the followed URI goes in subscriptions/listen; the server's update reaches on_resource_updated."""
    mgr = manager(Inspector(None))
    seen: list[tuple[str, str]] = []
    mgr.on_resource_updated = lambda server, uri: seen.append((server, uri))
    mgr.load({"fault": stdio("fault_server.py")})
    mgr.start_all()
    try:
        await mgr.wait_ready(timeout=30)
        conn = mgr.get("fault")
        assert conn.protocol_version == "2026-07-28"
        assert await conn.subscriptions.subscribe("ui://fault/view") == ["ui://fault/view"]
        for _ in range(200):  # the listen stream is reopened with the URI; touch until an update arrives
            await conn.call_tool("touch_view", {})
            if seen:
                break
            await asyncio.sleep(0.05)
        assert seen and seen[0] == ("fault", "ui://fault/view")
    finally:
        await mgr.stop_all()


async def test_a_2026_server_that_reports_no_changes_is_not_asked_to_listen() -> None:
    """moka-demo (2026-07-28) advertises no listChanged and no subscribe: no subscriptions/listen goes to it,
    so the Inspector's first screen shows no "Method not found" from Moka's own demo. Before, it did."""
    import sys

    insp = Inspector(None)
    mgr = manager(insp)
    mgr.load({"moka-demo": ServerConfig(command=sys.executable, args=["-m", "moka_shell", "demo-server"])})
    mgr.start_all()
    try:
        await mgr.wait_ready(timeout=30)
        conn = mgr.get("moka-demo")
        assert conn.protocol_version == "2026-07-28"
        await conn.call_tool("roll_dice", {})  # a round trip after ready: a listen request would be out by now
        events = insp.query(EventFilter(), limit=10_000)
    finally:
        await mgr.stop_all()
    assert not [e for e in events if e.get("method") in ("subscriptions/listen", "listen/error")], events
    errors = [(e["channel"], e.get("method"), e["message"]) for e in events
              if isinstance(e.get("message"), dict) and e["message"].get("error")]
    assert not errors, errors
