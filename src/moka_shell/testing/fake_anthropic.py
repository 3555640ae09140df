"""A fake Anthropic Messages API on 127.0.0.1 that speaks the real wire format.

Scripted with the same steps as `fake_openai` (re-exported here):

    with FakeAnthropicServer() as srv:
        srv.tool_then_reply("get_weather", {"city": "Oslo"}, "It is sunny.")
        ...point AsyncAnthropic(base_url=srv.base_url) at it...

`base_url` has no /v1 suffix, as the Anthropic SDK expects.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Sequence
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
    "FakeAnthropicServer",
    "Finish",
    "Hold",
    "Step",
    "Text",
    "ToolCall",
    "anthropic_error_body",
    "text_steps",
]

# kind -> (default HTTP status, error.type, message), as Anthropic words them.
_ERRORS: dict[str, tuple[int, str, str]] = {
    "auth": (401, "authentication_error", "invalid x-api-key"),
    "permission": (403, "permission_error", "Your API key does not have permission to use the specified resource."),
    "not_found": (404, "not_found_error", "model: claude-nonexistent"),
    "rate_limit": (429, "rate_limit_error",
                   "This request would exceed the rate limit for your organization of 50 requests per minute."),
    "context_length": (400, "invalid_request_error", "prompt is too long: 212345 tokens > 200000 maximum"),
    "bad_request": (400, "invalid_request_error", "messages: roles must alternate between \"user\" and \"assistant\""),
    "server": (500, "api_error", "Internal server error"),
    "overloaded": (529, "overloaded_error", "Overloaded"),
}


def anthropic_error_body(error: Error) -> tuple[int, dict[str, Any]]:
    """The HTTP status and JSON body Anthropic sends for this error step."""
    status, etype, message = _ERRORS.get(error.kind, _ERRORS["server"])
    if error.body is not None:
        return error.status or status, error.body
    body = {"type": "error", "error": {"type": etype, "message": error.message or message},
            "request_id": f"req_{uuid.uuid4().hex[:24]}"}
    return error.status or status, body


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


class FakeAnthropicServer(FakeServerBase):
    """`POST /v1/messages` (streaming or not) and `GET /v1/models`, Anthropic style."""

    call_id_prefix = "toolu_"

    def __init__(self, *, api_key: str | None = None, models: Sequence[str] = ("claude-sonnet-4-5",),
                 call_ids: CallIds = "fresh") -> None:
        super().__init__(api_key=api_key, models=models, call_ids=call_ids)

    def routes(self) -> list[Route]:
        """The HTTP routes this fake answers."""
        return [
            Route("/v1/messages", self._messages, methods=["POST"]),
            Route("/v1/models", self._models, methods=["GET"]),
        ]

    def key_ok(self, request: Request) -> bool:
        """True if the request carries the expected x-api-key (or none is expected)."""
        if self.api_key is None:
            return True
        return self.api_key in (request.headers.get("x-api-key"), request.headers.get("authorization", "")[7:])

    def _error_response(self, error: Error) -> Response:
        status, body = anthropic_error_body(error)
        headers = {"request-id": body.get("request_id", "req_fake")}
        if status == 429:
            headers["retry-after"] = "20"
        return JSONResponse(body, status_code=status, headers=headers)

    async def _models(self, request: Request) -> Response:
        if not self.key_ok(request):
            return self._error_response(Error("auth"))
        data = [{"type": "model", "id": m, "display_name": m, "created_at": "2025-09-29T00:00:00Z"}
                for m in self.models]
        return JSONResponse({"data": data, "has_more": False,
                             "first_id": data[0]["id"] if data else None, "last_id": data[-1]["id"] if data else None})

    async def _messages(self, request: Request) -> Response:
        body = await self.record(request)
        if not self.key_ok(request):
            return self._error_response(Error("auth"))
        plan = self.plan(self.next_turn(), body.get("messages", []))
        if plan.leading_error is not None:
            return self._error_response(plan.leading_error)
        model = body.get("model") or self.models[0]
        if body.get("stream"):
            return StreamingResponse(self._sse(plan, model), media_type="text/event-stream")
        return JSONResponse(self._message(plan, model, content=self._blocks(plan)))

    @staticmethod
    def _blocks(plan: TurnPlan) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        for step in plan.steps:
            if isinstance(step, Text):
                if blocks and blocks[-1]["type"] == "text":
                    blocks[-1]["text"] += step.text
                else:
                    blocks.append({"type": "text", "text": step.text, "citations": None})
            elif isinstance(step, ToolCall):
                blocks.append({"type": "tool_use", "id": step.call_id, "name": step.name, "input": step.arguments})
        return blocks

    @staticmethod
    def _message(plan: TurnPlan, model: str, *, content: list[dict[str, Any]], final: bool = True) -> dict[str, Any]:
        return {
            "id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": plan.stop_reason if final else None, "stop_sequence": None,
            "usage": {"input_tokens": plan.input_tokens, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0, "output_tokens": plan.output_tokens if final else 1,
                      "service_tier": "standard"},
        }

    async def _sse(self, plan: TurnPlan, model: str) -> AsyncIterator[bytes]:
        yield _event("message_start", {"type": "message_start",
                                       "message": self._message(plan, model, content=[], final=False)})
        index, open_text = -1, False

        def stop_text() -> list[bytes]:
            nonlocal open_text
            if not open_text:
                return []
            open_text = False
            return [_event("content_block_stop", {"type": "content_block_stop", "index": index})]

        for step in plan.steps:
            if isinstance(step, Text):
                if not open_text:
                    index, open_text = index + 1, True
                    yield _event("content_block_start", {"type": "content_block_start", "index": index,
                                                         "content_block": {"type": "text", "text": ""}})
                    if index == 0:
                        yield _event("ping", {"type": "ping"})
                await pause(step.delay)
                yield _event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                     "delta": {"type": "text_delta", "text": step.text}})
            elif isinstance(step, ToolCall):
                for chunk in stop_text():
                    yield chunk
                index += 1
                block: dict[str, Any] = {"type": "tool_use", "id": step.call_id, "name": step.name, "input": {}}
                yield _event("content_block_start", {"type": "content_block_start", "index": index,
                                                     "content_block": block})
                # Anthropic opens every tool_use block with an empty partial_json.
                for i, piece in enumerate(["", *step.pieces()]):
                    if piece:
                        await step.before_fragment(i - 1)
                    yield _event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                         "delta": {"type": "input_json_delta", "partial_json": piece}})
                yield _event("content_block_stop", {"type": "content_block_stop", "index": index})
            elif isinstance(step, Error):
                yield _event("error", anthropic_error_body(step)[1])
                return
            elif isinstance(step, Disconnect):
                step.abort()
        for chunk in stop_text():
            yield chunk
        yield _event("message_delta", {"type": "message_delta",
                                       "delta": {"stop_reason": plan.stop_reason, "stop_sequence": None},
                                       "usage": {"output_tokens": plan.output_tokens}})
        yield _event("message_stop", {"type": "message_stop"})
