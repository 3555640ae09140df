"""The moka-anthropic plugin, driven through the real anthropic SDK against the fake server."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("anthropic")  # the plugin's one dependency beyond moka-shell
# Test this checkout's plugin whether or not (or wherever) it is installed.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins" / "moka-anthropic" / "src"))

import moka_anthropic  # noqa: E402
from support import ask, fake_provider, streamed  # noqa: E402
from moka_anthropic.backend import AnthropicBackend  # noqa: E402

from moka_shell.core.chat.backends import (  # noqa: E402
    AgentEvent,
    AgentRequest,
    ChatMessage,
    Done,
    ModelTool,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallRecord,
    ToolCallStart,
    Usage,
)
from moka_shell.errors import NeedsKeyError, ProviderError  # noqa: E402
from moka_shell.testing.fake_anthropic import (  # noqa: E402
    Disconnect,
    Error,
    FakeAnthropicServer,
    Finish,
    Text,
    ToolCall,
)


srv = fake_provider(lambda: FakeAnthropicServer(api_key="sk-ant-test"))


def req(srv: FakeAnthropicServer, text: str = "hi", **kw: Any) -> AgentRequest:
    return ask(srv, "claude-test", text, **kw)


async def collect(request: AgentRequest, backend: AnthropicBackend | None = None) -> list[AgentEvent]:
    return await streamed(backend or AnthropicBackend(max_retries=0), request)


WEATHER = ModelTool(name="weather__get_forecast", description="Forecast",
                    input_schema={"type": "object", "properties": {"city": {"type": "string"}}})


def test_registers_the_anthropic_backend() -> None:
    got: list[Any] = []
    moka_anthropic.register_agent_backends(register=got.append)
    (backend,) = got
    assert backend.backend_id == "anthropic" and backend.needs_key and backend.key_env_var == "ANTHROPIC_API_KEY"
    assert backend.default_model.startswith("claude-")


@pytest.mark.anyio
async def test_text_streams_with_usage_and_done(srv: FakeAnthropicServer) -> None:
    srv.enqueue([Text("Hello"), Text(", "), Text("Claude here"), Finish(input_tokens=11, output_tokens=4)])
    events = await collect(req(srv, system="Be kind.", options={"effort": "low"}))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello", ", ", "Claude here"]
    assert events[-2:] == [Usage(input_tokens=11, output_tokens=4), Done(stop_reason="end_turn")]
    sent = srv.requests[0]
    assert sent["stream"] is True and sent["max_tokens"] == 4096 and sent["system"] == "Be kind."
    assert sent["output_config"] == {"effort": "low"} and sent["model"] == "claude-test"


@pytest.mark.anyio
async def test_tool_call_streams_in_many_fragments(srv: FakeAnthropicServer) -> None:
    args = {"city": "São Paulo", "days": [1, 2, 3], "opts": {"metric": True, "note": "a \"quoted\" word"}}
    srv.enqueue([Text("Let me check."), ToolCall("weather__get_forecast", args, fragments=30)])
    events = await collect(req(srv, tools=[WEATHER]))
    start = next(e for e in events if isinstance(e, ToolCallStart))
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    end = next(e for e in events if isinstance(e, ToolCallEnd))
    assert start.call_id.startswith("toolu_") and start.name == "weather__get_forecast"
    assert len(deltas) == 30 and all(d.call_id == start.call_id for d in deltas)
    assert json.loads("".join(d.arguments_delta for d in deltas)) == args
    assert end == ToolCallEnd(call_id=start.call_id, name=start.name, arguments=args)
    assert events[-1] == Done(stop_reason="tool_use")
    assert srv.requests[0]["tools"] == [{"name": WEATHER.name, "description": "Forecast",
                                         "input_schema": WEATHER.input_schema}]


@pytest.mark.anyio
async def test_several_tool_calls_and_no_argument_calls(srv: FakeAnthropicServer) -> None:
    srv.enqueue([ToolCall("a", {"x": 1}, fragments=2), ToolCall("b", {}), ToolCall("c", raw_arguments="{bad")])
    events = await collect(req(srv))
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [(e.name, e.arguments) for e in ends] == [("a", {"x": 1}), ("b", {}), ("c", {})]
    assert len({e.call_id for e in ends}) == 3


@pytest.mark.anyio
async def test_max_tokens_stop_reason(srv: FakeAnthropicServer) -> None:
    srv.enqueue([Text("trunc"), Finish("max_tokens")])
    assert (await collect(req(srv, options={"max_tokens": 5})))[-1] == Done(stop_reason="max_tokens")
    assert srv.requests[0]["max_tokens"] == 5


@pytest.mark.anyio
async def test_history_becomes_tool_use_and_tool_result_blocks(srv: FakeAnthropicServer) -> None:
    history = [
        ChatMessage(role="system", content="Extra rule."),
        ChatMessage(role="user", content="Weather in Oslo and Rome?"),
        ChatMessage(role="assistant", content="Checking.", tool_calls=[
            ToolCallRecord(id="toolu_1", name="weather__get_forecast", arguments={"city": "Oslo"}),
            ToolCallRecord(id="toolu_2", name="weather__get_forecast", arguments={"city": "Rome"}),
        ]),
        ChatMessage(role="tool", tool_call_id="toolu_1", content="Sunny"),
        ChatMessage(role="tool", tool_call_id="toolu_2", content="unknown city", is_error=True),
        ChatMessage(role="user", content="And tomorrow?"),
        ChatMessage(role="assistant", content=""),  # empty turns are dropped, the API refuses them
    ]
    await collect(req(srv, messages=history, system="Be brief."))
    sent = srv.requests[0]
    assert sent["system"] == "Be brief.\n\nExtra rule."
    assert sent["messages"] == [
        {"role": "user", "content": "Weather in Oslo and Rome?"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "weather__get_forecast", "input": {"city": "Oslo"}},
            {"type": "tool_use", "id": "toolu_2", "name": "weather__get_forecast", "input": {"city": "Rome"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "Sunny"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "unknown city", "is_error": True},
            {"type": "text", "text": "And tomorrow?"},
        ]},
    ]


@pytest.mark.anyio
async def test_tool_then_reply_script(srv: FakeAnthropicServer) -> None:
    srv.tool_then_reply("weather__get_forecast", {"city": "Oslo"}, "Sunny in Oslo.", preface="One moment.")
    first = await collect(req(srv, tools=[WEATHER]))
    end = next(e for e in first if isinstance(e, ToolCallEnd))
    assert TextDelta(text="One moment.") in first
    history = [
        ChatMessage(role="user", content="hi"),
        ChatMessage(role="assistant", content="One moment.",
                    tool_calls=[ToolCallRecord(id=end.call_id, name=end.name, arguments=end.arguments)]),
        ChatMessage(role="tool", tool_call_id=end.call_id, structured_content={"sky": "clear"}),
    ]
    second = await collect(req(srv, messages=history, tools=[WEATHER]))
    assert "".join(e.text for e in second if isinstance(e, TextDelta)) == "Sunny in Oslo."
    assert srv.requests[1]["messages"][-1] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": end.call_id, "content": '{"sky": "clear"}'}]}


@pytest.mark.anyio
async def test_unknown_or_unsupported_options_are_refused(srv: FakeAnthropicServer) -> None:
    for options in ({"temperature": 0.5}, {"top_k": 3}, {"effort": "extreme"}):
        with pytest.raises(ProviderError) as info:
            await collect(req(srv, options=options))
        assert info.value.kind == "bad_request"
    assert srv.requests == []


# ---- keys and errors ------------------------------------------------------------------------


@pytest.mark.anyio
async def test_missing_key() -> None:
    with pytest.raises(NeedsKeyError) as info:
        await collect(AgentRequest(model="m", messages=[]))
    assert "ANTHROPIC_API_KEY" in str(info.value) and "moka keys set anthropic" in str(info.value)


@pytest.mark.parametrize(
    ("step", "kind"),
    [
        (Error("auth"), "auth"),
        (Error("permission"), "auth"),
        (Error("rate_limit"), "rate_limit"),
        (Error("overloaded"), "server"),
        (Error("server"), "server"),
        (Error("context_length"), "context_length"),
        (Error("bad_request"), "bad_request"),
        (Error("not_found"), "bad_request"),
    ],
)
@pytest.mark.anyio
async def test_http_errors_map_to_kinds(srv: FakeAnthropicServer, step: Error, kind: str) -> None:
    srv.enqueue([step])
    with pytest.raises(ProviderError) as info:
        await collect(req(srv))
    assert info.value.kind == kind
    if kind == "auth":
        assert "moka keys set anthropic" in str(info.value)


@pytest.mark.anyio
async def test_wrong_key_and_mid_stream_overload(srv: FakeAnthropicServer) -> None:
    with pytest.raises(ProviderError) as info:
        await collect(req(srv).model_copy(update={"api_key": "sk-ant-wrong"}))
    assert info.value.kind == "auth" and "sk-ant-wrong" not in str(info.value)
    srv.enqueue([Text("Half an ans"), Error("overloaded")])
    seen: list[AgentEvent] = []
    with pytest.raises(ProviderError) as info:
        async for event in AnthropicBackend(max_retries=0).stream(req(srv)):
            seen.append(event)
    assert info.value.kind == "server" and seen == [TextDelta(text="Half an ans")]


@pytest.mark.anyio
async def test_network_errors(srv: FakeAnthropicServer) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
    with pytest.raises(ProviderError) as info:
        await collect(AgentRequest(model="m", messages=[], api_key="k", base_url=url))
    assert info.value.kind == "network" and url in str(info.value)
    srv.enqueue([Text("x"), Disconnect()])
    with pytest.raises(ProviderError) as info:
        await collect(req(srv))
    assert info.value.kind == "network"
