"""A fake OpenAI-compatible server on 127.0.0.1 that speaks the real wire format.

Scripted turn by turn with the steps defined here (shared with `fake_anthropic`):

    with FakeOpenAIServer() as srv:
        srv.enqueue([Text("Hel"), Text("lo")], [ToolCall("add", {"a": 1}, fragments=4)])
        ...point AsyncOpenAI(base_url=srv.base_url) at it...
        assert srv.requests[0]["messages"][-1]["content"] == "hi"
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from moka_shell.testing._fake_base import (
    CallIds,
    Disconnect,
    Error,
    FakeServerBase,
    Finish,
    Hold,
    Step,
    Text,
    ToolCall,
    TurnPlan,
    pause,
    text_steps,
)

__all__ = [
    "CallIds",
    "Disconnect",
    "Error",
    "FakeOpenAIServer",
    "Finish",
    "Hold",
    "Step",
    "Text",
    "ToolCall",
    "openai_error_body",
    "text_steps",
]

# kind -> (default HTTP status, error.type, error.code, message), as OpenAI words them.
_ERRORS: dict[str, tuple[int, str, str | None, str]] = {
    "auth": (401, "invalid_request_error", "invalid_api_key",
             "Incorrect API key provided: sk-fake***. You can find your API key at "
             "https://platform.openai.com/account/api-keys."),
    "permission": (403, "invalid_request_error", "model_not_allowed",
                   "Project does not have access to this model."),
    "not_found": (404, "invalid_request_error", "model_not_found",
                  "The model does not exist or you do not have access to it."),
    "rate_limit": (429, "requests", "rate_limit_exceeded",
                   "Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1. "
                   "Please try again in 20s."),
    "context_length": (400, "invalid_request_error", "context_length_exceeded",
                       "This model's maximum context length is 128000 tokens. However, your messages "
                       "resulted in 130004 tokens. Please reduce the length of the messages."),
    "bad_request": (400, "invalid_request_error", "invalid_value",
                    "Invalid value for 'temperature': must be between 0 and 2."),
    "server": (500, "server_error", None,
               "The server had an error while processing your request. Sorry about that!"),
    "overloaded": (503, "server_error", None, "The engine is currently overloaded, please try again later."),
}

_FINISH = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"}


def openai_error_body(error: Error) -> tuple[int, dict[str, Any]]:
    """The HTTP status and JSON body OpenAI sends for this error step."""
    status, etype, code, message = _ERRORS.get(error.kind, _ERRORS["server"])
    if error.body is not None:
        return error.status or status, error.body
    param = "messages" if error.kind == "context_length" else None
    body = {"error": {"message": error.message or message, "type": etype, "param": param, "code": code}}
    return error.status or status, body


class FakeOpenAIServer(FakeServerBase):
    """`POST /v1/chat/completions` (streaming or not) and `GET /v1/models`, OpenAI style."""

    api_prefix = "/v1"

    def routes(self) -> list[Route]:
        """The HTTP routes this fake answers."""
        return [
            Route("/v1/chat/completions", self._chat, methods=["POST"]),
            Route("/v1/models", self._models, methods=["GET"]),
        ]

    def key_ok(self, request: Request) -> bool:
        """True if the request carries the expected bearer key (or none is expected)."""
        return self.api_key is None or request.headers.get("authorization") == f"Bearer {self.api_key}"

    async def _models(self, request: Request) -> Response:
        if not self.key_ok(request):
            return self._error_response(Error("auth"))
        data = [{"id": m, "object": "model", "created": 1700000000, "owned_by": "moka-fake"} for m in self.models]
        return JSONResponse({"object": "list", "data": data})

    def _error_response(self, error: Error) -> Response:
        status, body = openai_error_body(error)
        headers = {"x-request-id": f"req_{uuid.uuid4().hex[:16]}"}
        if status == 429:
            headers["retry-after"] = "20"
        return JSONResponse(body, status_code=status, headers=headers)

    async def _chat(self, request: Request) -> Response:
        body = await self.record(request)
        if not self.key_ok(request):
            return self._error_response(Error("auth"))
        plan = self.plan(self.next_turn(), body.get("messages", []))
        if plan.leading_error is not None:
            return self._error_response(plan.leading_error)
        model = body.get("model") or self.models[0]
        if body.get("stream"):
            usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return StreamingResponse(self._sse(plan, model, usage), media_type="text/event-stream")
        return JSONResponse(self._completion(plan, model))

    def _completion(self, plan: TurnPlan, model: str) -> dict[str, Any]:
        text = "".join(s.text for s in plan.steps if isinstance(s, Text))
        calls = [
            {**self.call_id_field(s), "type": "function", "function": {"name": s.name, "arguments": s.arguments_json}}
            for s in plan.steps if isinstance(s, ToolCall)
        ]
        message: dict[str, Any] = {"role": "assistant", "content": text or None, "refusal": None, "annotations": []}
        if calls:
            message["tool_calls"] = calls
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "system_fingerprint": "fp_moka_fake", "service_tier": "default",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": self._finish(plan)}],
            "usage": _usage(plan),
        }

    @staticmethod
    def _finish(plan: TurnPlan) -> str:
        return _FINISH.get(plan.stop_reason, plan.stop_reason)

    async def _sse(self, plan: TurnPlan, model: str, include_usage: bool) -> AsyncIterator[bytes]:
        cid, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())

        def chunk(delta: dict[str, Any] | None, finish: str | None = None, usage: Any = None) -> bytes:
            data: dict[str, Any] = {
                "id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                "service_tier": "default", "system_fingerprint": "fp_moka_fake",
                "choices": [] if delta is None else [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                ],
            }
            if include_usage:
                data["usage"] = usage
            return f"data: {json.dumps(data)}\n\n".encode()

        yield chunk({"role": "assistant", "content": "", "refusal": None})
        tool_index = 0
        for step in plan.steps:
            if isinstance(step, Text):
                await pause(step.delay)
                yield chunk({"content": step.text})
            elif isinstance(step, ToolCall):
                # id, type and name come once, in the first fragment; then only arguments.
                head = {"index": tool_index, **self.call_id_field(step), "type": "function",
                        "function": {"name": step.name, "arguments": ""}}
                yield chunk({"tool_calls": [head]})
                for i, piece in enumerate(step.pieces()):
                    await step.before_fragment(i)
                    yield chunk({"tool_calls": [{"index": tool_index, "function": {"arguments": piece}}]})
                tool_index += 1
            elif isinstance(step, Error):
                _status, body = openai_error_body(step)
                yield f"data: {json.dumps(body)}\n\n".encode()
                return
            elif isinstance(step, Disconnect):
                step.abort()
        yield chunk({}, self._finish(plan))
        if include_usage:
            yield chunk(None, usage=_usage(plan))
        yield b"data: [DONE]\n\n"


def _usage(plan: TurnPlan) -> dict[str, Any]:
    inp, out = plan.input_tokens, plan.output_tokens
    return {
        "prompt_tokens": inp, "completion_tokens": out, "total_tokens": inp + out,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                      "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
    }
