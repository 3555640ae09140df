"""Host → view messages are numbered and the newest kept, so a page that missed some gets them again
(reliability finding N2); past the bounds it is told to mount the view again, and a new frame is fed afresh.

Real views of the demo server (in this process) through the Bridge, as the page calls it.
"""

from __future__ import annotations

from typing import Any

import pytest

from moka_shell.bridge import Bridge
from moka_shell.config import ServerConfig
from moka_shell.core.app import MokaApp
from moka_shell.core.views import redelivery
from moka_shell.core.views.redelivery import SentLog
from moka_shell.demo.server import build_server
from moka_shell.paths import Paths
from moka_shell.plugins import PluginHost
from moka_shell.testing import EventRecorder, start_app
from moka_shell.testing.memory import InMemoryTransport
from test_view_lifecycle import ready_view


@pytest.fixture
async def app(paths: Paths):  # type: ignore[no-untyped-def]
    app = await start_app(paths, servers={"moka-demo": ServerConfig(type="memory")}, store=False,
                          plugins=PluginHost(extra=[InMemoryTransport(build_server).plugin()]))
    yield app
    await app.stop()


async def call(bridge: Bridge, method: str, params: dict[str, Any]) -> Any:
    reply = await bridge.handle({"id": 1, "method": method, "params": params}) or {}
    assert "error" not in reply, reply
    return reply["result"]


def test_the_log_keeps_the_newest_within_its_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Numbers go on; what is asked for is given while kept, and None once the oldest asked for went."""
    monkeypatch.setattr(redelivery, "MAX_KEPT", 3)
    log = SentLog()
    for n in range(5):
        assert log.add({"n": n}) == n + 1
    assert log.since(5) == [] and log.since(9) == []
    assert log.since(2) == [[3, {"n": 2}], [4, {"n": 3}], [5, {"n": 4}]]
    assert log.since(1) is None and log.since(-1) is None
    monkeypatch.setattr(redelivery, "KEPT_CHARS", 40)
    log.add({"big": "x" * 100})  # bigger than the whole budget: not kept, so whoever missed it remounts
    assert log.seq == 6 and log.since(5) is None
    log.forget()
    assert log.since(6) == [] and log.add({}) == 7


@pytest.mark.anyio
async def test_a_page_that_missed_messages_is_given_them_in_order(app: MokaApp) -> None:
    posts = EventRecorder("view.post")
    view = await ready_view(app, posts)
    bridge = Bridge(app)
    listed = {v["viewId"]: v for v in (await call(bridge, "views.list", {}))["views"]}
    seen = listed[view.id]["seq"]
    app.view_host.set_input(view, {"sides": 6})
    app.view_host.set_result(view, {"content": [{"type": "text", "text": "4"}]})
    assert [d["seq"] for d in posts.data()][-2:] == [seen + 1, seen + 2]
    got = await call(bridge, "view.missed", {"viewId": view.id, "after": seen})
    assert got["seq"] == seen + 2
    assert [(n, m["method"]) for n, m in got["messages"]] == [
        (seen + 1, "ui/notifications/tool-input"), (seen + 2, "ui/notifications/tool-result")]
    assert (await call(bridge, "view.missed", {"viewId": view.id, "after": seen + 2}))["messages"] == []
    assert (await call(bridge, "view.missed", {"viewId": view.id, "after": "x"}))["remount"] is True


@pytest.mark.anyio
async def test_too_much_missed_means_a_new_frame_fed_afresh(app: MokaApp, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the bound the page remounts; once the new frame says mounted, what comes waits for its handshake."""
    monkeypatch.setattr(redelivery, "MAX_KEPT", 1)
    posts = EventRecorder("view.post")
    view = await ready_view(app, posts)
    bridge = Bridge(app)
    seen = view.sent.seq
    app.view_host.set_input(view, {"sides": 6})
    app.view_host.set_result(view, {"content": [{"type": "text", "text": "4"}]})
    assert (await call(bridge, "view.missed", {"viewId": view.id, "after": seen}))["remount"] is True
    await call(bridge, "view.event", {"viewId": view.id, "kind": "mounted"})
    assert view.state == "ready" and not view.initialized
    before = len(posts.data())
    await app.view_host.dispatcher.handle(view.id, {"jsonrpc": "2.0", "id": 2, "method": "ui/initialize", "params": {
        "protocolVersion": "2026-01-26", "appInfo": {"name": "t", "version": "1"}, "appCapabilities": {}}})
    assert len(posts.data()) == before  # nothing before the new frame's handshake
    await app.view_host.dispatcher.handle(view.id, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
    fed = [d["message"].get("method") for d in posts.data()[before:]]
    assert fed[:2] == ["ui/notifications/tool-input", "ui/notifications/tool-result"]
