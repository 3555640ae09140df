"""Re-rendering a view after its server restarted (``moka dev``): View.reload and core/views/reload.py.

Real views of the demo server (in this process, twice: one name is reloaded, the other is not),
fed and handshaken through the ViewHost as the page does; what reaches the page is read from the
pushed events.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from moka_shell.config import ServerConfig
from moka_shell.core.app import MokaApp
from moka_shell.core.views.reload import reload_view, reloadable
from moka_shell.core.views.view import View
from moka_shell.demo.server import build_server
from moka_shell.errors import ViewOrderError
from moka_shell.paths import Paths
from moka_shell.plugins import PluginHost
from moka_shell.testing import EventRecorder, start_app
from moka_shell.testing.memory import InMemoryTransport

pytestmark = pytest.mark.anyio
RESULT: dict[str, Any] = {"content": [{"type": "text", "text": "rolled 4"}], "structuredContent": {"value": 4}}


@pytest.fixture
async def app(paths: Paths):  # type: ignore[no-untyped-def]
    app = await start_app(paths, servers={"dev": ServerConfig(type="memory"), "other": ServerConfig(type="memory")},
                          store=False, plugins=PluginHost(extra=[InMemoryTransport(build_server).plugin()]))
    yield app
    await app.stop()


async def handshake(app: MokaApp, view: View) -> None:
    handle = app.view_host.dispatcher.handle
    await handle(view.id, {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {
        "protocolVersion": "2026-01-26", "appInfo": {"name": "t", "version": "1"}, "appCapabilities": {}}})
    await handle(view.id, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})


async def fed_view(app: MokaApp, server: str) -> View:
    view = await app.view_host.open_view(server, "roll_dice")
    assert view is not None
    await handshake(app, view)
    app.view_host.set_input(view, {"sides": 6})
    app.view_host.set_result(view, RESULT)
    return view


def sent(posts: EventRecorder, view: View) -> list[dict[str, Any]]:
    return [d["message"] for d in posts.data("view.post") if d["viewId"] == view.id]


async def test_a_failed_view_keeps_its_data_and_comes_back_with_the_same_input_and_result(app: MokaApp) -> None:
    posts = EventRecorder("view.post", "view.created")
    app.subscribe(posts)
    host = app.view_host
    host.retention.keep_failed("dev")
    host.retention.release_after = 0.01
    kept, control = await fed_view(app, "dev"), await fed_view(app, "other")
    # A broken edit's HTML never finished its handshake: both fail; only the dev server's keep their data.
    host.fail(kept, "the view did not finish the MCP Apps handshake")
    host.fail(control, "the view did not finish the MCP Apps handshake")
    for _ in range(500):
        if control.released:
            break
        await asyncio.sleep(0.01)
    assert control.released and not kept.released and kept.result == RESULT

    old_key = kept.key
    await app.servers.get("dev").restart()
    assert await app.servers.get("dev").wait_ready(30)
    assert reloadable(host, "dev") == [kept]
    assert await reload_view(host, kept) is None
    assert (kept.state, kept.failure, kept.initialized) == ("loading", None, False) and kept.key != old_key
    announced = [d for d in posts.data("view.created") if d["viewId"] == kept.id]
    assert announced[-1]["state"] == "loading" and kept.key in announced[-1]["proxyUrl"]
    before = len(sent(posts, kept))
    await handshake(app, kept)
    replayed = sent(posts, kept)[before:]
    assert [m["method"] for m in replayed] == ["ui/notifications/tool-input", "ui/notifications/tool-result"]
    assert replayed[0]["params"] == {"arguments": {"sides": 6}} and replayed[1]["params"] == RESULT
    assert kept.state == "ready"


async def test_reload_is_refused_for_a_closed_view_and_only_swaps_a_parked_ones_resource(app: MokaApp) -> None:
    host = app.view_host
    closed, parked = await fed_view(app, "dev"), await fed_view(app, "dev")
    await host.close(closed, "closed by the person")
    with pytest.raises(ViewOrderError, match="nothing to reload"):
        closed.reload(closed.resource, closed.policy, closed.tool)
    assert reloadable(host, "dev") == [parked]
    await host.close(parked, "scrolled out of view", park=True)
    key = parked.key
    assert await reload_view(host, parked) is None
    assert parked.state == "parked" and parked.key == key  # mounted again later, with the new resource
