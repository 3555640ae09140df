"""The agent loop against fake providers over real HTTP (official SDKs) and real MCP servers."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from moka_shell.config import MokaConfig, ServerConfig
from moka_shell.core.app import MokaApp
from moka_shell.errors import ToolCallError
from moka_shell.demo.server import build_server
from moka_shell.paths import Paths
from moka_shell.plugins import PluginHost
from moka_shell.testing import EventRecorder, start_app
from moka_shell.testing.fake_anthropic import FakeAnthropicServer
from moka_shell.core.chat.partial_json import repair_partial_json
from moka_shell.testing.fake_openai import Error, FakeOpenAIServer, Hold, Text, ToolCall
from moka_shell.testing.memory import InMemoryTransport
from support import until

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parent.parent


def demo() -> ServerConfig:
    # The demo server in this process: the chat is under test here, not the child process. Trusted as
    # Moka's own demo is, so its read-only tools run unasked (tests/test_approval.py tests trust itself).
    return ServerConfig(type="memory", trustAnnotations=True)


def plugins() -> PluginHost:
    """Installed plugins (moka-anthropic among them) plus the in-memory transport to the demo server."""
    return PluginHost(extra=[InMemoryTransport(build_server).plugin()])


async def make_app(paths: Paths, base_url: str, *, backend: str = "ollama", servers: dict[str, ServerConfig] | None = None,
                   ) -> tuple[MokaApp, list[tuple[str, Any]]]:
    config = MokaConfig(mcpServers=servers or {"moka-demo": demo()})
    config.agent.backend = backend
    config.agent.model = "fake-model"
    config.agent.base_urls = {backend: base_url}
    events = EventRecorder()
    app = await start_app(paths, config=config, plugins=plugins(), events=events)
    return app, events


async def test_multi_step_tool_loop_and_what_the_provider_saw(paths: Paths) -> None:
    """The model calls roll_dice, gets the result, answers; app-only tools never reach the provider."""
    with FakeOpenAIServer() as srv:
        srv.tool_then_reply("roll_dice", {"sides": 6, "count": 3}, "You rolled well.", fragments=6)
        app, events = await make_app(paths, srv.base_url)
        try:
            cid = app.chat.start_turn(None, "roll three dice")
            await app.chat.wait(cid)
            messages = app.store.messages(cid)
        finally:
            await app.stop()
    offered = [t["function"]["name"] for t in srv.requests[0]["tools"]]
    assert "roll_dice" in offered and "summarize_rolls" in offered
    assert "reroll_dice" not in offered and "dice_history" not in offered  # visibility ["app"]
    tool_msg = [m for m in srv.requests[1]["messages"] if m["role"] == "tool"][0]
    assert tool_msg["content"].startswith("Rolled 3d6:")  # the model gets content, not structuredContent
    assert [m["role"] for m in messages] == ["user", "assistant", "assistant"]
    call = messages[1]["toolCalls"][0]
    assert call["status"] == "done" and call["arguments"] == {"sides": 6, "count": 3}
    assert call["result"]["structuredContent"]["count"] == 3 and call.get("recordId")
    assert messages[2]["content"] == "You rolled well."
    assert any(e == "chat.delta" for e, _ in events) and ("chat.done", {"conversationId": cid}) in events


async def test_streamed_arguments_reach_the_view_as_partials(paths: Paths) -> None:
    """The view is mounted when the call starts and gets tool-input-partial before tool-input."""
    with FakeOpenAIServer() as srv:
        srv.enqueue([[ToolCall("roll_dice", {"sides": 20, "count": 4}, fragments=12, delay=0.08)], [Text("done")]])
        app, events = await make_app(paths, srv.base_url)
        try:
            cid = app.chat.start_turn(None, "roll")
            view_id = None
            for _ in range(200):  # act as the view: handshake as soon as it is created
                created = [d for e, d in events if e == "view.created"]
                if created:
                    view_id = created[0]["viewId"]
                    break
                await asyncio.sleep(0.01)
            assert view_id
            d = app.view_host.dispatcher
            await d.handle(view_id, {"jsonrpc": "2.0", "id": 0, "method": "ui/initialize", "params": {
                "protocolVersion": "2026-01-26", "appInfo": {"name": "t", "version": "1"}, "appCapabilities": {}}})
            await d.handle(view_id, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
            await app.chat.wait(cid)
        finally:
            await app.stop()
    posts = [d["message"] for e, d in events if e == "view.post" and d["viewId"] == view_id]
    methods = [m["method"] for m in posts]
    assert "ui/notifications/tool-input-partial" in methods
    first_input = methods.index("ui/notifications/tool-input")
    assert all(m == "ui/notifications/tool-input-partial" for m in methods[:first_input])
    assert methods[first_input + 1] == "ui/notifications/tool-result"
    partials = [m["params"]["arguments"] for m in posts[:first_input]]
    assert all(set(p) <= {"sides", "count"} for p in partials)


async def test_a_view_that_handshakes_late_gets_the_newest_partial_first(paths: Paths) -> None:
    """Fragments that came before the view listened are not lost: its handshake brings the newest ones (V3)."""
    call = ToolCall("roll_dice", {"sides": 20, "count": 4}, fragments=12, hold=Hold(after=7))
    assert call.hold is not None
    want = repair_partial_json("".join(call.pieces()[:7]))
    with FakeOpenAIServer() as srv:
        srv.enqueue([[call], [Text("done")]])
        app, events = await make_app(paths, srv.base_url)
        try:
            cid = app.chat.start_turn(None, "roll")
            assert await asyncio.to_thread(call.hold.reached.wait, 30)
            view = await until(lambda: next(iter(app.view_host.views.values()), None), "the view")
            await until(lambda: view.partial == want, "the newest partial kept for the view")
            d = app.view_host.dispatcher
            await d.handle(view.id, {"jsonrpc": "2.0", "id": 0, "method": "ui/initialize", "params": {
                "protocolVersion": "2026-01-26", "appInfo": {"name": "t", "version": "1"}, "appCapabilities": {}}})
            await d.handle(view.id, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
        finally:
            call.hold.release.set()
        try:
            await app.chat.wait(cid)
        finally:
            await app.stop()
    posts = [d["message"] for e, d in events if e == "view.post" and d["viewId"] == view.id]
    assert posts[0] == {"jsonrpc": "2.0", "method": "ui/notifications/tool-input-partial", "params": {"arguments": want}}
    methods = [m["method"] for m in posts]
    first_input = methods.index("ui/notifications/tool-input")
    assert set(methods[:first_input]) == {"ui/notifications/tool-input-partial"}
    # The last partial is the whole input: the throttle never leaves the view behind the model.
    assert posts[first_input - 1]["params"]["arguments"] == {"sides": 20, "count": 4}


async def test_name_collisions_are_prefixed_and_mapped_back(paths: Paths) -> None:
    """Two servers with the same tool names: prefixed for the model, routed to the right server."""
    servers = {"left": demo(), "right": demo()}
    with FakeOpenAIServer() as srv:
        srv.tool_then_reply("right__roll_dice", {"count": 2}, "ok")
        app, events = await make_app(paths, srv.base_url, servers=servers)
        try:
            cid = app.chat.start_turn(None, "roll on the right")
            await app.chat.wait(cid)
            call = app.store.messages(cid)[1]["toolCalls"][0]
        finally:
            await app.stop()
    offered = {t["function"]["name"] for t in srv.requests[0]["tools"]}
    assert {"left__roll_dice", "right__roll_dice"} <= offered and "roll_dice" not in offered
    assert call["server"] == "right" and call["tool"] == "roll_dice" and call["status"] == "done"


@pytest.mark.parametrize(("kind", "words"), [("auth", "key"), ("rate_limit", "rate"), ("context_length", "context")])
async def test_provider_errors_appear_in_the_conversation(paths: Paths, kind: str, words: str) -> None:
    """A provider error becomes a clear message in place; the conversation and the user's text are kept."""
    with FakeOpenAIServer() as srv:
        srv.enqueue([[Error(kind)]])
        app, events = await make_app(paths, srv.base_url)
        app.backends["ollama"].obj.max_retries = 0  # the SDK would retry 429s with backoff
        try:
            cid = app.chat.start_turn(None, "hello there")
            await app.chat.wait(cid)
            messages = app.store.messages(cid)
        finally:
            await app.stop()
    errors = [d for e, d in events if e == "chat.error"]
    assert errors and words in errors[0]["message"].lower()
    assert messages[0]["content"] == "hello there" and words in messages[-1]["error"].lower()


async def test_stop_cancels_the_tool_call_and_the_view_is_told(paths: Paths) -> None:
    """Stop during a tool call: the call is cancelled and its view gets tool-cancelled."""
    fault = [sys.executable, str(ROOT / "tests" / "servers" / "fault_server.py")]
    servers = {"fault": ServerConfig(command=fault[0], args=fault[1:], trustAnnotations=True)}  # its read-only view runs
    with FakeOpenAIServer() as srv:
        srv.enqueue([[ToolCall("with_view", {})], [Text("never")]])
        app, events = await make_app(paths, srv.base_url, servers=servers)
        conn = app.servers.get("fault")
        original = conn.call_tool

        async def slow_call(name: str, arguments: Any, **kw: Any) -> Any:
            return await original("slow", {"seconds": 30})

        conn.call_tool = slow_call  # type: ignore[method-assign]  # the view's tool now takes 30 s
        try:
            cid = app.chat.start_turn(None, "go")
            for _ in range(300):
                if any(e == "view.created" for e, _ in events):
                    break
                await asyncio.sleep(0.01)
            view_id = [d for e, d in events if e == "view.created"][0]["viewId"]
            d = app.view_host.dispatcher
            await d.handle(view_id, {"jsonrpc": "2.0", "id": 0, "method": "ui/initialize", "params": {
                "protocolVersion": "2026-01-26", "appInfo": {"name": "t", "version": "1"}, "appCapabilities": {}}})
            await d.handle(view_id, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
            await asyncio.sleep(0.5)
            app.chat.stop(cid)
            await app.chat.wait(cid)
            call = app.store.messages(cid)[1]["toolCalls"][0]
        finally:
            await app.stop()
    posts = [d["message"]["method"] for e, d in events if e == "view.post" and d["viewId"] == view_id
             and "tool-" in d["message"].get("method", "")]
    assert posts == ["ui/notifications/tool-input", "ui/notifications/tool-cancelled"]
    assert call["status"] == "cancelled"
    assert any(e == "chat.error" and d["kind"] == "stopped" for e, d in events)


async def test_broken_streamed_arguments_do_not_run_the_tool(paths: Paths) -> None:
    """Arguments that are not valid JSON are reported to the model as an error; the tool does not run."""
    with FakeOpenAIServer() as srv:
        srv.enqueue([[ToolCall("roll_dice", raw_arguments='{"sides": 6, "cou')], [Text("sorry")]])
        app, _events = await make_app(paths, srv.base_url)
        try:
            cid = app.chat.start_turn(None, "roll")
            await app.chat.wait(cid)
            call = app.store.messages(cid)[1]["toolCalls"][0]
        finally:
            await app.stop()
    assert call["status"] == "error" and "not valid JSON" in call["error"]
    tool_msg = [m for m in srv.requests[1]["messages"] if m["role"] == "tool"][0]
    assert "not valid JSON" in tool_msg["content"]


async def test_model_context_goes_with_the_next_turn(paths: Paths) -> None:
    """ui/update-model-context: the last update per view is in the next request the provider receives."""
    with FakeOpenAIServer() as srv:
        srv.enqueue([[Text("noted")]])
        app, _events = await make_app(paths, srv.base_url)
        try:
            _cid, view, _r = await app.view_host.run_tool("moka-demo", "roll_dice", {})
            assert view is not None
            d = app.view_host.dispatcher
            for text in ("first", "second"):
                await d.handle(view.id, {"jsonrpc": "2.0", "id": 5, "method": "ui/update-model-context",
                                         "params": {"content": [{"type": "text", "text": f"dice are {text}"}]}})
            cid = app.chat.start_turn(None, "what do you see?")
            await app.chat.wait(cid)
        finally:
            await app.stop()
    user = [m for m in srv.requests[0]["messages"] if m["role"] == "user"][-1]["content"]
    text = user if isinstance(user, str) else json.dumps(user)
    assert "dice are second" in text and "dice are first" not in text and "what do you see?" in text
    # marked as the app's and quoted, so it cannot pass for the person's words (security review row 29)
    assert '> dice are second' in text and "not from the person" in text


async def test_no_backend_says_how_to_add_one(paths: Paths) -> None:
    """With no backend the turn ends with the exact help; the Tool runner still works."""
    config = MokaConfig(mcpServers={"moka-demo": demo()})
    events = EventRecorder()
    app = await start_app(paths, config=config, plugins=plugins(), events=events, endpoints=None)
    try:
        cid = app.chat.start_turn(None, "hi")
        await app.chat.wait(cid)
        _c, _v, result = await app.view_host.run_tool("moka-demo", "roll_dice", {}, with_view=False)
    finally:
        await app.stop()
    err = [d for e, d in events if e == "chat.error"][0]["message"]
    assert "Settings" in err and "OPENAI_API_KEY" in err and "ollama" in err.lower()
    assert result["structuredContent"]["count"] == 1


async def test_anthropic_plugin_runs_the_same_loop(paths: Paths) -> None:
    """The first-party Anthropic plugin (entry point) drives the same loop over the Messages format."""
    pytest.importorskip("moka_anthropic")
    with FakeAnthropicServer() as srv:
        srv.tool_then_reply("roll_dice", {"sides": 8, "count": 2}, "Two d8s.")
        os.environ["ANTHROPIC_API_KEY"] = "sk-ant-test"
        try:
            app, _events = await make_app(paths, srv.base_url, backend="anthropic")
            try:
                assert "anthropic" in app.backends
                cid = app.chat.start_turn(None, "roll two d8")
                await app.chat.wait(cid)
                messages = app.store.messages(cid)
            finally:
                await app.stop()
        finally:
            del os.environ["ANTHROPIC_API_KEY"]
    assert messages[1]["toolCalls"][0]["result"]["structuredContent"]["sides"] == 8
    assert messages[-1]["content"] == "Two d8s."
    names = [t["name"] for t in srv.requests[0]["tools"]]
    assert "roll_dice" in names and "reroll_dice" not in names
    assert "sk-ant-test" not in json.dumps(app.inspector.query(limit=100000))  # keys never reach the inspector


@pytest.mark.parametrize("policy", ["allow", "deny"])
async def test_server_sampling_needs_consent(paths: Paths, policy: str) -> None:
    """sampling/createMessage from an MCP server reaches the backend only when the person allows it."""
    fault = [sys.executable, str(ROOT / "tests" / "servers" / "fault_server.py")]
    with FakeOpenAIServer() as srv:
        srv.enqueue([[Text("forty-two")]])
        app, _events = await make_app(paths, srv.base_url, servers={"fault": ServerConfig(command=fault[0], args=fault[1:])})
        app.config.consent.sampling = policy  # type: ignore[assignment]
        try:
            if policy == "allow":
                result = await app.servers.get("fault").call_tool("ask_model", {"question": "meaning of life?"})
                assert result["content"][0]["text"] == "the model said: forty-two"
                assert srv.requests[0]["messages"][-1]["content"] == "meaning of life?"
            else:
                with pytest.raises(ToolCallError, match="did not allow 'fault' to use the model"):
                    await app.servers.get("fault").call_tool("ask_model", {"question": "meaning of life?"})
                assert not srv.requests  # nothing reached the provider
        finally:
            await app.stop()


class _CrashingBackend:
    """A backend plugin with a bug: it starts a tool call, then fails with an error of its own making."""

    from moka_shell import hookimpl as _hookimpl

    @_hookimpl
    def register_agent_backends(self, register: Any) -> None:
        from moka_shell import BaseBackend, ToolCallStart

        class Crashing(BaseBackend):
            backend_id = "crashing"
            default_model = "crash-1"

            async def stream(self, request: Any) -> Any:
                yield ToolCallStart(call_id="c1", name="roll_dice")
                raise KeyError("choices")  # a provider's reply the plugin did not expect

        register(Crashing())


async def test_a_backend_bug_ends_the_turn_in_words_with_no_python_error(paths: Paths) -> None:
    """A fault Moka did not foresee ends every card the turn started and says why in words; the
    exception's type and text go to the Inspector (and the log), never to the person."""
    config = MokaConfig(mcpServers={"moka-demo": demo()})
    config.agent.backend = "crashing"
    events = EventRecorder()
    host = PluginHost(extra=[InMemoryTransport(build_server).plugin(), _CrashingBackend()])
    app = await start_app(paths, config=config, plugins=host, events=events)
    try:
        cid = app.chat.start_turn(None, "roll")
        await app.chat.wait(cid)
        messages = app.store.messages(cid)
        logged = [e for e in app.inspector.query(limit=500) if e.get("method") == "agent/error"]
    finally:
        await app.stop()
    said = [d["message"] for e, d in events if e == "chat.error"]
    assert said and "KeyError" not in said[0] and "'choices'" not in said[0], said
    assert "conversation is kept" in said[0] and "Inspector" in said[0]
    assert "KeyError" not in (messages[-1].get("error") or "")
    cards = [c for m in messages for c in m.get("toolCalls", [])]
    assert cards and all(c["status"] == "error" for c in cards), cards  # no card left "running"
    assert any("KeyError" in str(d) for d in logged), logged
