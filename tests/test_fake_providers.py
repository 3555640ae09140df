"""The fake model servers: raw wire format over real HTTP, scripting and lifecycle."""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from moka_shell.testing._fake_base import split_text
from moka_shell.testing.fake_anthropic import FakeAnthropicServer
from moka_shell.testing.fake_openai import Error, FakeOpenAIServer, Finish, Text, ToolCall, text_steps


def post(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    data = json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def sse_data(raw: bytes) -> list[str]:
    """The data: payloads of an SSE body, checking every event is one `data:` line."""
    events = raw.decode().split("\n\n")
    assert events[-1] == ""
    out = []
    for event in events[:-1]:
        (line,) = event.split("\n")
        assert line.startswith("data: ")
        out.append(line[6:])
    return out


def sse_events(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    """(event name, data) pairs of an Anthropic-style SSE body."""
    out = []
    for event in raw.decode().split("\n\n")[:-1]:
        name_line, data_line = event.split("\n")
        assert name_line.startswith("event: ") and data_line.startswith("data: ")
        data = json.loads(data_line[6:])
        assert data["type"] == name_line[7:]
        out.append((name_line[7:], data))
    return out


# ---- OpenAI wire format ---------------------------------------------------------------------


def test_openai_stream_is_exactly_chunk_lines_then_done() -> None:
    with FakeOpenAIServer() as srv:
        srv.enqueue([Text("Hi "), ToolCall("f", {"a": [1, 2]}, fragments=3, call_id="call_x"), ToolCall("g")])
        body = {"model": "m", "stream": True, "stream_options": {"include_usage": True}, "messages": []}
        status, raw = post(srv.base_url + "/chat/completions", body)
    assert status == 200
    payloads = sse_data(raw)
    assert payloads[-1] == "[DONE]"
    chunks = [json.loads(p) for p in payloads[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"} and len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": "", "refusal": None}
    assert chunks[1]["choices"][0]["delta"] == {"content": "Hi "}
    calls = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks if c["choices"]
             and "tool_calls" in c["choices"][0]["delta"]]
    assert calls[0] == {"index": 0, "id": "call_x", "type": "function", "function": {"name": "f", "arguments": ""}}
    assert all(set(c) == {"index", "function"} and set(c["function"]) == {"arguments"} for c in calls[1:4])
    assert "".join(c["function"]["arguments"] for c in calls[:4]) == '{"a":[1,2]}'
    assert calls[4]["index"] == 1 and calls[4]["id"].startswith("call_") and calls[4]["function"]["name"] == "g"
    finish, usage = chunks[-2], chunks[-1]
    assert finish["choices"] == [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "tool_calls"}]
    assert usage["choices"] == [] and usage["usage"]["total_tokens"] > 0
    assert all(c["usage"] is None for c in chunks[:-1])


def test_openai_stream_without_include_usage_has_no_usage() -> None:
    with FakeOpenAIServer() as srv:
        _, raw = post(srv.base_url + "/chat/completions", {"model": "m", "stream": True, "messages": []})
    chunks = [json.loads(p) for p in sse_data(raw)[:-1]]
    assert all("usage" not in c for c in chunks)
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_openai_non_streaming_default_turn_and_models() -> None:
    with FakeOpenAIServer(models=["a", "b"]) as srv:
        status, raw = post(srv.base_url + "/chat/completions", {"model": "m", "messages": [{"role": "user"}]})
        completion = json.loads(raw)
        srv.enqueue([Text("x"), ToolCall("t", {"k": "v"})])
        tool_completion = json.loads(post(srv.base_url + "/chat/completions", {"model": "m", "messages": []})[1])
        with urllib.request.urlopen(srv.base_url + "/models", timeout=10) as response:
            models = json.loads(response.read())
    assert status == 200 and completion["object"] == "chat.completion"
    assert completion["choices"][0]["message"]["content"] == "ok"
    assert completion["choices"][0]["finish_reason"] == "stop"
    call = tool_completion["choices"][0]["message"]["tool_calls"][0]
    assert call["function"] == {"name": "t", "arguments": '{"k":"v"}'}
    assert [m["id"] for m in models["data"]] == ["a", "b"] and models["object"] == "list"


@pytest.mark.parametrize(
    ("kind", "status", "code"),
    [("auth", 401, "invalid_api_key"), ("rate_limit", 429, "rate_limit_exceeded"),
     ("context_length", 400, "context_length_exceeded"), ("server", 500, None)],
)
def test_openai_error_shapes(kind: str, status: int, code: str | None) -> None:
    with FakeOpenAIServer() as srv:
        srv.enqueue([Error(kind)])
        got_status, raw = post(srv.base_url + "/chat/completions", {"model": "m", "stream": True, "messages": []})
    error = json.loads(raw)["error"]
    assert got_status == status and error["code"] == code
    assert set(error) == {"message", "type", "param", "code"} and error["message"]


def test_openai_key_is_checked_and_requests_recorded() -> None:
    with FakeOpenAIServer(api_key="sk-right") as srv:
        bad, _ = post(srv.base_url + "/chat/completions", {"model": "m", "messages": []})
        body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
        good, _ = post(srv.base_url + "/chat/completions", body, {"authorization": "Bearer sk-right"})
        assert (bad, good) == (401, 200)
        assert srv.requests[1]["messages"] == [{"role": "user", "content": "x"}]
        assert srv.headers[1]["authorization"] == "Bearer sk-right"


def test_mid_stream_error_is_a_data_line() -> None:
    with FakeOpenAIServer() as srv:
        srv.enqueue([Text("a"), Error("server")])
        _, raw = post(srv.base_url + "/chat/completions", {"model": "m", "stream": True, "messages": []})
    last = json.loads(sse_data(raw)[-1])
    assert last["error"]["type"] == "server_error"


# ---- Anthropic wire format ------------------------------------------------------------------


def test_anthropic_stream_event_sequence() -> None:
    with FakeAnthropicServer() as srv:
        srv.enqueue([Text("Hel"), Text("lo"), ToolCall("f", {"q": "x y"}, fragments=2, call_id="toolu_1"),
                     Finish(output_tokens=9)])
        status, raw = post(srv.url + "/v1/messages", {"model": "c", "max_tokens": 5, "stream": True, "messages": []})
    assert status == 200
    events = sse_events(raw)
    assert [name for name, _ in events] == [
        "message_start", "content_block_start", "ping", "content_block_delta", "content_block_delta",
        "content_block_stop", "content_block_start", "content_block_delta", "content_block_delta",
        "content_block_delta", "content_block_stop", "message_delta", "message_stop",
    ]
    start = events[0][1]["message"]
    assert start["content"] == [] and start["stop_reason"] is None and start["usage"]["input_tokens"] >= 1
    assert events[1][1]["content_block"] == {"type": "text", "text": ""}
    assert events[3][1]["delta"] == {"type": "text_delta", "text": "Hel"}
    assert events[6][1] == {"type": "content_block_start", "index": 1,
                            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}}
    pieces = [d["delta"]["partial_json"] for n, d in events[7:10]]
    assert pieces[0] == "" and "".join(pieces) == '{"q":"x y"}'
    assert events[11][1] == {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                             "usage": {"output_tokens": 9}}


@pytest.mark.parametrize(
    ("kind", "status", "etype"),
    [("auth", 401, "authentication_error"), ("rate_limit", 429, "rate_limit_error"),
     ("overloaded", 529, "overloaded_error"), ("context_length", 400, "invalid_request_error")],
)
def test_anthropic_error_shapes(kind: str, status: int, etype: str) -> None:
    with FakeAnthropicServer() as srv:
        srv.enqueue([Error(kind)])
        got_status, raw = post(srv.url + "/v1/messages", {"model": "c", "max_tokens": 5, "messages": []})
    body = json.loads(raw)
    assert got_status == status and body["type"] == "error" and body["error"]["type"] == etype
    if kind == "context_length":
        assert "prompt is too long" in body["error"]["message"]


def test_anthropic_non_streaming_and_mid_stream_error() -> None:
    with FakeAnthropicServer(api_key="k") as srv:
        srv.enqueue([Text("a"), ToolCall("t", {"x": 1})], [Text("b"), Error("overloaded")])
        hdr = {"x-api-key": "k"}
        _, raw = post(srv.url + "/v1/messages", {"model": "c", "max_tokens": 5, "messages": []}, hdr)
        body = {"model": "c", "max_tokens": 5, "stream": True, "messages": []}
        _, streamed = post(srv.url + "/v1/messages", body, hdr)
        assert post(srv.url + "/v1/messages", {"model": "c", "max_tokens": 5, "messages": []})[0] == 401
    message = json.loads(raw)
    assert message["type"] == "message" and message["stop_reason"] == "tool_use"
    assert [b["type"] for b in message["content"]] == ["text", "tool_use"]
    assert message["content"][1]["input"] == {"x": 1} and message["content"][1]["id"].startswith("toolu_")
    name, data = sse_events(streamed)[-1]
    assert name == "error" and data["error"]["type"] == "overloaded_error"


# ---- scripting and lifecycle ----------------------------------------------------------------


def test_enqueue_accepts_turns_or_one_list_of_turns() -> None:
    srv = FakeOpenAIServer()
    srv.enqueue([Text("a")], [Text("b")])
    srv.enqueue([[Text("c")], [Text("d")]])
    assert srv.pending == 4
    assert [srv.next_turn()[0] for _ in range(5)] == [Text("a"), Text("b"), Text("c"), Text("d"), Text("ok")]


def test_text_helpers_split_without_loss() -> None:
    assert [t.text for t in text_steps("It is sunny today.")] == ["It ", "is ", "sunny ", "today."]
    assert "".join(split_text("abcdefghij", 3)) == "abcdefghij" and len(split_text("abcdefghij", 3)) == 3
    assert split_text("ab", 10) == ["a", "b"] and split_text("", 4) == [""]


def test_delays_make_streaming_observable() -> None:
    with FakeOpenAIServer() as srv:
        srv.enqueue([Text("a", delay=0.2), Text("b", delay=0.2)])
        started = time.monotonic()
        post(srv.base_url + "/chat/completions", {"model": "m", "stream": True, "messages": []})
        assert time.monotonic() - started >= 0.4


def test_servers_stop_and_free_their_port() -> None:
    for cls in (FakeOpenAIServer, FakeAnthropicServer):
        with cls() as srv:
            port = srv.port
            assert port > 0 and srv.url == f"http://127.0.0.1:{port}"
        with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            pass
