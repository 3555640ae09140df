"""The desktop loads Moka's page while the core is still importing (docs/performance.md §13).

The web server starts before the core: the UI's files are served at once, and what needs the core
(the page's socket, RPC, view documents) waits for it and goes on when it is attached, or is
answered with a refusal when Moka stops first. Real HTTP and WebSocket against a started server.
"""

from __future__ import annotations

import asyncio
import json
import socket

import httpx2
import pytest

from moka_shell.core.instance_lock import InstanceLock
from moka_shell.errors import InstanceRunningError
from moka_shell.paths import Paths
from moka_shell.shells.core_thread import start_core
from moka_shell.web.server import WebServer
from tests.ws_client import WsClient

pytestmark = pytest.mark.anyio


async def until(condition, what: str) -> None:  # type: ignore[no-untyped-def]
    for _ in range(2000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never: {what}")


async def test_the_page_is_served_before_the_core_and_its_socket_waits_for_it(paths: Paths) -> None:
    web = WebServer(None)
    await web.start()
    host = web.endpoints.host_origin
    app = None
    try:
        async with httpx2.AsyncClient(timeout=30) as http:
            index = await http.get(host + "/")
            module = await http.get(host + "/static/js/app.js")
            view = await http.get(web.endpoints.sandbox_origin + "/view/v1?k=x")
            assert index.status_code == 200 and "<title>Moka</title>" in index.text
            assert "frame-src " + web.endpoints.sandbox_origin in index.headers["content-security-policy"]
            assert module.status_code == 200 and module.headers["content-type"].startswith("text/javascript")
            assert view.status_code == 404  # no view exists before the core does

        client = WsClient()
        connecting = asyncio.ensure_future(client.connect(web.host_port, f"/api/ws?token={web.token}",
                                                          origin=host))
        await until(lambda: web.waiting_for_core == 1, "the page's socket waits for the core")
        assert not connecting.done() and not web.sockets

        # The core starts as start_core starts it, then is attached: the socket is accepted and answered.
        app, started = await start_core(paths, mode="browser", servers=[], store=False)
        await started.stop()
        web.attach(app)
        assert await asyncio.wait_for(connecting, 30)
        await client.send_text(json.dumps({"id": 1, "method": "app.hello", "params": {}}))
        reply = await client.reply(1)
        assert "result" in reply, reply
        await client.close()
    finally:
        if app is not None:
            await app.stop()
        await web.stop()


async def test_a_core_that_never_comes_refuses_what_waited_for_it(paths: Paths) -> None:
    web = WebServer(None)
    await web.start()
    client = WsClient()
    connecting = asyncio.ensure_future(client.connect(web.host_port, f"/api/ws?token={web.token}",
                                                      origin=web.endpoints.host_origin))
    async with httpx2.AsyncClient(timeout=30) as http:
        rpc = asyncio.ensure_future(http.post(web.endpoints.host_origin + "/api/rpc", headers={"x-moka-token": web.token},
                                              content=json.dumps({"id": 1, "method": "app.hello", "params": {}})))
        await until(lambda: web.waiting_for_core == 2, "the socket and the RPC wait for the core")
        await web.stop()
        assert (await asyncio.wait_for(rpc, 30)).status_code == 503
    assert not await asyncio.wait_for(connecting, 30)  # closed, not accepted


async def test_start_core_serves_first_and_stops_serving_when_the_core_fails(paths: Paths) -> None:
    seen: list[WebServer] = []
    app, web = await start_core(paths, mode="browser", servers=[], store=False, on_serving=seen.append)
    try:
        assert seen == [web] and web.app is app
    finally:
        await app.stop()
        await web.stop()

    held = InstanceLock(paths.data_dir)  # another Moka holds the data dir: the core cannot start
    held.acquire()
    try:
        with pytest.raises(InstanceRunningError):
            await start_core(paths, mode="desktop", store=True, on_serving=seen.append)
    finally:
        held.release()
    early = seen[-1]
    assert early is not web
    with pytest.raises(OSError):  # nothing is left listening on the page's port
        socket.create_connection(("127.0.0.1", early.host_port), timeout=5).close()
