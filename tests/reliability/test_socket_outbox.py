"""A page that stops reading its WebSocket never grows Moka's memory (reliability finding N1).

Real parts: Moka's web server on loopback and two real WebSocket clients: one that reads (tests/ws_client.py)
and one that shakes hands, turns the Inspector's live stream on, and never reads again (a small receive
buffer, as a stalled tab's socket fills). The flood is the core's own traffic: inspector events and core
events, as a noisy server makes them.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
import wsproto
import wsproto.events as ev

from moka_shell.core.app import MokaApp
from moka_shell.paths import Paths
from moka_shell.shells.core_thread import start_core
from moka_shell.web.server import WebServer
from support import until
from ws_client import WsClient

pytestmark = pytest.mark.anyio
LIMIT, LIVE = 1 << 20, 256 << 10  # small caps, so a flood of FLOOD_MB shows them
FLOOD_MB = 16


@pytest.fixture
async def moka(paths: Paths) -> AsyncIterator[tuple[MokaApp, WebServer]]:
    paths.config_file.write_text(json.dumps({"mcpServers": {}}))
    app, web = await start_core(paths, mode="browser", store=False)
    web.outbox_limit, web.outbox_live_limit = LIMIT, LIVE
    try:
        yield app, web
    finally:
        await app.stop()
        await web.stop()


async def stalled_page(web: WebServer, *first: dict[str, Any]) -> asyncio.StreamWriter:
    """A page that connects, sends ``first`` frames, and then never reads its socket."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", web.host_port))
    reader, writer = await asyncio.open_connection(sock=sock)
    conn = wsproto.WSConnection(wsproto.ConnectionType.CLIENT)
    writer.write(conn.send(ev.Request(host=f"127.0.0.1:{web.host_port}", target=f"/api/ws?token={web.token}")))
    await writer.drain()
    while not any(isinstance(e, ev.AcceptConnection) for e in conn.events()):
        conn.receive_data(await reader.read(4096))
    for frame in first:
        writer.write(conn.send(ev.Message(data=json.dumps(frame))))
    await writer.drain()
    return writer


async def flood(app: MokaApp, *, inspector: bool, megabytes: int) -> None:
    """About ``megabytes`` of traffic in 1 KiB events, yielding to the loop as a real server's would."""
    blob = "x" * 1024
    for i in range(megabytes * 1024):
        if inspector:
            app.inspector.record("mcp", {"jsonrpc": "2.0", "method": "notifications/message",
                                         "params": {"level": "info", "data": blob}}, direction="<-", server="noisy")
        else:
            app.emit("test.flood", {"i": i, "blob": blob})
        if i % 64 == 0:
            await asyncio.sleep(0)


async def test_a_stalled_inspector_loses_live_pushes_not_memory(moka: tuple[MokaApp, WebServer]) -> None:
    """The Inspector's live stream of a page that stopped reading is dropped over its cap; the socket lives."""
    app, web = moka
    writer = await stalled_page(web, {"id": 1, "method": "inspector.live", "params": {"on": True}})
    await until(lambda: any(o for o in web.outboxes.values()), what="the stalled page's socket")
    outbox = next(iter(web.outboxes.values()))
    try:
        await flood(app, inspector=True, megabytes=FLOOD_MB)
        assert outbox.peak <= LIVE + 4096, outbox.peak  # it was all of it: ~1 KB per event, unbounded
        assert outbox.dropped > 0 and not outbox.overflowed.is_set() and len(web.sockets) == 1
    finally:
        writer.close()


async def test_a_page_that_stopped_reading_is_closed_and_others_go_on(moka: tuple[MokaApp, WebServer]) -> None:
    """Past the outbox cap the stalled socket is closed (it will reconnect); a reading page gets every event."""
    app, web = moka
    reading = WsClient()
    assert await reading.connect(web.host_port, f"/api/ws?token={web.token}")
    writer = await stalled_page(web, {"id": 1, "method": "info.get", "params": {}})
    await until(lambda: len(web.outboxes) == 2, what="both pages connected")
    stalled = [o for ws, o in web.outboxes.items() if ws in web.sockets][-1]
    try:
        # More than the kernel's socket buffers hold (loopback send buffers grow to a few MB), so the
        # outbox itself fills.
        await flood(app, inspector=False, megabytes=FLOOD_MB)
        await until(lambda: len(web.sockets) == 1, what="the stalled page's socket closed", timeout=60)
        assert stalled.overflowed.is_set() and stalled.peak <= LIMIT and stalled.size == 0
        # What the soak benchmark reports: the bound, and the peak of every socket, the closed one's too.
        sockets = (await web.bridge.handle({"id": 2, "method": "app.sockets"}))["result"]
        assert sockets["open"] == 1 and sockets["limit"] == LIMIT and sockets["liveLimit"] == LIVE
        assert stalled.peak <= sockets["peak"] <= LIMIT
        got = 0
        while got < FLOOD_MB * 1024:  # the reading page got the whole flood, in order
            frame = await asyncio.wait_for(reading.frames.get(), 60)
            for item in frame if isinstance(frame, list) else [frame]:
                if item.get("event") == "test.flood":
                    assert item["data"]["i"] == got
                    got += 1
    finally:
        writer.close()
