"""Tool-call ids from a model server are data, not keys (findings: truth-and-conformance "Chat", ux row 8).

Some OpenAI-compatible servers send ``call_0`` in every response, some an empty id or none at all;
provider ids are unique within one response at most. The fakes' ``call_ids`` modes send exactly that,
over real HTTP through the official SDKs, against the demo server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from moka_shell.core.app import MokaApp
from moka_shell.paths import Paths
from moka_shell.testing.fake_anthropic import FakeAnthropicServer
from moka_shell.testing.fake_openai import Error, FakeOpenAIServer, Text, ToolCall
from support import stdio, until
from test_chat import demo, make_app

pytestmark = pytest.mark.anyio


def calls_of(app: MokaApp, cid: str) -> list[dict[str, Any]]:
    """Every tool call of a conversation as the store has it, oldest first."""
    assert app.chat is not None
    return [c for m in app.chat.store.messages(cid) for c in m["toolCalls"]]


def wire_pairs(request: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The ids of the assistant's tool calls and of the tool answers in one OpenAI request."""
    asked = [c["id"] for m in request["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    answered = [m["tool_call_id"] for m in request["messages"] if m["role"] == "tool"]
    return asked, answered


@pytest.mark.parametrize("mode", ["reused", "empty", "missing"])
async def test_a_server_with_reused_empty_or_no_ids_works_in_one_conversation_and_across_them(
        paths: Paths, mode: Any) -> None:
    """Two turns in one conversation and one in another all run their tool; the provider's answers pair up."""
    with FakeOpenAIServer(call_ids=mode) as srv:
        for _ in range(3):
            srv.tool_then_reply("roll_dice", {"count": 1}, "Rolled.")
        app, _events = await make_app(paths, srv.base_url)
        try:
            assert app.chat is not None
            first = app.chat.start_turn(None, "roll one die")
            await app.chat.wait(first)
            app.chat.start_turn(first, "and again")
            await app.chat.wait(first)
            other = app.chat.start_turn(None, "roll in a new chat")
            await app.chat.wait(other)
            everything = calls_of(app, first) + calls_of(app, other)
            assert [c["status"] for c in everything] == ["done", "done", "done"], everything
            assert len({c["id"] for c in everything}) == 3, "Moka's own ids are unique"
            for m in app.chat.store.messages(first) + app.chat.store.messages(other):
                assert not m.get("error"), m
        finally:
            await app.stop()
    # Each request after a tool call sends the calls back with answers that name them, never an empty id.
    for request in srv.requests:
        asked, answered = wire_pairs(request)
        assert asked == answered and all(asked), request["messages"]
    if mode == "reused":
        # The provider's own ids go back to it where they tell the calls apart (as it sent them).
        assert wire_pairs(srv.requests[3])[0] == ["call_0", "call_0"]


async def test_two_calls_with_one_id_in_one_response_stay_two_calls(paths: Paths) -> None:
    """A response naming two calls ``call_0``: both run, and the provider is told apart which answer is which."""
    with FakeOpenAIServer() as srv:
        srv.enqueue([ToolCall("roll_dice", {"count": 1}, call_id="call_0"),
                     ToolCall("roll_dice", {"count": 2}, call_id="call_0")], [Text("Both rolled.")])
        app, _events = await make_app(paths, srv.base_url)
        try:
            assert app.chat is not None
            cid = app.chat.start_turn(None, "roll twice")
            await app.chat.wait(cid)
            calls = calls_of(app, cid)
            assert [(c["status"], c["arguments"]) for c in calls] == [("done", {"count": 1}), ("done", {"count": 2})]
        finally:
            await app.stop()
    asked, answered = wire_pairs(srv.requests[1])
    assert asked == answered and len(set(asked)) == 2 and all(asked)


async def test_anthropic_reused_ids(paths: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same for the Anthropic plugin: ``toolu_0`` in every response."""
    pytest.importorskip("moka_anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    with FakeAnthropicServer(call_ids="reused") as srv:
        srv.tool_then_reply("roll_dice", {"count": 1}, "Rolled.")
        srv.tool_then_reply("roll_dice", {"count": 1}, "Rolled again.")
        app, _events = await make_app(paths, srv.base_url, backend="anthropic")
        try:
            assert app.chat is not None
            cid = app.chat.start_turn(None, "roll")
            await app.chat.wait(cid)
            app.chat.start_turn(cid, "again")
            await app.chat.wait(cid)
            assert [c["status"] for c in calls_of(app, cid)] == ["done", "done"]
        finally:
            await app.stop()
    uses = [b["id"] for m in srv.requests[-1]["messages"] if m["role"] == "assistant"
            for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]
    results = [b["tool_use_id"] for m in srv.requests[-1]["messages"] if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"]
    assert uses == results == ["toolu_0", "toolu_0"]


async def test_a_turn_that_fails_mid_call_ends_its_card_and_view_and_says_why(paths: Paths) -> None:
    """The provider fails while the model is still writing a UI tool's arguments: nothing stays "running"."""
    with FakeOpenAIServer() as srv:
        srv.enqueue([ToolCall("roll_dice", {"count": 2}, fragments=3),
                     Error("server", message="The server had an error while processing your request.")])
        app, events = await make_app(paths, srv.base_url)
        try:
            assert app.chat is not None
            cid = app.chat.start_turn(None, "roll")
            await app.chat.wait(cid)
            [call] = calls_of(app, cid)
            assert call["status"] == "error" and "server had an error" in call["error"], call
            last = [d["call"] for e, d in events if e == "chat.tool"][-1]
            assert last["status"] == "error"
            view = app.view_host.views[last["viewId"]]
            assert view.cancelled, "the view is told the call will not run"
            errors = [d for e, d in events if e == "chat.error"]
            assert errors and "server had an error" in errors[-1]["message"]
        finally:
            await app.stop()


async def test_stop_ends_every_call_of_the_turn(paths: Paths) -> None:
    """Stopped during the first of two calls: the second, not yet run, is not left "running" either."""
    with FakeOpenAIServer() as srv:
        srv.enqueue([ToolCall("slow", {"seconds": 30}), ToolCall("roll_dice", {"count": 1})], [Text("x")])
        app, events = await make_app(paths, srv.base_url, servers={"moka-demo": demo(), "fault": stdio("fault_server.py")})
        try:
            assert app.chat is not None
            cid = app.chat.start_turn(None, "sleep then roll")
            # `slow` is not read-only: its card waits for the person, with roll_dice queued behind it.
            await until(lambda: any(d["call"]["status"] == "approval" for e, d in events if e == "chat.tool"))
            app.chat.stop(cid)
            await app.chat.wait(cid)
            assert [c["status"] for c in calls_of(app, cid)] == ["cancelled", "cancelled"]
        finally:
            await app.stop()


def test_moka_chat_against_a_server_that_reuses_ids(tmp_path: Path) -> None:
    """The finding's own reproduction: two `moka chat` runs against a ``call_0`` server both answer."""
    with FakeOpenAIServer(call_ids="reused") as srv:
        srv.tool_then_reply("roll_dice", {"count": 1}, "FIRST done.")
        srv.tool_then_reply("roll_dice", {"count": 2}, "SECOND done.")
        (tmp_path / "config.json").write_text(json.dumps({
            "mcpServers": {"moka-demo": {"command": "moka", "args": ["demo-server"]}},
            "agent": {"backend": "custom", "model": "m", "baseUrls": {"custom": srv.base_url}}}))
        env = {**os.environ, "MOKA_CONFIG": str(tmp_path / "config.json"), "MOKA_DATA_DIR": str(tmp_path / "data")}
        runs = [subprocess.run([sys.executable, "-m", "moka_shell", "chat", "--approve", "all", text],
                               capture_output=True, text=True, env=env, timeout=120)
                for text in ("roll dice 1", "roll dice 2")]
    for run, reply in zip(runs, ("FIRST done.", "SECOND done.")):
        assert run.returncode == 0, run.stderr
        assert f"assistant: {reply}" in run.stdout and "[done]" in run.stdout
        assert "IntegrityError" not in run.stdout + run.stderr
