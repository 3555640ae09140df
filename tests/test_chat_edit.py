"""Edit and resend, regenerate, and replies cut off by kill -9 (marked interrupted, with Continue).

Real parts: the fake OpenAI server through the SDK, the real Bridge and SQLite, and for the crash a
child process killed with SIGKILL mid-reply (tests/servers/chat_crash_child.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from moka_shell.bridge import Bridge
from moka_shell.config import MokaConfig
from moka_shell.core.app import MokaApp
from moka_shell.paths import Paths
from moka_shell.testing import EventRecorder, start_app
from moka_shell.testing.fake_openai import FakeOpenAIServer, Text, ToolCall

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parent.parent


async def start(paths: Paths, base_url: str) -> tuple[MokaApp, Bridge, list[tuple[str, Any]]]:
    config = MokaConfig(mcpServers={})
    config.agent.backend, config.agent.model = "ollama", "fake-model"
    config.agent.base_urls = {"ollama": base_url}
    events = EventRecorder()
    app = await start_app(paths, config=config, events=events)
    return app, Bridge(app), events


async def call(bridge: Bridge, method: str, **params: Any) -> Any:
    reply = await bridge.handle({"id": 1, "method": method, "params": params})
    if "error" in reply:
        raise AssertionError(reply["error"])
    return reply["result"]


async def test_edit_and_resend_replaces_the_later_turns(paths: Paths) -> None:
    """Editing the first message drops everything after it and answers the new text; the model reads only it."""
    with FakeOpenAIServer() as srv:
        srv.enqueue([Text("one")], [Text("two")], [Text("edited answer")])
        app, bridge, events = await start(paths, srv.base_url)
        try:
            cid = (await call(bridge, "chat.send", text="first question"))["conversationId"]
            await app.chat.wait(cid)
            await call(bridge, "chat.send", conversationId=cid, text="second question")
            await app.chat.wait(cid)
            first = app.store.messages(cid)[0]
            reply = app.store.messages(cid)[1]
            not_mine = await bridge.handle({"id": 2, "method": "chat.edit", "params": {
                "conversationId": cid, "messageId": reply["id"], "text": "x"}})
            removed = (await call(bridge, "chat.edit", conversationId=cid, messageId=first["id"],
                                  text="first question, better"))["removed"]
            await app.chat.wait(cid)
            messages = app.store.messages(cid)
        finally:
            await app.stop()
    assert "only your own messages" in not_mine["error"]["message"]
    assert removed == 3
    assert [(m["role"], m["content"]) for m in messages] == [("user", "first question, better"),
                                                             ("assistant", "edited answer")]
    assert messages[0]["id"] == first["id"]  # the same message, edited
    assert [m["content"] for m in srv.requests[2]["messages"]] == ["first question, better"]
    assert ("chat.truncated", {"conversationId": cid, "afterMessageId": first["id"]}) in events


async def test_regenerate_asks_again_for_the_last_answer(paths: Paths) -> None:
    """Regenerate drops the last answer (and its tool calls) and the model is asked the same again."""
    with FakeOpenAIServer() as srv:
        srv.enqueue([Text("hello")], [Text("first try")], [Text("second try")])
        app, bridge, _ = await start(paths, srv.base_url)
        try:
            empty = app.store.create_conversation("empty")
            nothing = await bridge.handle({"id": 2, "method": "chat.regenerate", "params": {"conversationId": empty}})
            cid = (await call(bridge, "chat.send", text="hi"))["conversationId"]
            await app.chat.wait(cid)
            await call(bridge, "chat.send", conversationId=cid, text="tell me a joke")
            await app.chat.wait(cid)
            await call(bridge, "chat.regenerate", conversationId=cid)
            await app.chat.wait(cid)
            messages = app.store.messages(cid)
        finally:
            await app.stop()
    assert "no message to answer" in nothing["error"]["message"]
    assert [m["content"] for m in messages] == ["hi", "hello", "tell me a joke", "second try"]
    assert srv.requests[1]["messages"] == srv.requests[2]["messages"]  # the same question, asked again


async def test_a_reply_cut_off_by_kill_9_is_interrupted_and_can_continue(tmp_path: Path) -> None:
    """kill -9 mid-reply: on reopen the reply is marked interrupted; Continue runs a new step after it."""
    words = [f"word{i} " for i in range(400)]
    with FakeOpenAIServer() as srv:
        srv.enqueue([[Text("Here goes. "), ToolCall("roll_dice", {"sides": 6, "count": 2}, fragments=3)],
                     [Text(w, delay=0.02) for w in words]])
        child = subprocess.Popen([sys.executable, str(ROOT / "tests" / "servers" / "chat_crash_child.py"),
                                  str(tmp_path), srv.base_url], stdout=subprocess.PIPE, text=True)
        shown = 0
        try:
            assert child.stdout is not None
            deadline = time.monotonic() + 60
            for line in child.stdout:
                ev = json.loads(line)
                if ev["event"] == "chat.delta" and ev["data"]["text"].startswith("word"):
                    shown += 1
                if shown > 20 or time.monotonic() > deadline:
                    break
        finally:
            os.kill(child.pid, signal.SIGKILL)
            child.wait(10)
        assert shown > 20
        srv.enqueue([Text("…and that is the end.")])
        paths = Paths(tmp_path / "config.json", tmp_path)
        app, bridge, _ = await start(paths, srv.base_url)
        try:
            [conv] = await call(bridge, "conversations.list")
            before = (await call(bridge, "conversations.get", id=conv["id"]))["messages"]
            await call(bridge, "chat.continue", conversationId=conv["id"])
            await app.chat.wait(conv["id"])
            after = (await call(bridge, "conversations.get", id=conv["id"]))["messages"]
        finally:
            await app.stop()
    cut = before[-1]
    assert cut["role"] == "assistant" and cut["interrupted"] is True and cut["content"].startswith("word0 ")
    assert not any(m.get("interrupted") for m in before[:-1])  # finished replies are not marked
    assert [m["role"] for m in after] == ["user", "assistant", "assistant", "assistant"]
    assert after[2]["error"] == "interrupted" and "interrupted" not in after[2]
    assert after[3]["content"] == "…and that is the end." and "state" not in after[3]
    sent = srv.requests[-1]["messages"]
    assert sent[-1]["role"] == "assistant" and sent[-1]["content"].startswith("word0 ")  # the model sees where it stopped


async def test_regenerate_tears_down_the_views_of_the_replaced_turn(paths: Paths) -> None:
    """The replaced answer's roll_dice view is closed in the core (not left live without its card)."""
    from moka_shell.config import ServerConfig

    with FakeOpenAIServer() as srv:
        srv.enqueue([[ToolCall("roll_dice", {"count": 1})], [Text("rolled")], [Text("no dice this time")]])
        config = MokaConfig(mcpServers={"moka-demo": ServerConfig(command="moka", args=["demo-server"])})
        config.agent.backend, config.agent.model = "ollama", "fake-model"
        config.agent.base_urls = {"ollama": srv.base_url}
        app = await start_app(paths, config=config)
        bridge = Bridge(app)
        try:
            cid = (await call(bridge, "chat.send", text="roll one"))["conversationId"]
            await app.chat.wait(cid)
            [view] = [v for v in app.view_host.views.values() if v.conversation_id == cid]
            assert view.live
            await call(bridge, "chat.regenerate", conversationId=cid)
            await app.chat.wait(cid)
            for _ in range(100):  # the teardown runs beside the new turn
                if not view.live:
                    break
                await asyncio.sleep(0.05)
            messages = app.store.messages(cid)
        finally:
            await app.stop()
    assert not view.live
    assert [m["content"] for m in messages] == ["roll one", "no dice this time"]


def test_continue_with_anthropic_sends_a_prefill_without_trailing_whitespace() -> None:
    """The interrupted reply is the last (assistant) turn on Continue: Anthropic refuses a prefill ending in spaces."""
    pytest.importorskip("moka_anthropic")
    from moka_anthropic.backend import to_anthropic_messages

    from moka_shell.core.chat.backends import ChatMessage

    _system, out = to_anthropic_messages([ChatMessage(role="user", content="story"),
                                          ChatMessage(role="assistant", content="word0 word1 ")], None)
    assert out[-1] == {"role": "assistant", "content": "word0 word1"}
    _system, only_space = to_anthropic_messages([ChatMessage(role="user", content="story"),
                                                 ChatMessage(role="assistant", content="  ")], None)
    assert [m["role"] for m in only_space] == ["user"]
