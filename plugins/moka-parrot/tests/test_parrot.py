"""Tests for the parrot backend, the way a plugin author would write them."""

from __future__ import annotations

import json
from itertools import groupby
from pathlib import Path
from typing import Any

import pytest

import moka_parrot
from moka_parrot import ParrotBackend, register_agent_backends
from moka_shell.builtins.backends_openai import PRESETS, OpenAICompatBackend
from moka_shell.config import MokaConfig
from moka_shell.plugins import PluginHost
from moka_shell import (
    AgentEvent,
    AgentRequest,
    ChatMessage,
    Done,
    ModelTool,
    ProviderError,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallRecord,
    ToolCallStart,
)
from moka_shell.testing import running_app
from moka_shell.testing.fake_openai import FakeOpenAIServer, ToolCall

ECHO = ModelTool(name="demo__echo", description="Echo the text back",
                 input_schema={"type": "object", "properties": {"text": {"type": "string"}}})


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def ask(text: str, **kw: Any) -> AgentRequest:
    return AgentRequest(model="parrot-1", messages=[ChatMessage(role="user", content=text)], **kw)


async def collect(request: AgentRequest) -> list[AgentEvent]:
    return [event async for event in ParrotBackend(delay=0).stream(request)]


def test_the_hook_registers_the_parrot() -> None:
    registered: list[object] = []
    register_agent_backends(register=registered.append)
    assert [b.backend_id for b in registered] == ["parrot"]  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_repeats_the_last_message_word_by_word() -> None:
    events = await collect(ask("hello big world"))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["hello ", "big ", "world"]
    assert events[-1] == Done(stop_reason="end_turn")


@pytest.mark.anyio
async def test_uppercase_option_and_unknown_options() -> None:
    events = await collect(ask("quiet please", options={"uppercase": True}))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "QUIET PLEASE"
    with pytest.raises(ProviderError) as info:
        await collect(ask("x", options={"volume": 11}))
    assert info.value.kind == "bad_request"


@pytest.mark.anyio
async def test_tool_command_streams_a_tool_call() -> None:
    arguments = {"text": "a fairly long piece of text"}
    events = await collect(ask(f"/tool demo__echo {json.dumps(arguments)}", tools=[ECHO]))
    start, *middle, end, done = events
    deltas = [e for e in middle if isinstance(e, ToolCallDelta)]
    assert isinstance(start, ToolCallStart) and start.name == "demo__echo"
    assert len(deltas) == len(middle) > 3
    assert json.loads("".join(d.arguments_delta for d in deltas)) == arguments
    assert end == ToolCallEnd(call_id=start.call_id, name="demo__echo", arguments=arguments)
    assert done == Done(stop_reason="tool_use")


@pytest.mark.anyio
async def test_bad_tool_commands_are_bad_requests() -> None:
    for text in ("/tool demo__echo {not json", "/tool nope {}", "/tool demo__echo [1]"):
        with pytest.raises(ProviderError) as info:
            await collect(ask(text, tools=[ECHO]))
        assert info.value.kind == "bad_request"


@pytest.mark.anyio
async def test_after_the_tool_result_it_reports_it() -> None:
    history = [
        ChatMessage(role="user", content='/tool demo__echo {"text": "hi"}'),
        ChatMessage(role="assistant",
                    tool_calls=[ToolCallRecord(id="c1", name="demo__echo", arguments={"text": "hi"})]),
        ChatMessage(role="tool", tool_call_id="c1", content="hi"),
    ]
    events = await collect(AgentRequest(model="parrot-1", messages=history, tools=[ECHO]))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "The tool said: hi"


@pytest.mark.anyio
async def test_same_event_shape_as_a_real_backend() -> None:
    # The fake OpenAI server lets the built-in backend stream the same tool call over
    # real HTTP; the parrot's events must have the same shape.
    arguments = {"text": "a fairly long piece of text"}
    with FakeOpenAIServer() as server:
        server.enqueue([ToolCall("demo__echo", arguments, fragments=5)])
        openai_backend = OpenAICompatBackend(next(p for p in PRESETS if p.backend_id == "ollama"))
        request = ask("echo please", tools=[ECHO], base_url=server.base_url)
        real = [e async for e in openai_backend.stream(request)]
    parrot = await collect(ask(f"/tool demo__echo {json.dumps(arguments)}", tools=[ECHO]))

    def shape(events: list[AgentEvent]) -> list[str]:
        return [kind for kind, _ in groupby(e.type for e in events if e.type != "usage")]

    assert shape(parrot) == shape(real) == ["tool_call_start", "tool_call_delta", "tool_call_end", "done"]
    assert [e for e in parrot if isinstance(e, ToolCallEnd)][0].arguments == arguments


@pytest.mark.anyio
async def test_answers_a_chat_turn_inside_a_running_moka(tmp_path: Path) -> None:
    # running_app starts a real Moka core with this plugin (and no other installed one), and
    # stops it when the block ends: the turn goes through the chat engine and the store.
    config = MokaConfig()
    config.agent.backend, config.agent.model = "parrot", "parrot-1"
    plugins = PluginHost(load_entrypoints=False, extra=[moka_parrot])
    async with running_app(tmp_path, config=config, plugins=plugins) as app:
        cid = app.chat.start_turn(None, "hello from the test")
        await app.chat.wait(cid)
        messages = app.store.messages(cid)
    assert [(m["role"], m["content"]) for m in messages] == [("user", "hello from the test"),
                                                            ("assistant", "hello from the test")]
