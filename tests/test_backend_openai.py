"""The built-in OpenAI-compatible backends, driven through the real SDK against the fake server."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import pytest
from pydantic import ValidationError

from support import ask, fake_provider, free_port, streamed

from moka_shell.builtins import backends_openai
from moka_shell.builtins.backends_openai import PRESETS, OpenAICompatBackend, OpenAIOptions, StreamAssembler
from moka_shell.core.chat.backends import (
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
from moka_shell.errors import NeedsKeyError, ProviderError
from moka_shell.testing.fake_openai import Disconnect, Error, FakeOpenAIServer, Finish, Text, ToolCall


srv = fake_provider(lambda: FakeOpenAIServer(api_key="sk-test"))


def make(backend_id: str = "openai", **kw: Any) -> OpenAICompatBackend:
    preset = next(p for p in PRESETS if p.backend_id == backend_id)
    return OpenAICompatBackend(preset, max_retries=kw.pop("max_retries", 0), **kw)


def req(srv: FakeOpenAIServer, text: str = "hi", **kw: Any) -> AgentRequest:
    return ask(srv, "gpt-test", text, **kw)


collect = streamed


WEATHER = ModelTool(
    name="weather__get_forecast",
    description="Forecast for a city",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


# ---- registration and options ---------------------------------------------------------------


def test_registers_one_backend_per_preset() -> None:
    got: list[Any] = []
    backends_openai.register_agent_backends(register=got.append)
    by_id = {b.backend_id: b for b in got}
    assert set(by_id) == {"openai", "ollama", "lmstudio", "vllm", "llamacpp", "openrouter", "custom"}
    custom = by_id.pop("custom")  # any endpoint: its URL and model come from Settings
    got.remove(custom)
    assert custom.default_base_url is None and custom.base_url_env_var == "OPENAI_BASE_URL"
    assert not custom.needs_key and custom.key_env_var is None and custom.optional_key
    assert by_id["openai"].needs_key and by_id["openai"].key_env_var == "OPENAI_API_KEY"
    assert by_id["openrouter"].needs_key and by_id["openrouter"].key_env_var == "OPENROUTER_API_KEY"
    assert not by_id["vllm"].needs_key and by_id["vllm"].key_env_var == "VLLM_API_KEY"
    for local in ("ollama", "lmstudio", "llamacpp"):
        assert not by_id[local].needs_key and by_id[local].key_env_var is None
    assert by_id["ollama"].default_base_url == "http://127.0.0.1:11434/v1"
    assert by_id["lmstudio"].default_base_url == "http://127.0.0.1:1234/v1"
    assert by_id["vllm"].default_base_url == "http://127.0.0.1:8000/v1"
    assert by_id["llamacpp"].default_base_url == "http://127.0.0.1:8080/v1"
    assert by_id["openrouter"].default_base_url == "https://openrouter.ai/api/v1"
    assert all(b.supports_tools and b.display_name and b.default_model for b in got)


def test_options_forbid_unknown_keys() -> None:
    assert OpenAICompatBackend.Options is OpenAIOptions
    opts = OpenAIOptions(temperature=0.2, max_tokens=100, top_p=0.9)
    assert opts.top_p == 0.9
    with pytest.raises(ValidationError):
        OpenAIOptions(tempreature=1)  # type: ignore[call-arg]


@pytest.mark.anyio
async def test_options_reach_the_provider(srv: FakeOpenAIServer) -> None:
    await collect(make("openai"), req(srv, options={"temperature": 0.5, "max_tokens": 64, "top_p": 0.5}))
    await collect(make("ollama"), req(srv, options={"max_tokens": 32}))
    first, second = srv.requests
    assert (first["temperature"], first["top_p"], first["max_completion_tokens"]) == (0.5, 0.5, 64)
    assert "max_tokens" not in first
    assert second["max_tokens"] == 32 and "temperature" not in second


@pytest.mark.anyio
async def test_bad_options_are_a_bad_request(srv: FakeOpenAIServer) -> None:
    with pytest.raises(ProviderError) as info:
        await collect(make(), req(srv, options={"nope": 1}))
    assert info.value.kind == "bad_request"


# ---- streaming ------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_text_streams_as_deltas_then_usage_and_done(srv: FakeOpenAIServer) -> None:
    srv.enqueue([Text("Hel"), Text("lo, "), Text("world"), Finish(input_tokens=7, output_tokens=3)])
    events = await collect(make(), req(srv))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo, ", "world"]
    assert events[-2:] == [Usage(input_tokens=7, output_tokens=3), Done(stop_reason="end_turn")]
    sent = srv.requests[0]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert sent["model"] == "gpt-test" and srv.headers[0]["authorization"] == "Bearer sk-test"


@pytest.mark.anyio
async def test_tool_call_arguments_stream_in_many_fragments(srv: FakeOpenAIServer) -> None:
    args = {"city": "Reykjavík", "days": 3, "detail": {"hourly": True, "units": ["C", "km/h"]}}
    srv.enqueue([ToolCall("weather__get_forecast", args, fragments=25, delay=0.01)])
    stamps: list[tuple[float, AgentEvent]] = []
    async for event in make().stream(req(srv, tools=[WEATHER])):
        stamps.append((time.monotonic(), event))
    events = [e for _, e in stamps]
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert len(starts) == 1 and starts[0].name == "weather__get_forecast"
    assert len(deltas) == 25 and {d.call_id for d in deltas} == {starts[0].call_id}
    assert json.loads("".join(d.arguments_delta for d in deltas)) == args
    assert ends == [ToolCallEnd(call_id=starts[0].call_id, name="weather__get_forecast", arguments=args)]
    assert events.index(starts[0]) < events.index(deltas[0]) and events.index(deltas[-1]) < events.index(ends[0])
    assert events[-1] == Done(stop_reason="tool_use")
    delta_times = [t for t, e in stamps if isinstance(e, ToolCallDelta)]
    assert delta_times[-1] - delta_times[0] > 0.1  # fragments arrived over time, not at once


@pytest.mark.anyio
async def test_text_and_several_tool_calls_in_one_turn(srv: FakeOpenAIServer) -> None:
    srv.enqueue([Text("Checking both."), ToolCall("a__one", {"x": 1}, fragments=3),
                 ToolCall("b__two", {"y": "two"}, fragments=4)])
    events = await collect(make(), req(srv))
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "TextDelta" and kinds[-1] == "Done"
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [s.name for s in starts] == ["a__one", "b__two"]
    assert len({s.call_id for s in starts}) == 2
    assert [(e.name, e.arguments) for e in ends] == [("a__one", {"x": 1}), ("b__two", {"y": "two"})]
    for s in starts:
        joined = "".join(e.arguments_delta for e in events if isinstance(e, ToolCallDelta) and e.call_id == s.call_id)
        assert json.loads(joined) == next(e.arguments for e in ends if e.call_id == s.call_id)


@pytest.mark.anyio
async def test_invalid_tool_arguments_end_with_empty_object(srv: FakeOpenAIServer) -> None:
    srv.enqueue([ToolCall("t", raw_arguments='{"path": "/tmp/x', fragments=3), Finish("max_tokens")])
    events = await collect(make(), req(srv))
    end = next(e for e in events if isinstance(e, ToolCallEnd))
    raw = "".join(e.arguments_delta for e in events if isinstance(e, ToolCallDelta))
    assert end.arguments == {} and raw == '{"path": "/tmp/x'
    assert events[-1] == Done(stop_reason="max_tokens")


@pytest.mark.anyio
async def test_empty_and_double_encoded_arguments(srv: FakeOpenAIServer) -> None:
    srv.enqueue([ToolCall("a", raw_arguments=""), ToolCall("b", raw_arguments=json.dumps('{"k": 1}'))])
    ends = [e for e in await collect(make(), req(srv)) if isinstance(e, ToolCallEnd)]
    assert [e.arguments for e in ends] == [{}, {"k": 1}]


@pytest.mark.anyio
async def test_stop_after_tool_calls_still_means_tool_use(srv: FakeOpenAIServer) -> None:
    srv.enqueue([ToolCall("t", {"a": 1}), Finish("end_turn")])  # sent as finish_reason "stop"
    events = await collect(make("ollama"), req(srv))
    assert events[-1] == Done(stop_reason="tool_use")


def test_parallel_calls_that_all_say_index_zero() -> None:
    from openai.types.chat import ChatCompletionChunk

    def chunk(delta: dict[str, Any], finish: str | None = None) -> ChatCompletionChunk:
        return ChatCompletionChunk.model_validate({
            "id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })

    asm = StreamAssembler()
    events: list[AgentEvent] = []
    for tc_id, name, args in (("call_1", "a", '{"x":1}'), ("call_2", "b", '{"y":2}')):
        events += asm.feed(chunk({"tool_calls": [{"index": 0, "id": tc_id, "type": "function",
                                                  "function": {"name": name, "arguments": args}}]}))
    events += asm.feed(chunk({}, "tool_calls"))
    events += asm.finish_events()
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [(e.call_id, e.name, e.arguments) for e in ends] == [("call_1", "a", {"x": 1}), ("call_2", "b", {"y": 2})]


# ---- history conversion ---------------------------------------------------------------------


@pytest.mark.anyio
async def test_history_with_tool_results_is_converted(srv: FakeOpenAIServer) -> None:
    history = [
        ChatMessage(role="user", content="Weather in Oslo and Rome?"),
        ChatMessage(role="assistant", content="", tool_calls=[
            ToolCallRecord(id="call_1", name="weather__get_forecast", arguments={"city": "Oslo"}),
            ToolCallRecord(id="call_2", name="weather__get_forecast", arguments={"city": "Rome"}),
        ]),
        ChatMessage(role="tool", tool_call_id="call_1", name="weather__get_forecast", content="Sunny, 20 C"),
        ChatMessage(role="tool", tool_call_id="call_2", name="weather__get_forecast", content="no such city",
                    is_error=True),
        ChatMessage(role="tool", tool_call_id="call_3", structured_content={"temp": 3}),
        ChatMessage(role="assistant", content="Oslo is sunny."),
        ChatMessage(role="user", content="Thanks"),
    ]
    await collect(make(), req(srv, messages=history, system="Be brief.", tools=[WEATHER]))
    sent = srv.requests[0]
    assert sent["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Oslo and Rome?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "weather__get_forecast", "arguments": '{"city": "Oslo"}'}},
            {"id": "call_2", "type": "function",
             "function": {"name": "weather__get_forecast", "arguments": '{"city": "Rome"}'}},
        ]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 20 C"},
        {"role": "tool", "tool_call_id": "call_2", "content": "Error: no such city"},
        {"role": "tool", "tool_call_id": "call_3", "content": '{"temp": 3}'},
        {"role": "assistant", "content": "Oslo is sunny."},
        {"role": "user", "content": "Thanks"},
    ]
    assert sent["tools"] == [{"type": "function", "function": {
        "name": "weather__get_forecast", "description": "Forecast for a city", "parameters": WEATHER.input_schema}}]


@pytest.mark.anyio
async def test_tool_then_reply_script(srv: FakeOpenAIServer) -> None:
    srv.tool_then_reply("weather__get_forecast", {"city": "Oslo"}, "It is sunny in Oslo.", fragments=5)
    backend = make()
    first = await collect(backend, req(srv, tools=[WEATHER]))
    end = next(e for e in first if isinstance(e, ToolCallEnd))
    history = [
        ChatMessage(role="user", content="hi"),
        ChatMessage(role="assistant",
                    tool_calls=[ToolCallRecord(id=end.call_id, name=end.name, arguments=end.arguments)]),
        ChatMessage(role="tool", tool_call_id=end.call_id, content="sunny"),
    ]
    second = await collect(backend, req(srv, messages=history, tools=[WEATHER]))
    assert "".join(e.text for e in second if isinstance(e, TextDelta)) == "It is sunny in Oslo."
    assert srv.requests[1]["messages"][-1] == {"role": "tool", "tool_call_id": end.call_id, "content": "sunny"}
    assert srv.pending == 0


# ---- keys and errors ------------------------------------------------------------------------


@pytest.mark.anyio
async def test_missing_key_raises_needs_key() -> None:
    with pytest.raises(NeedsKeyError) as info:
        await collect(make("openai"), AgentRequest(model="m", messages=[]))
    assert "OPENAI_API_KEY" in str(info.value) and "moka keys set openai" in str(info.value)


@pytest.mark.anyio
async def test_keyless_local_server_gets_a_placeholder() -> None:
    with FakeOpenAIServer() as server:
        events = await collect(make("lmstudio"), AgentRequest(model="m", messages=[], base_url=server.base_url))
        assert events[-1] == Done(stop_reason="end_turn")
        assert server.headers[0]["authorization"] == "Bearer not-needed"


@pytest.mark.parametrize(
    ("step", "kind", "words"),
    [
        (Error("auth"), "auth", ["OPENAI_API_KEY", "moka keys set openai"]),
        (Error("permission"), "auth", ["moka keys set openai"]),
        (Error("rate_limit"), "rate_limit", ["Rate limit"]),
        (Error("context_length"), "context_length", ["maximum context length"]),
        (Error("bad_request"), "bad_request", ["temperature"]),
        (Error("not_found"), "bad_request", ["model"]),
        (Error("server"), "server", ["server had an error"]),
        (Error("overloaded"), "server", ["overloaded"]),
    ],
)
@pytest.mark.anyio
async def test_http_errors_map_to_kinds(srv: FakeOpenAIServer, step: Error, kind: str, words: list[str]) -> None:
    srv.enqueue([step])
    with pytest.raises(ProviderError) as info:
        await collect(make(), req(srv))
    assert info.value.kind == kind
    for word in words:
        assert word in str(info.value)


@pytest.mark.anyio
async def test_wrong_key_is_an_auth_error(srv: FakeOpenAIServer) -> None:
    with pytest.raises(ProviderError) as info:
        await collect(make("openrouter"), req(srv).model_copy(update={"api_key": "sk-wrong"}))
    assert info.value.kind == "auth" and "OPENROUTER_API_KEY" in str(info.value)
    assert "sk-wrong" not in str(info.value)


@pytest.mark.anyio
async def test_errors_in_the_middle_of_a_stream(srv: FakeOpenAIServer) -> None:
    srv.enqueue([Text("partial "), Error("server")], [Text("partial "), Error("context_length")])
    seen: list[AgentEvent] = []
    with pytest.raises(ProviderError) as info:
        async for event in make().stream(req(srv)):
            seen.append(event)
    assert info.value.kind == "server" and seen == [TextDelta(text="partial ")]
    with pytest.raises(ProviderError) as info:
        await collect(make(), req(srv))
    assert info.value.kind == "context_length"


@pytest.mark.anyio
async def test_network_errors_name_the_base_url(srv: FakeOpenAIServer) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ProviderError) as info:
        await collect(make("ollama"), AgentRequest(model="m", messages=[], base_url=url))
    assert info.value.kind == "network" and url in str(info.value) and "Ollama" in str(info.value)
    srv.enqueue([Text("half"), Disconnect()])
    with pytest.raises(ProviderError) as info:
        await collect(make(), req(srv))
    assert info.value.kind == "network" and srv.base_url in str(info.value)


@pytest.mark.anyio
async def test_sdk_retries_a_server_error(srv: FakeOpenAIServer) -> None:
    srv.enqueue([Error("server")], [Text("recovered")])
    events = await collect(make(max_retries=1), req(srv))
    assert TextDelta(text="recovered") in events and len(srv.requests) == 2


# ---- probe and models -----------------------------------------------------------------------


@pytest.mark.anyio
async def test_probe_finds_a_server_and_not_a_free_port() -> None:
    with FakeOpenAIServer() as server:
        assert await make("ollama").probe(server.base_url) is True
    with FakeOpenAIServer(api_key="secret") as server:
        assert await make("vllm").probe(server.base_url) is True  # there, but wants a key
    # Nothing listening: refused, so False (the probe's own 0.5 s deadline bounds the wait; no
    # timing is asserted here, since a loaded machine may take longer to say so).
    assert await make("ollama").probe(f"http://127.0.0.1:{free_port()}/v1") is False


PROBE_ALONE = """
import asyncio, sys
from moka_shell.builtins.backends_openai import PRESETS, OpenAICompatBackend
from moka_shell.testing.fake_openai import FakeOpenAIServer
ollama = OpenAICompatBackend(next(p for p in PRESETS if p.backend_id == "ollama"))
vllm = OpenAICompatBackend(next(p for p in PRESETS if p.backend_id == "vllm"))
with FakeOpenAIServer() as open_server, FakeOpenAIServer(api_key="secret") as keyed:
    found = [asyncio.run(ollama.probe(open_server.base_url)), asyncio.run(vllm.probe(keyed.base_url)),
             asyncio.run(ollama.probe(open_server.base_url.rsplit("/v1", 1)[0] + "/nothing-here"))]
print(found, "openai" in sys.modules)
"""


def test_probe_does_not_import_the_sdk() -> None:
    # The Settings screen probes the local backends on every page load; the SDK (13 MiB of the
    # desktop app's memory, docs/performance.md) is not needed for one GET.
    out = subprocess.run([sys.executable, "-c", PROBE_ALONE], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split("\n")[-2] == "[True, True, False] False", out.stdout + out.stderr


@pytest.mark.anyio
async def test_list_models(srv: FakeOpenAIServer) -> None:
    backend = make("vllm")
    assert await backend.list_models(srv.base_url, "sk-test") == ["fake-model"]
    with pytest.raises(ProviderError) as info:
        await backend.list_models(srv.base_url, "bad")
    assert info.value.kind == "auth"
