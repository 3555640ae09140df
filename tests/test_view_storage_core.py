"""View storage in the core: scoped per server and per view, in the real SQLite store, bounded.

Driven through the dispatcher as the prelude drives it (a `moka/storage` notification) against
the demo server running in this process twice, under two names.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from moka_shell.config import MokaConfig, ServerConfig
from moka_shell.core.app import MokaApp
from moka_shell.core.views.storage import QUOTA
from moka_shell.core.views.storage_prelude import script_json
from moka_shell.demo.server import build_server
from moka_shell.paths import Paths
from moka_shell.plugins import PluginHost
from moka_shell.testing import RecordingShell, start_app
from moka_shell.testing.memory import InMemoryTransport

pytestmark = pytest.mark.anyio


async def started(paths: Paths) -> MokaApp:
    config = MokaConfig(mcpServers={"a": ServerConfig(type="memory"), "b": ServerConfig(type="memory")})
    app = await start_app(paths, config=config, actions=RecordingShell(),
                          plugins=PluginHost(extra=[InMemoryTransport(build_server).plugin()]))
    return app


async def storage_msg(app: MokaApp, view_id: str, area: str, *ops: dict[str, Any]) -> None:
    reply = await app.view_host.dispatcher.handle(view_id, {"jsonrpc": "2.0", "method": "moka/storage",
                                                            "params": {"area": area, "ops": list(ops)}})
    assert reply is None  # a notification: never answered, never forwarded


def boot_of(app: MokaApp, view: Any) -> dict[str, Any]:
    """The snapshot embedded in the view's document, parsed back out of the HTML."""
    html, _ = app.view_host.document(view.id, view.key)
    match = re.search(r"var B=(\{.*?\}),P=window\.parent", html, re.S)
    assert match, "the storage prelude is in the document"
    return json.loads(match.group(1))  # type: ignore[no-any-return]


async def test_scoped_persisted_and_gone_with_the_conversation(paths: Paths) -> None:
    app = await started(paths)
    try:
        host = app.view_host
        v1 = await host.open_view("a", "roll_dice")
        v2 = await host.open_view("b", "roll_dice")
        assert v1 is not None and v2 is not None
        tricky = "</script><script>alert(1)</script>\u2028\ud800"  # a lone surrogate, as JS strings allow
        await storage_msg(app, v1.id, "local", {"op": "set", "key": "k", "value": tricky},
                          {"op": "set", "key": "n", "value": "1"}, {"op": "remove", "key": "n"})
        await storage_msg(app, v1.id, "session", {"op": "set", "key": "s", "value": "mine"})
        html, _ = host.document(v1.id, v1.key)
        assert "</script><script>alert" not in html and "\u2028" not in html  # escaped for the <script>
        assert boot_of(app, v1)["local"] == [["k", tricky]]
        assert boot_of(app, v1)["session"] == [["s", "mine"]]
        assert boot_of(app, v2)["local"] == [] and boot_of(app, v2)["session"] == []  # server b sees none of a's
        v3 = await host.open_view("a", "roll_dice")
        assert v3 is not None
        assert boot_of(app, v3)["local"] == [["k", tricky]] and boot_of(app, v3)["session"] == []  # its own session
        # a batch that would go over the quota changes nothing, and the view gets the stored items back
        await storage_msg(app, v1.id, "local", {"op": "set", "key": "k", "value": "changed"},
                          {"op": "set", "key": "big", "value": "x" * QUOTA})
        assert boot_of(app, v1)["local"] == [["k", tricky]]
        assert not v1.problems  # a refused write is not the view's fault
        # a stored view's sessionStorage goes with its conversation
        assert app.store is not None
        cid = app.store.create_conversation("t")
        app.store.add_view("rec1", cid, "call1", "a", "roll_dice", v1.resource.uri)
        v1.record_id = "rec1"
        await storage_msg(app, v1.id, "session", {"op": "set", "key": "kept", "value": "yes"})
        assert app.view_host.storage.areas.usage("a")["sessionItems"] == 2
        app.store.delete(cid)
        assert app.view_host.storage.areas.usage("a")["sessionItems"] == 1  # only the unrecorded view's
        await host.close(v3, "closed")  # an unrecorded view's sessionStorage ends with it
        await host.close(v2, "closed")
        assert app.view_host.storage.areas.usage("a")["localItems"] == 1
    finally:
        await app.stop()
    app2 = await started(paths)  # a restart: localStorage is still there
    try:
        assert app2.view_host.storage.areas.usage("a")["localItems"] == 1
        assert app2.view_host.storage.areas.usage("a")["sessionItems"] == 0  # crash leftovers of unrecorded views
    finally:
        await app2.stop()


async def test_rate_and_batch_bounds(paths: Paths) -> None:
    app = await started(paths)
    try:
        view = await app.view_host.open_view("a", "roll_dice")
        assert view is not None
        await storage_msg(app, view.id, "local", *({"op": "set", "key": f"k{i}", "value": "v"} for i in range(501)))
        assert app.view_host.storage.areas.usage("a")["localItems"] == 0  # over the batch limit
        app.view_host.storage.areas.rate = (200, 3600.0)  # the default count, over an hour: no clock in the test
        for i in range(260):
            await storage_msg(app, view.id, "local", {"op": "set", "key": f"r{i}", "value": "v"})
        assert app.view_host.storage.areas.usage("a")["localItems"] == 200  # the rest came too fast
        refusals = [e for e in app.inspector.query(limit=10000) if e["message"].get("event") == "storage-refused"]
        assert refusals and not view.problems
    finally:
        await app.stop()


def test_script_json_is_inert_in_html() -> None:
    text = script_json({"v": "</script><!--<script>&\u2028\u2029\udfff"})
    assert not re.search(r"[<>&\u2028\u2029\ud800-\udfff]", text)
    assert json.loads(text) == {"v": "</script><!--<script>&\u2028\u2029\udfff"}
