"""Starting and stopping Moka's web server waits for nothing but events (docs/performance.md §19).

uvicorn looks at ``should_exit`` once every 0.1 s and then pauses 0.1 s more for open connections
to close, even when there are none: each stop of Moka's two servers cost 0.1–0.2 s, and that was
most of the ~150 ms that ``moka check`` took to exit after its server had stopped. These tests stop
the server with the loop's clock frozen, so any timed wait on the way would never end; only a stop
that waits for events (the stop asked, the connections gone) completes.
"""

from __future__ import annotations

import asyncio
import json
import socket

import httpx2
import pytest

from moka_shell.paths import Paths
from moka_shell.shells.core_thread import start_core
from moka_shell.web.server import WebServer
from support import until
from ws_client import WsClient

pytestmark = pytest.mark.anyio


def _frozen_clock() -> None:
    """Stop the running loop's clock: asyncio.sleep and every timeout never end from here on."""
    loop = asyncio.get_running_loop()
    now = loop.time()
    loop.time = lambda: now  # type: ignore[method-assign]


def _refused(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


async def _ends_without_the_clock(task: asyncio.Future[None]) -> bool:
    """Does ``task`` end within 10,000 turns of the loop? (Not asyncio.wait_for: with the clock frozen
    its timeout would never fire either; a count of turns does not depend on the machine's speed.)"""
    for _ in range(10_000):
        if task.done():
            return True
        await asyncio.sleep(0)
    return task.done()


async def test_an_idle_server_stops_without_a_timed_wait() -> None:
    web = WebServer(None)
    await web.start()
    async with httpx2.AsyncClient(timeout=30) as http:  # served once: a stop after real traffic
        assert (await http.get(web.endpoints.host_origin + "/static/js/app.js")).status_code == 200

    stopping = asyncio.ensure_future(web.stop())
    _frozen_clock()
    assert await _ends_without_the_clock(stopping), "the stop waited on the clock (uvicorn's tick or its pause)"
    stopping.result()
    assert _refused(web.host_port) and _refused(web.sandbox_port)


async def test_a_server_starts_without_polling_the_clock() -> None:
    # The start used to look at uvicorn's `started` every 10 ms; it now waits for the start-up's end.
    web = WebServer(None)
    _frozen_clock()
    starting = asyncio.ensure_future(web.start())
    assert await _ends_without_the_clock(starting), "the start waited on the clock"
    starting.result()
    async with httpx2.AsyncClient(timeout=30) as http:
        assert (await http.get(web.endpoints.host_origin + "/static/js/app.js")).status_code == 200
    await web.stop()


async def test_a_stop_with_a_page_connected_closes_its_socket(paths: Paths) -> None:
    # The fast path is only for a server with nothing open: a page's socket is still closed properly.
    app, web = await start_core(paths, mode="browser", servers=[], store=False)
    client = WsClient()
    try:
        assert await client.connect(web.host_port, f"/api/ws?token={web.token}", origin=web.endpoints.host_origin)
        await client.send_text(json.dumps({"id": 1, "method": "app.hello", "params": {}}))
        assert "result" in await client.reply(1)
    finally:
        await app.stop()
        await asyncio.wait_for(web.stop(), 60)
    await until(lambda: client.closed is not None, "the page's socket is closed by the stop")
    assert _refused(web.host_port) and _refused(web.sandbox_port)


def test_a_fake_model_server_stops_from_another_thread_without_waiting_for_a_tick(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # The fakes in moka_shell.testing serve on a thread of their own and are stopped from the test's
    # thread: the stop must wake that loop (with the tick made an hour long, only a wake ends it).
    from moka_shell.testing.fake_openai import FakeOpenAIServer
    from moka_shell.web import prompt_server

    monkeypatch.setattr(prompt_server, "TICK", 3600.0)
    fake = FakeOpenAIServer().start()
    thread, port = fake._thread, fake.port
    assert thread is not None
    # No request first: a client's connection closing would wake the loop by itself and hide a bad wake.
    fake._server.request_exit()  # type: ignore[union-attr]
    thread.join(60)
    assert not thread.is_alive(), "the fake's loop slept through the stop request"
    fake.stop()
    assert _refused(port)
