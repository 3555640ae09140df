"""The Anthropic Messages API as a Moka backend, through the official `anthropic` SDK."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import httpx2  # the SDK's own HTTP client; it lets mid-stream transport errors through
from pydantic import Field, ValidationError

if TYPE_CHECKING:  # the SDK is imported on first use: it costs start-up time
    import anthropic

from moka_shell import (
    AgentEvent,
    AgentRequest,
    BackendOptions,
    BaseBackend,
    ChatMessage,
    Done,
    ModelTool,
    NeedsKeyError,
    ProviderError,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS = 4096
KEY_HINT = "set ANTHROPIC_API_KEY or run `moka keys set anthropic`"
_CONTEXT_RE = re.compile(r"prompt is too long|context (window|length)|too many tokens", re.IGNORECASE)
StopReason = Literal["end_turn", "tool_use", "max_tokens", "other"]
_STOP: dict[str, StopReason] = {
    "end_turn": "end_turn", "stop_sequence": "end_turn", "tool_use": "tool_use",
    "max_tokens": "max_tokens", "model_context_window_exceeded": "max_tokens",
}


class AnthropicOptions(BackendOptions):
    """Options of the Messages API (max_tokens defaults to 4096).

    The Messages API of this SDK has no sampling parameters, so `temperature` is
    refused here rather than silently dropped.
    """

    temperature: None = Field(default=None, description="not offered by the Anthropic Messages API")
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = Field(
        default=None, description="How much effort the model puts into its answer"
    )


def image_block(media: Any) -> dict[str, Any]:
    """One image as a Messages API content block (base64 source)."""
    return {"type": "image", "source": {"type": "base64", "media_type": media.mime_type, "data": media.data}}


def to_anthropic_messages(messages: list[ChatMessage], system: str | None) -> tuple[str | None, list[dict[str, Any]]]:
    """Convert the conversation: (system text, messages with tool_use/tool_result blocks)."""
    systems = [system] if system else []
    out: list[dict[str, Any]] = []

    def user_blocks() -> list[dict[str, Any]]:
        # Tool results must all sit in the one user message after the tool_use turn, so
        # consecutive tool and user messages are merged into a single block list.
        if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
            return out[-1]["content"]  # type: ignore[no-any-return]
        out.append({"role": "user", "content": []})
        return out[-1]["content"]  # type: ignore[no-any-return]

    for m in messages:
        if m.role == "system":
            systems.append(m.content)
        elif m.role == "user":
            if m.content:
                user_blocks().append({"type": "text", "text": m.content})
            user_blocks().extend(image_block(x) for x in m.media if x.kind == "image")
        elif m.role == "tool":
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": m.tool_call_id or ""}
            text = m.content or (json.dumps(m.structured_content) if m.structured_content is not None else "")
            images = [image_block(x) for x in m.media if x.kind == "image"]
            if images:  # a tool_result holds text and image blocks together
                block["content"] = ([{"type": "text", "text": text}] if text else []) + images
            elif text:
                block["content"] = text
            if m.is_error:
                block["is_error"] = True
            user_blocks().append(block)
        else:
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in m.tool_calls]
            if blocks:  # the API refuses an empty assistant message
                out.append({"role": "assistant", "content": blocks})
    if out and out[-1]["role"] == "assistant":
        # A trailing assistant turn (Continue after an interrupted reply) is a prefill, and the API
        # refuses a prefill that ends in whitespace.
        last = out[-1]["content"][-1]
        if last["type"] == "text":
            last["text"] = last["text"].rstrip()
            if not last["text"]:
                out[-1]["content"].pop()
                if not out[-1]["content"]:
                    out.pop()
    for msg in out:  # plain text turns read better (and cost nothing) as strings
        content = msg["content"]
        if len(content) == 1 and content[0]["type"] == "text":
            msg["content"] = content[0]["text"]
    return ("\n\n".join(s for s in systems if s) or None), out


def to_anthropic_tools(tools: list[ModelTool]) -> list[dict[str, Any]]:
    """Convert tools to the Messages API shape."""
    return [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools]


def map_error(exc: anthropic.AnthropicError, base_url: str) -> ProviderError:
    """Translate an SDK exception into a ProviderError with a useful hint."""
    import anthropic

    if isinstance(exc, anthropic.APIConnectionError):
        return ProviderError("network", f"could not reach Anthropic at {base_url}: {exc.message}",
                             hint="check your network connection")
    etype = getattr(exc, "type", None)
    status = getattr(exc, "status_code", None)
    detail = getattr(exc, "api_message", None) or getattr(exc, "message", None) or str(exc)
    if etype in ("authentication_error", "permission_error") or status in (401, 403):
        return ProviderError("auth", f"Anthropic refused the request: {detail}", hint=KEY_HINT)
    if etype == "rate_limit_error" or status == 429:
        return ProviderError("rate_limit", f"Anthropic rate limit: {detail}", hint="wait a moment and try again")
    if etype in ("overloaded_error", "api_error") or (status is not None and status >= 500):
        return ProviderError("server", f"Anthropic failed: {detail}", hint="try again in a moment")
    if _CONTEXT_RE.search(detail) or etype == "request_too_large" or status == 413:
        return ProviderError("context_length", f"the conversation is too long for this model: {detail}",
                             hint="start a new conversation or choose a model with a larger context")
    if status is not None and 400 <= status < 500:
        hint = "check the model name" if status == 404 else None
        return ProviderError("bad_request", f"Anthropic rejected the request ({status}): {detail}", hint=hint)
    return ProviderError("other", f"Anthropic error: {detail}")


@dataclass
class _ToolBlock:
    call_id: str
    name: str
    initial: dict[str, Any]
    parts: list[str] = field(default_factory=list)

    def end(self) -> ToolCallEnd:
        text = "".join(self.parts)
        args: Any = self.initial
        if text.strip():
            try:
                args = json.loads(text)
            except ValueError:
                args = None
            if not isinstance(args, dict):
                log.warning("tool call %s (%s): arguments are not a JSON object (%d chars)",
                            self.call_id, self.name, len(text))
                args = {}
        return ToolCallEnd(call_id=self.call_id, name=self.name, arguments=args)


def translate(event: Any, tools: dict[int, _ToolBlock], usage: dict[str, int | None]) -> list[AgentEvent]:
    """Agent events for one raw Messages stream event (usage is gathered, not emitted)."""
    kind = event.type
    if kind == "message_start":
        u = event.message.usage
        usage["input"] = (u.input_tokens or 0) + (u.cache_creation_input_tokens or 0) + (u.cache_read_input_tokens or 0)
        usage["output"] = u.output_tokens
    elif kind == "content_block_start" and event.content_block.type == "tool_use":
        block = event.content_block
        tools[event.index] = _ToolBlock(block.id, block.name, dict(block.input or {}))
        return [ToolCallStart(call_id=block.id, name=block.name)]
    elif kind == "content_block_delta":
        delta = event.delta
        if delta.type == "text_delta" and delta.text:
            return [TextDelta(text=delta.text)]
        if delta.type == "input_json_delta" and delta.partial_json and event.index in tools:
            tools[event.index].parts.append(delta.partial_json)
            return [ToolCallDelta(call_id=tools[event.index].call_id, arguments_delta=delta.partial_json)]
    elif kind == "content_block_stop" and event.index in tools:
        return [tools.pop(event.index).end()]
    elif kind == "message_delta":
        usage["output"] = event.usage.output_tokens
        if getattr(event.usage, "input_tokens", None) is not None:
            usage["input"] = event.usage.input_tokens
        usage["stop"] = event.delta.stop_reason  # type: ignore[assignment]
    return []


class AnthropicBackend(BaseBackend):
    """Claude through the Messages API, streamed."""

    backend_id = "anthropic"
    display_name = "Anthropic (Claude)"
    default_model = "claude-sonnet-4-5"
    supports_tools = True
    needs_key = True
    key_env_var = "ANTHROPIC_API_KEY"
    default_base_url = DEFAULT_BASE_URL
    base_url_env_var = "ANTHROPIC_BASE_URL"  # as the anthropic SDK reads it; a config value wins
    accepts_media = frozenset({"image"})
    Options: ClassVar[type[BackendOptions]] = AnthropicOptions

    def __init__(self, *, max_retries: int = 2, timeout: float = 600.0) -> None:
        self.max_retries = max_retries
        self.timeout = timeout

    def _params(self, request: AgentRequest) -> dict[str, Any]:
        try:
            opts = self.Options.model_validate(request.options).model_dump(exclude_none=True)
        except ValidationError as exc:
            raise ProviderError("bad_request", f"invalid options for anthropic: {exc}") from None
        system, messages = to_anthropic_messages(request.messages, request.system)
        params: dict[str, Any] = {
            "model": request.model or self.default_model,
            "messages": messages,
            "max_tokens": opts.get("max_tokens", DEFAULT_MAX_TOKENS),
            "stream": True,
        }
        if "effort" in opts:
            params["output_config"] = {"effort": opts["effort"]}
        if system:
            params["system"] = system
        if request.tools:
            params["tools"] = to_anthropic_tools(request.tools)
        return params

    async def list_models(self, base_url: str | None = None, api_key: str | None = None) -> list[str]:
        """The model ids the endpoint offers (GET {base}/v1/models); raises ProviderError."""
        import anthropic

        url = base_url or DEFAULT_BASE_URL
        if not api_key:
            raise NeedsKeyError("Anthropic needs an API key to list its models", hint=KEY_HINT)
        client = anthropic.AsyncAnthropic(api_key=api_key, base_url=url, max_retries=0, timeout=10.0)
        try:
            page = await client.models.list()
            return [m.id for m in page.data]
        except anthropic.AnthropicError as exc:
            raise map_error(exc, url) from exc
        finally:
            await client.close()

    async def stream(self, request: AgentRequest) -> AsyncIterator[AgentEvent]:
        """Stream one Messages API call as agent events."""
        import anthropic

        if not request.api_key:
            raise NeedsKeyError("Anthropic needs an API key", hint=KEY_HINT)
        base_url = request.base_url or DEFAULT_BASE_URL
        params = self._params(request)
        tools: dict[int, _ToolBlock] = {}
        usage: dict[str, Any] = {"input": None, "output": None, "stop": None}
        client = anthropic.AsyncAnthropic(
            api_key=request.api_key, base_url=base_url, max_retries=self.max_retries, timeout=self.timeout
        )
        try:
            stream = await client.messages.create(**params)
            async with stream:
                async for event in stream:
                    for out in translate(event, tools, usage):
                        yield out
            for block in tools.values():  # a stream that ended without closing its blocks
                yield block.end()
            if usage["input"] is not None or usage["output"] is not None:
                yield Usage(input_tokens=usage["input"], output_tokens=usage["output"])
            yield Done(stop_reason=_STOP.get(usage["stop"] or "", "other"))
        except anthropic.AnthropicError as exc:
            raise map_error(exc, base_url) from exc
        except httpx2.TransportError as exc:  # the connection dropped while streaming
            raise ProviderError("network", f"lost the connection to Anthropic at {base_url}: {exc}",
                                hint="check your network connection and try again") from exc
        finally:
            await client.close()
