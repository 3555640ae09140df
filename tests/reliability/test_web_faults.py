"""Moka's own HTTP API refuses oversized bodies with 413 before reading them whole (finding R5.7)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx2
import pytest

from moka_shell.paths import Paths
from moka_shell.shells.core_thread import start_core
from moka_shell.web.sandbox_origin import CSP_REPORT_LIMIT
from moka_shell.web.server import RPC_BODY_LIMIT

pytestmark = pytest.mark.anyio


async def test_big_bodies_get_413_and_the_api_keeps_answering(paths: Paths) -> None:
    """A declared and a chunked (undeclared) body over the limit: 413; small requests still work."""
    app, web = await start_core(paths, mode="browser", servers=[], store=False)
    rpc = f"{web.endpoints.host_origin}/api/rpc"
    headers = {"X-Moka-Token": web.token}
    small = json.dumps({"id": 1, "method": "app.info"}).encode()
    try:
        async with httpx2.AsyncClient(timeout=60) as http:
            declared = await http.post(rpc, content=b" " * (RPC_BODY_LIMIT + 1), headers=headers)
            assert declared.status_code == 413 and "too large" in declared.text

            sent = 0

            async def endless() -> AsyncIterator[bytes]:
                nonlocal sent
                while sent < 4 * RPC_BODY_LIMIT:
                    sent += 1 << 20
                    yield b" " * (1 << 20)

            try:
                chunked = await http.post(rpc, content=endless(), headers=headers)
                assert chunked.status_code == 413
            except httpx2.HTTPError:  # the server may close the socket while we still send: also a refusal
                pass

            ok = await http.post(rpc, content=small, headers=headers)
            assert ok.status_code == 200 and ok.json()["result"]["mode"] == "browser"

            report = f"{web.endpoints.sandbox_origin}/csp-report/nope"
            assert (await http.post(report, content=b"{" * (CSP_REPORT_LIMIT + 1))).status_code == 413
            assert (await http.post(report, content=b'{"csp-report": {}}')).status_code == 204
    finally:
        await app.stop()
        await web.stop()
