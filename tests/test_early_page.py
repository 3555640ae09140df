"""The desktop loads Moka's page while the core is still importing (docs/performance.md §13).

The web server starts before the core: the UI's files are served at once, and what needs the core
(the page's socket, RPC, view documents) waits for it and goes on when it is attached, or is
answered with a refusal when Moka stops first. Real HTTP and WebSocket against a started server.
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import httpx2
import pytest

from moka_shell.core.instance_lock import InstanceLock
from moka_shell.errors import InstanceRunningError
from moka_shell.paths import Paths
from moka_shell.shells.core_thread import start_core
from moka_shell.web.server import WebServer
from support import until
from ws_client import WsClient

pytestmark = pytest.mark.anyio


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


async def test_a_server_waiting_for_its_connection_looks_like_one_connecting(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Until the SDK is imported and the connections are made, servers.list shows each configured
    # server as connecting, with the keys a connection's own info has (the page reads the same fields).
    from support import manager

    from moka_shell.config import ServerConfig
    from moka_shell.core.mcp.servers import starting_info
    from moka_shell.inspector import Inspector

    mgr = manager(Inspector(tmp_path / "inspector"))
    configs = {"on": ServerConfig(command="moka", args=["demo-server"]),
               "off": ServerConfig(command="moka", args=["demo-server"], disabled=True)}
    mgr.expect(configs)
    early = {i["name"]: i for i in mgr.infos()}
    assert {n: i["status"] for n, i in early.items()} == {"on": "connecting", "off": "disabled"}
    mgr.load(configs)
    made = {i["name"]: i for i in mgr.infos()}
    for name in configs:
        assert set(starting_info(name, configs[name])) == set(made[name]), name
        assert early[name]["config"] == made[name]["config"]


async def test_the_desktops_start_answers_the_page_then_connects_its_servers(paths: Paths) -> None:
    # start_core with on_serving (the desktop): the page is answered once the core is open, with the
    # configured server listed as connecting; the server connects after that, on the same core.
    paths.config_file.write_text(json.dumps({"mcpServers": {"moka-demo": {"command": "moka",
                                                                          "args": ["demo-server"]}}}), encoding="utf-8")
    answered: list[Any] = []

    def on_serving(web: WebServer) -> None:
        async def hello_when_attached() -> None:
            client = WsClient()
            assert await client.connect(web.host_port, f"/api/ws?token={web.token}", origin=web.endpoints.host_origin)
            await client.send_text(json.dumps({"id": 1, "method": "servers.list", "params": {}}))
            answered.append((await client.reply(1))["result"])
            await client.close()

        pending.append(asyncio.ensure_future(hello_when_attached()))

    pending: list[asyncio.Future[None]] = []
    app, web = await start_core(paths, mode="desktop", store=True, on_serving=on_serving)
    try:
        await asyncio.wait_for(pending[0], 30)
        assert [s["name"] for s in answered[0]] == ["moka-demo"]
        assert answered[0][0]["status"] in ("connecting", "ready")
        await app.servers.wait_ready(["moka-demo"], timeout=60)
        assert app.servers.get("moka-demo").status == "ready"
    finally:
        await app.stop()
        await web.stop()
