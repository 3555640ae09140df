"""Loopback hygiene (finding S12): Host and Origin checks, frame-ancestors, body limits.

A DNS-rebinding page talks to 127.0.0.1 under its own name, so its requests carry that name in
Host. Real HTTP and a real WebSocket client against Moka's two origins.
"""

from __future__ import annotations

import json

import httpx2
import pytest

from moka_shell.paths import Paths
from moka_shell.shells.core_thread import start_core
from ws_client import WsClient

pytestmark = pytest.mark.anyio


async def test_foreign_host_and_origin_are_refused(paths: Paths) -> None:
    app, web = await start_core(paths, mode="browser", servers=[], store=False)
    host, sandbox = web.endpoints.host_origin, web.endpoints.sandbox_origin
    rpc = json.dumps({"id": 1, "method": "app.info"}).encode()
    token = {"X-Moka-Token": web.token}
    try:
        async with httpx2.AsyncClient(timeout=30) as http:
            for url in (f"{host}/", f"{host}/static/js/api.js", f"{sandbox}/proxy.html"):
                assert (await http.get(url, headers={"Host": "evil.example"})).status_code == 421, url
                assert (await http.get(url, headers={"Host": f"evil.example:{web.host_port}"})).status_code == 421
            bad = await http.post(f"{host}/api/rpc", content=rpc, headers={**token, "Host": "evil.example"})
            assert bad.status_code == 421 and "Host" in bad.text
            for name in (f"127.0.0.1:{web.host_port}", f"localhost:{web.host_port}"):
                ok = await http.post(f"{host}/api/rpc", content=rpc, headers={**token, "Host": name})
                assert ok.status_code == 200, name
            index = await http.get(f"{host}/")
            assert "frame-ancestors 'none'" in index.headers["content-security-policy"]
            proxy = await http.get(f"{sandbox}/proxy.html")
            assert f"frame-ancestors http://127.0.0.1:{web.host_port}" in proxy.headers["content-security-policy"]
        path = f"/api/ws?token={web.token}"
        rebound = WsClient()
        assert not await rebound.connect(web.host_port, path, host="evil.example")
        foreign = WsClient()
        assert not await foreign.connect(web.host_port, path, origin="http://evil.example")
        other_port = WsClient()
        assert not await other_port.connect(web.host_port, path, origin=sandbox)  # the sandbox is not Moka's page
        page = WsClient()
        assert await page.connect(web.host_port, path, origin=host)
        await page.send_text(json.dumps({"id": 1, "method": "app.info"}))
        assert "result" in await page.reply(1)
        await page.close()
        script = WsClient()  # scripts send no Origin: the token alone decides
        assert await script.connect(web.host_port, path)
        await script.close()
    finally:
        await app.stop()
        await web.stop()
