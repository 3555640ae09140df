"""Views let go of their data (finding R5.3): ended views drop input and result after their call, only the
newest ended views are remembered, and a parked view that its conversation stored reads its data back."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import pytest

from support import server_script, until
from moka_shell.config import MokaConfig, ServerConfig
from moka_shell.testing import EventRecorder, start_app

pytestmark = pytest.mark.anyio


def bounds_config() -> MokaConfig:
    cmd = server_script("bounds_server.py")
    return MokaConfig(mcpServers={"bounds": ServerConfig(command=cmd[0], args=cmd[1:]),
                                  "other": ServerConfig(command=cmd[0], args=cmd[1:])})


async def test_many_ui_runs_come_back_to_a_plateau(tmp_path: Path) -> None:
    """30 runs with 1 MB results whose views never mount: after the handshake deadline and the grace,
    no view holds a result, at most max_ended are known, and the traced memory is back near the start."""
    app = await start_app(tmp_path, config=bounds_config(), handshake_timeout=0.2, store=False)
    host = app.view_host
    host.retention.release_after, host.retention.max_ended = 0.05, 10
    try:
        await app.servers.get("bounds").call_tool("big_view", {"mb": 1})  # warm caches before measuring
        gc.collect()
        tracemalloc.start()
        start = tracemalloc.get_traced_memory()[0]
        views = []
        for _ in range(30):
            _cid, view, result = await host.run_tool("bounds", "big_view", {"mb": 1})
            assert view is not None and len(result["content"][0]["text"]) == 1 << 20
            views.append(view)
        await until(lambda: all(v.released for v in views[-10:]) and len(host.views) <= 10)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0] - start
        tracemalloc.stop()
        assert after < 6 * 2**20, after  # 30 MB of results were made after `start`; kept, this fails
        assert all(v.result is None and v.arguments is None and v.state == "failed" for v in views)
        assert set(host.views) <= {v.id for v in views[-10:]}
        assert (await app.servers.get("other").call_tool("ping", {}))["content"][0]["text"] == "pong"
    finally:
        await app.stop()


async def test_a_parked_view_reads_its_stored_data_back_when_mounted_again(tmp_path: Path) -> None:
    """Park a stored view: its result goes from memory; remounted, it gets input and result from the store."""
    posts = EventRecorder("view.post")
    app = await start_app(tmp_path, config=bounds_config(), events=posts)
    host = app.view_host
    host.retention.release_after = 0.05
    try:
        assert app.store is not None
        cid = app.store.create_conversation("stored view")
        view = await host.open_view("bounds", "big_view", conversation_id=cid, record_id="r1")
        assert view is not None
        app.store.add_view("r1", cid, None, "bounds", "big_view", view.resource.uri)
        _c, _v, result = await host.run_tool("bounds", "big_view", {"mb": 0.5}, view=view)
        app.store.update_view("r1", arguments={"mb": 0.5}, result=result)

        async def handshake() -> None:
            for msg in ({"jsonrpc": "2.0", "id": 0, "method": "ui/initialize", "params": {
                    "protocolVersion": "2026-01-26", "appInfo": {"name": "t", "version": "1"}, "appCapabilities": {}}},
                        {"jsonrpc": "2.0", "method": "ui/notifications/initialized"}):
                await host.dispatcher.handle(view.id, msg)

        await handshake()
        await host.close(view, "scrolled out of view", park=True)
        await until(lambda: view.released)
        assert view.result is None and view.arguments is None and view.state == "parked"
        posts.clear()
        host.remount(view)
        assert view.result == result and view.arguments == {"mb": 0.5}
        await handshake()
        methods = [d["message"].get("method") for d in posts.data()]
        assert "ui/notifications/tool-input" in methods and "ui/notifications/tool-result" in methods
        sent = next(d["message"] for d in posts.data() if d["message"].get("method") == "ui/notifications/tool-result")
        assert sent["params"] == result
    finally:
        await app.stop()
