"""The view dispatcher, driven as a view would drive it, against real servers (in-process and a child)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from support import server_script
from moka_shell.testing import EventRecorder, RecordingShell, start_app
from moka_shell.config import MokaConfig, ServerConfig
from moka_shell.core.app import MokaApp
from moka_shell.core.views.dispatcher import sanitize_filename
from moka_shell.demo.server import build_server
from moka_shell.paths import Paths
from moka_shell.plugins import PluginHost
from moka_shell.testing.memory import InMemoryTransport

pytestmark = pytest.mark.anyio


class Recorder(EventRecorder):
    """The events the core pushes to front ends, and what each view was sent."""

    def __init__(self, app: MokaApp) -> None:
        super().__init__()
        app.subscribe(self)

    def posts(self, view_id: str) -> list[dict[str, Any]]:
        return [d["message"] for d in self.data("view.post") if d["viewId"] == view_id]

    def methods(self, view_id: str) -> list[str]:
        return [m.get("method", "<response>") for m in self.posts(view_id)]


@pytest.fixture
def shell() -> RecordingShell:
    return RecordingShell()


@pytest.fixture
async def app(paths: Paths, shell: RecordingShell):  # type: ignore[no-untyped-def]
    cmd = server_script("fault_server.py")
    # moka-demo runs in this process (the dispatcher is under test, not the child); fault stays a
    # child process: its tools block and crash.
    config = MokaConfig(mcpServers={"moka-demo": ServerConfig(type="memory"),
                                    "fault": ServerConfig(command=cmd[0], args=cmd[1:])})
    host = PluginHost(extra=[InMemoryTransport(build_server).plugin()])
    app = await start_app(paths, config=config, actions=shell, plugins=host)
    assert all(c.status == "ready" for c in app.servers.connections.values())
    yield app
    await app.stop()


async def init(app: MokaApp, view_id: str, **params: Any) -> dict[str, Any]:
    reply = await app.view_host.dispatcher.handle(view_id, {
        "jsonrpc": "2.0", "id": 0, "method": "ui/initialize",
        "params": {"protocolVersion": "2026-01-26", "appInfo": {"name": "t", "version": "1"},
                   "appCapabilities": params.get("caps", {})}})
    assert reply is not None and reply["id"] == 0
    return reply


async def initialized(app: MokaApp, view_id: str) -> None:
    assert await app.view_host.dispatcher.handle(view_id, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"}) is None


async def call(app: MokaApp, view_id: str, method: str, params: dict[str, Any], rid: int = 1) -> dict[str, Any]:
    reply = await app.view_host.dispatcher.handle(view_id, {"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    assert reply is not None
    return reply


async def test_initialize_result_is_complete_and_null_free(app: MokaApp) -> None:
    """protocolVersion, hostInfo, hostCapabilities and hostContext are all there; no null anywhere."""
    view = await app.view_host.open_view("moka-demo", "roll_dice")
    assert view is not None
    result = (await init(app, view.id))["result"]
    assert result["protocolVersion"] == "2026-01-26" and result["hostInfo"]["name"] == "moka"
    assert result["hostCapabilities"]["sandbox"]["csp"] == {"connectDomains": ["https://api.example.com"]}
    assert result["hostContext"]["toolInfo"]["tool"]["name"] == "roll_dice"
    assert "null" not in json.dumps(result)


async def test_nothing_before_initialized_then_input_before_result(app: MokaApp) -> None:
    """Input and result wait for `initialized`, then go in order; a second handshake replays both."""
    rec = Recorder(app)
    call_id, view, result = await app.view_host.run_tool("moka-demo", "roll_dice", {"count": 2})
    assert view is not None and rec.posts(view.id) == []
    await init(app, view.id)
    app.view_host.theme_changed()  # a context change before initialized is queued too
    assert rec.posts(view.id) == []
    await initialized(app, view.id)
    assert rec.methods(view.id) == ["ui/notifications/tool-input", "ui/notifications/tool-result",
                                    "ui/notifications/host-context-changed"]
    assert rec.posts(view.id)[0]["params"] == {"arguments": {"count": 2}}
    assert rec.posts(view.id)[1]["params"]["structuredContent"]["count"] == 2
    await init(app, view.id)
    await initialized(app, view.id)
    assert rec.methods(view.id)[3:] == ["ui/notifications/tool-input", "ui/notifications/tool-result"]


async def test_failed_call_sends_tool_cancelled_after_input(app: MokaApp) -> None:
    """A tools/call that fails at the protocol level cancels the view with the reason."""
    rec = Recorder(app)
    view = await app.view_host.open_view("fault", "with_view")
    assert view is not None
    await init(app, view.id)
    await initialized(app, view.id)
    app.view_host.set_input(view, {})
    app.view_host.cancel(view, "The tool call failed: boom")
    assert rec.methods(view.id) == ["ui/notifications/tool-input", "ui/notifications/tool-cancelled"]
    assert rec.posts(view.id)[1]["params"] == {"reason": "The tool call failed: boom"}


async def test_tools_call_visibility_and_server_isolation(app: MokaApp) -> None:
    """App-only tools work from the view; model-only, unknown and other servers' tools are JSON-RPC errors."""
    view = await app.view_host.open_view("moka-demo", "roll_dice")
    assert view is not None
    await init(app, view.id)
    await initialized(app, view.id)
    ok = await call(app, view.id, "tools/call", {"name": "reroll_dice", "arguments": {"sides": 6, "count": 1}})
    assert ok["result"]["structuredContent"]["count"] == 1
    model_only = await call(app, view.id, "tools/call", {"name": "summarize_rolls", "arguments": {}})
    assert model_only["error"]["code"] == -32000 and "visibility" in model_only["error"]["message"]
    other_server = await call(app, view.id, "tools/call", {"name": "echo", "arguments": {"text": "x"}})
    assert other_server["error"]["code"] == -32602 and "own server" in other_server["error"]["message"]
    bad_args = await call(app, view.id, "tools/call", {"name": "reroll_dice", "arguments": "no"})
    assert bad_args["error"]["code"] == -32602


async def test_malformed_and_unknown_messages(app: MokaApp) -> None:
    """Non-JSON-RPC is ignored, unknown methods get -32601, notifications never get a reply."""
    view = await app.view_host.open_view("moka-demo", "roll_dice")
    assert view is not None
    handle = app.view_host.dispatcher.handle
    assert await handle(view.id, "a string") is None
    assert await handle(view.id, {"id": 1, "method": "ping"}) is None  # no jsonrpc field
    assert (await handle(view.id, {"jsonrpc": "2.0", "id": 2, "method": "nope/x"}))["error"]["code"] == -32601
    assert (await handle(view.id, {"jsonrpc": "2.0", "id": 3, "method": "ping", "params": []}))["error"]["code"] == -32600
    assert await handle(view.id, {"jsonrpc": "2.0", "method": "nope/notification"}) is None
    assert (await handle(view.id, {"jsonrpc": "2.0", "id": 4, "method": "ping"}))["result"] == {}
    assert await handle("no-such-view", {"jsonrpc": "2.0", "id": 5, "method": "ping"}) is None
    rpc = [e for e in app.inspector.query() if e["channel"] == "ui.rpc" and e.get("view") == view.id]
    assert len(rpc) >= 8  # every message in and every reply out is logged


async def test_model_context_link_and_display_mode(app: MokaApp, shell: RecordingShell) -> None:
    """update-model-context answers exactly {}; links are scheme-checked; display mode returns the mode applied."""
    rec = Recorder(app)
    opened = shell.links
    app.config.consent.open_link = "allow"
    view = await app.view_host.open_view("moka-demo", "open_playground")
    assert view is not None
    await init(app, view.id, caps={"availableDisplayModes": ["inline", "fullscreen"]})
    await initialized(app, view.id)
    ctx = await call(app, view.id, "ui/update-model-context", {"content": [{"type": "text", "text": "3 dice"}]})
    assert ctx["result"] == {}
    assert any(e == "chat.context" and d["summary"] == "3 dice" for e, d in rec)
    bad = await call(app, view.id, "ui/open-link", {"url": "javascript:alert(1)"})
    assert bad["error"]["code"] == -32000 and "Invalid URL" in bad["error"]["message"]
    good = await call(app, view.id, "ui/open-link", {"url": "https://modelcontextprotocol.io"})
    assert good["result"] == {} and opened == ["https://modelcontextprotocol.io/"]  # as browsers write it
    # As the sandbox proxy stamps it after a click in the view (without one, the person is asked).
    full = await call(app, view.id, "ui/request-display-mode", {"mode": "fullscreen", "moka/gesture": True})
    assert full["result"] == {"mode": "fullscreen"}
    changed = [m for m in rec.posts(view.id) if m.get("method") == "ui/notifications/host-context-changed"]
    assert changed[-1]["params"]["displayMode"] == "fullscreen"
    assert set(changed[-1]["params"]["containerDimensions"]) >= {"height"}
    pip = await call(app, view.id, "ui/request-display-mode", {"mode": "pip"})  # not declared by the app
    assert pip["result"] == {"mode": "fullscreen"}


async def test_size_changes_clamped_inline_and_ignored_when_fixed(app: MokaApp) -> None:
    """Inline heights are clamped to 60–1200 px; in fullscreen the reported size is ignored."""
    rec = Recorder(app)
    view = await app.view_host.open_view("moka-demo", "roll_dice")
    assert view is not None
    handle = app.view_host.dispatcher.handle
    for height in (10, 500, 99999):
        await handle(view.id, {"jsonrpc": "2.0", "method": "ui/notifications/size-changed",
                               "params": {"width": 300, "height": height}})
    assert [d["height"] for e, d in rec if e == "view.size"] == [60, 500, 1200]
    app.view_host.set_display_mode(view, "fullscreen")
    await handle(view.id, {"jsonrpc": "2.0", "method": "ui/notifications/size-changed", "params": {"height": 300}})
    assert [d["height"] for e, d in rec if e == "view.size"] == [60, 500, 1200]


async def test_cancelled_notification_cancels_the_proxied_call(app: MokaApp) -> None:
    """notifications/cancelled from the view cancels its in-flight tools/call; no reply is sent."""
    view = await app.view_host.open_view("fault", "with_view")
    assert view is not None
    await init(app, view.id)
    await initialized(app, view.id)
    pending = asyncio.ensure_future(call(app, view.id, "tools/call", {"name": "slow", "arguments": {"seconds": 20}}, 9)) \
        if False else asyncio.ensure_future(app.view_host.dispatcher.handle(
            view.id, {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "slow", "arguments": {"seconds": 20}}}))
    await asyncio.sleep(0.3)
    assert 9 in view.inflight
    await app.view_host.dispatcher.handle(view.id, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                                  "params": {"requestId": 9, "reason": "timeout"}})
    assert await asyncio.wait_for(pending, 5) is None
    assert app.servers.get("fault").status == "ready"


async def test_teardown_waits_briefly_and_goes_ahead(app: MokaApp) -> None:
    """ui/resource-teardown is a request; an unanswered one times out and the view closes anyway."""
    rec = Recorder(app)
    view = await app.view_host.open_view("moka-demo", "roll_dice")
    assert view is not None
    await init(app, view.id)
    await initialized(app, view.id)
    closing = asyncio.ensure_future(app.view_host.close(view, "test"))
    await asyncio.sleep(0.1)
    teardown = [m for m in rec.posts(view.id) if m.get("method") == "ui/resource-teardown"]
    assert teardown and teardown[0]["params"] == {"reason": "test"}
    await app.view_host.dispatcher.handle(view.id, {"jsonrpc": "2.0", "id": teardown[0]["id"], "result": {}})
    await asyncio.wait_for(closing, 5)
    assert view.state == "closed" and ("view.closed", {"viewId": view.id}) in rec


def test_download_filenames_are_sanitised() -> None:
    """The last segment of the URI only: no paths, no control characters."""
    assert sanitize_filename("file:///../../etc/passwd") == "passwd"
    assert sanitize_filename("ui://x/a\\..\\b<c>.txt") == "b_c_.txt"
    assert sanitize_filename("https://x/") == "download"


async def test_denied_link_and_download_answer_is_error_results(app: MokaApp, shell: RecordingShell) -> None:
    """A person's "no" is a result with isError (the MCP Apps schema), not a JSON-RPC error nor the view's fault."""
    rec = Recorder(app)
    app.config.consent.open_link = "deny"
    app.config.consent.download = "deny"
    view = await app.view_host.open_view("moka-demo", "open_playground")
    assert view is not None
    await init(app, view.id)
    await initialized(app, view.id)
    link = await call(app, view.id, "ui/open-link", {"url": "https://modelcontextprotocol.io"})
    assert "error" not in link and link["result"] == {"isError": True} and shell.links == []
    file = {"type": "resource", "resource": {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "hi"}}
    download = await call(app, view.id, "ui/download-file", {"contents": [file]}, rid=2)
    assert "error" not in download and download["result"] == {"isError": True} and shell.downloads == []
    assert not [d for e, d in rec if e == "view.problem"]
    assert view.state != "failed"
    app.config.consent.download = "allow"  # and an allowed one still saves, answering {}
    allowed = await call(app, view.id, "ui/download-file", {"contents": [file]}, rid=3)
    assert allowed["result"] == {} and len(shell.downloads) == 1
