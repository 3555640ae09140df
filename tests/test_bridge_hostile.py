"""The bridge survives hostile input, and a view cannot make Moka repeat itself (findings S2, S5, S8, S13, S6).

Real parts: Moka's web server on loopback, a real MCP server (tests/servers/hostile_server.py) as a
subprocess, and a real WebSocket client (tests/ws_client.py).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest

from moka_shell.core.app import MokaApp
from moka_shell.core.views.reports import report_uri
from moka_shell.paths import Paths
from moka_shell.shells.core_thread import start_core
from moka_shell.testing import EventRecorder
from moka_shell.web.frame_limits import FRAME_LIMIT, depth_of
from moka_shell.web.server import WebServer
from support import SERVERS, until
from ws_client import WsClient

pytestmark = pytest.mark.anyio
HOSTILE = {"command": sys.executable, "args": [str(SERVERS / "hostile_server.py")]}


def nested(depth: int) -> str:
    """JSON text of an object nested ``depth`` deep (json.dumps itself cannot write it)."""
    return '{"a": ' * depth + "{}" + "}" * depth


@pytest.fixture
async def moka(paths: Paths) -> AsyncIterator[tuple[MokaApp, WebServer]]:
    paths.config_file.write_text(json.dumps({"mcpServers": {"hostile": HOSTILE}}))
    app, web = await start_core(paths, mode="browser", store=False)
    await app.servers.wait_ready(timeout=30)
    try:
        yield app, web
    finally:
        await app.stop()
        await web.stop()


async def socket(web: WebServer) -> WsClient:
    ws = WsClient()
    assert await ws.connect(web.host_port, f"/api/ws?token={web.token}")
    return ws


async def open_view(app: MokaApp, web: WebServer, tool: str) -> Any:
    reply = await web.bridge.handle({"id": 1, "method": "tools.run",
                                     "params": {"server": "hostile", "tool": tool, "arguments": {}}})
    assert "error" not in reply, reply
    for _ in range(200):
        views = [v for v in app.view_host.views.values() if v.tool.name == tool]
        if views and views[-1].result is not None:
            return views[-1]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no view of {tool}")


def test_depth_is_measured_without_decoding() -> None:
    """Brackets inside strings are not nesting; a deep frame is seen as deep."""
    assert depth_of(nested(1000)) > 128
    assert depth_of(json.dumps({"s": "[" * 5000, "t": "{\\\"[[["})) <= 128
    assert depth_of(json.dumps([[1, 2]] * 1000)) == 2


async def test_hostile_frames_each_get_an_error_and_the_socket_stays_up(moka: tuple[MokaApp, WebServer]) -> None:
    """1,000 deep, over the size limit, not JSON, not UTF-8: each answered; the same socket then works."""
    app, web = moka
    ws = await socket(web)
    try:
        await ws.send_text('{"id": 1, "method": "app.info", "params": ' + nested(1000) + "}")
        deep = await ws.reply(1)
        assert deep["error"]["code"] == -32600 and "deeper" in deep["error"]["message"]
        await ws.send_text('{"id": 2, "method": "view.rpc", "params": {"viewId": "v0", "message": '
                           + nested(3000) + "}}")
        assert (await ws.reply(2))["error"]["code"] == -32600
        await ws.send_text(json.dumps({"id": 3, "method": "app.info", "params": {"s": "x" * (FRAME_LIMIT + 1)}}))
        big = await ws.reply(3)
        assert big["error"]["code"] == -32600 and "limit" in big["error"]["message"]
        await ws.send_text("this is not JSON {")
        assert (await ws.reply(None))["error"]["code"] == -32700
        await ws.send_bytes(b"\xff\xfe\x00 not utf-8")
        assert (await ws.reply(None))["error"]["code"] == -32700
        await ws.send_text("[" * 5000)
        assert (await ws.reply(None))["error"]["code"] == -32600
        await ws.send_text(json.dumps({"id": 4, "method": "app.info"}))
        assert (await ws.reply(4))["result"]["mode"] == "browser"
        assert ws.closed is None
    finally:
        await ws.close()


async def test_a_burst_of_thousands_is_answered(moka: tuple[MokaApp, WebServer]) -> None:
    """3,000 frames at once: every one gets a reply (a result or a 'too many at once'), then normal service."""
    app, web = moka
    ws = await socket(web)
    try:
        for i in range(3000):
            await ws.send_text(json.dumps({"id": 10 + i, "method": "app.info"}))
        seen: set[int] = set()
        while len(seen) < 3000:
            got = await asyncio.wait_for(ws.frames.get(), 60)
            assert got is not None, "the socket closed"
            for frame in got if isinstance(got, list) else [got]:
                if "event" not in frame:
                    assert "result" in frame or frame["error"]["code"] == -32000
                    seen.add(frame["id"])
        await ws.send_text(json.dumps({"id": 1, "method": "app.info"}))
        assert "result" in await ws.reply(1)
    finally:
        await ws.close()


async def test_plain_http_refuses_deep_json_with_400(moka: tuple[MokaApp, WebServer]) -> None:
    """POST /api/rpc of '[' x 5000 was a 500 (RecursionError); now a 400 that says why."""
    app, web = moka
    async with httpx2.AsyncClient(timeout=30) as http:
        r = await http.post(f"{web.endpoints.host_origin}/api/rpc", content=b"[" * 5000,
                            headers={"X-Moka-Token": web.token})
    assert r.status_code == 400 and "deeper" in r.text


async def test_views_list_has_the_views_a_reconnecting_page_missed(moka: tuple[MokaApp, WebServer]) -> None:
    """views.list gives mount data for every live view (the page mounts those it does not show)."""
    app, web = moka
    view = await open_view(app, web, "strict")
    listed = (await web.bridge.handle({"id": 1, "method": "views.list", "params": {}}))["result"]["views"]
    assert [v["viewId"] for v in listed] == [view.id] and listed[0]["proxyUrl"]


async def handshake(app: MokaApp, view: Any) -> None:
    reply = await app.view_host.dispatcher.handle(view.id, {"jsonrpc": "2.0", "id": 0, "method": "ui/initialize",
                                                            "params": {"protocolVersion": "2026-01-26"}})
    assert reply is not None and "result" in reply
    await app.view_host.dispatcher.handle(view.id, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})


async def test_repeated_initialized_does_not_replay_without_end(moka: tuple[MokaApp, WebServer]) -> None:
    """100 initialized: a few replays of the 1 MiB result, not 100; the repeats are logged once; the record is cut."""
    app, web = moka
    posts = EventRecorder("view.post")
    app.subscribe(posts)
    view = await open_view(app, web, "big")
    await handshake(app, view)
    for _ in range(99):
        await app.view_host.dispatcher.handle(view.id, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
    results = [p for p in posts.data() if p["message"].get("method") == "ui/notifications/tool-result"]
    assert 1 <= len(results) <= 4, len(results)
    throttled = [e for e in app.inspector.query(limit=100000) if e.get("method") == "view/throttled"]
    assert len(throttled) == 1
    again = [await app.view_host.dispatcher.handle(view.id, {"jsonrpc": "2.0", "id": i, "method": "ui/initialize",
                                                            "params": {}}) for i in range(1, 20)]
    assert any("error" in r for r in again if r)
    logged = [e for e in app.inspector.query(limit=100000) if e["channel"] == "ui.rpc" and e["direction"] == "out"
              and e.get("method") == "ui/notifications/tool-result"]
    assert logged and all(e["message"].get("moka/truncated") and e["message"]["size"] > 2**20 for e in logged)


async def test_one_question_per_view_and_action(moka: tuple[MokaApp, WebServer]) -> None:
    """15 ui/open-link at once: one dialog; the other 14 are answered 'no' at once (S13)."""
    app, web = moka
    asked = EventRecorder("consent.request")
    app.subscribe(asked)
    view = await open_view(app, web, "strict")
    await handshake(app, view)
    calls = [asyncio.ensure_future(app.view_host.dispatcher.handle(view.id, {
        "jsonrpc": "2.0", "id": 50 + i, "method": "ui/open-link", "params": {"url": f"https://example.com/{i}"}}))
        for i in range(15)]
    await until(lambda: asked and sum(c.done() for c in calls) == 14, "one question, the other 14 answered")
    assert len(asked) == 1 and sum(c.done() for c in calls) == 14
    app.consent.answer(asked.data()[0]["requestId"], False, False)
    replies = await asyncio.gather(*calls)
    assert all(r is not None and r["result"] == {"isError": True} for r in replies)


async def test_fullscreen_needs_a_gesture_or_a_yes(moka: tuple[MokaApp, WebServer]) -> None:
    """Without the proxy's gesture stamp the person is asked; a no keeps the view inline (S6)."""
    app, web = moka
    asked: list[dict[str, Any]] = []

    def on(ev: str, data: Any) -> None:
        if ev == "consent.request":
            asked.append(data)
            app.consent.answer(data["requestId"], False, False)

    app.subscribe(on)
    view = await open_view(app, web, "strict")
    await handshake(app, view)
    ask = {"jsonrpc": "2.0", "id": 7, "method": "ui/request-display-mode", "params": {"mode": "fullscreen"}}
    reply = await app.view_host.dispatcher.handle(view.id, ask)
    assert reply is not None and reply["result"] == {"mode": "inline"}
    assert [a["action"] for a in asked] == ["display_mode"] and asked[0]["detail"]["mode"] == "fullscreen"
    stamped = {**ask, "params": {"mode": "fullscreen", "moka/gesture": True}}
    reply = await app.view_host.dispatcher.handle(view.id, stamped)
    assert reply is not None and reply["result"] == {"mode": "fullscreen"} and len(asked) == 1


async def test_csp_reports_need_the_views_key_and_are_rate_limited(moka: tuple[MokaApp, WebServer]) -> None:
    """Unknown view, wrong key: not recorded; the view's key: recorded, up to its rate (S8)."""
    app, web = moka
    view = await open_view(app, web, "strict")
    base = web.endpoints.sandbox_origin

    def reports() -> list[dict[str, Any]]:
        return [e for e in app.inspector.query(limit=100000) if e.get("method") == "view/csp-report"]

    body = json.dumps({"csp-report": {"blocked-uri": "https://x.example"}}).encode()
    async with httpx2.AsyncClient(timeout=30) as http:
        assert (await http.post(f"{base}/csp-report/{view.id}", content=body)).status_code == 204
        assert (await http.post(f"{base}/csp-report/{view.id}?k=guess", content=body)).status_code == 204
        assert (await http.post(f"{base}/csp-report/vnope?k=guess", content=body)).status_code == 204
        assert reports() == []
        assert report_uri(view.id) in view.policy.header
        for _ in range(300):
            await http.post(base + report_uri(view.id), content=body)
    kept = [e for e in reports() if e["message"]["event"] == "csp-report"]
    dropped = [e for e in reports() if e["message"]["event"] == "csp-reports-dropped"]
    assert 50 <= len(kept) < 300 and len(dropped) == 1


async def test_a_view_cannot_declare_every_local_port(moka: tuple[MokaApp, WebServer]) -> None:
    """S15: `http://127.0.0.1:*` (Moka's ports among them) is refused; a named port and a real domain stay."""
    app, web = moka
    view = await open_view(app, web, "wide")
    header = view.policy.header
    assert "127.0.0.1:*" not in header and "localhost:*" not in header
    assert "https://api.example.com" in header and "http://127.0.0.1:5173" in header
    assert sum("every port of this machine" in p for p in view.problems) == 2


def test_moka_s_own_origins_are_refused() -> None:
    from moka_shell.core.shell import Endpoints
    from moka_shell.core.views.own_origins import without_own_origins

    ends = Endpoints(host_origin="http://127.0.0.1:4100", sandbox_origin="http://127.0.0.1:4101")
    refused: list[str] = []
    meta = {"csp": {"connectDomains": ["http://127.0.0.1:4100", "ws://localhost:4100/api", "http://127.0.0.1:4102"],
                    "frameDomains": ["http://127.0.0.1:4101"]}}
    out = without_own_origins(meta, ends, refused)
    assert out is not None and out["csp"]["connectDomains"] == ["http://127.0.0.1:4102"]
    assert out["csp"]["frameDomains"] == [] and len(refused) == 3
