"""Built-in OpenAI-compatible backends: OpenAI, OpenRouter and local servers.

One backend class, one instance per preset (OpenAI, Ollama, LM Studio, vLLM, llama.cpp,
OpenRouter), all through the official `openai` SDK's streaming chat completions.

Tool-call arguments that are not valid JSON when the stream ends are reported as
``ToolCallEnd(arguments={})``; the raw text has already gone out as ``ToolCallDelta``
events, so the core can tell the model what it sent. They are never "repaired" for
running: a half-written argument must not reach a tool.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, ValidationError

if TYPE_CHECKING:  # the SDK is imported on first use: it costs start-up time
    import openai

from moka_shell.core.chat.backends import (
    AgentEvent,
    AgentRequest,
    BackendOptions,
    BaseBackend,
    Done,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from moka_shell.builtins.openai_format import to_openai_messages, to_openai_tools, tool_result_text
from moka_shell.errors import NeedsKeyError, ProviderError
from moka_shell.hookspecs import hookimpl

__all__ = ["PRESETS", "OpenAICompatBackend", "OpenAIOptions", "Preset", "StreamAssembler", "to_openai_messages",
           "to_openai_tools", "tool_result_text"]

log = logging.getLogger(__name__)

# Local servers ignore the key but the SDK insists on one.
PLACEHOLDER_KEY = "not-needed"
PROBE_TIMEOUT = 0.5
_CONTEXT_RE = re.compile(
    r"context[ _-]?(length|window|size)|maximum context|too many tokens|prompt is too long|exceeds? the .*context",
    re.IGNORECASE,
)
StopReason = Literal["end_turn", "tool_use", "max_tokens", "other"]
_STOP: dict[str, StopReason] = {
    "stop": "end_turn", "tool_calls": "tool_use", "function_call": "tool_use", "length": "max_tokens",
}


@dataclass(frozen=True)
class Preset:
    """Where an OpenAI-compatible server lives and how it wants to be called."""

    backend_id: str
    display_name: str
    base_url: str
    default_model: str
    key_env_var: str | None = None
    needs_key: bool = False
    local: bool = False
    # OpenAI's newer models refuse `max_tokens`; other servers only know `max_tokens`.
    max_tokens_param: str = "max_tokens"
    headers: dict[str, str] = field(default_factory=dict)
    base_url_env_var: str | None = None  # the SDK's variable, honoured when the config sets no URL
    optional_key: bool = False  # sends a key when one is stored, works without
    accepts_media: frozenset[str] = frozenset({"image"})  # chat-completions image parts


PRESETS: tuple[Preset, ...] = (
    Preset("openai", "OpenAI", "https://api.openai.com/v1", "gpt-4.1-mini", "OPENAI_API_KEY", needs_key=True,
           max_tokens_param="max_completion_tokens", base_url_env_var="OPENAI_BASE_URL"),
    # Any other server that speaks chat completions: its URL comes from Settings (or OPENAI_BASE_URL);
    # a key is stored for it alone, so OPENAI_API_KEY never goes to an endpoint it was not meant for.
    Preset("custom", "OpenAI-compatible (custom)", "", "", base_url_env_var="OPENAI_BASE_URL", optional_key=True),
    Preset("ollama", "Ollama (local)", "http://127.0.0.1:11434/v1", "llama3.2", local=True),
    Preset("lmstudio", "LM Studio (local)", "http://127.0.0.1:1234/v1", "local-model", local=True),
    Preset("vllm", "vLLM (local)", "http://127.0.0.1:8000/v1", "default", "VLLM_API_KEY", local=True),
    Preset("llamacpp", "llama.cpp server (local)", "http://127.0.0.1:8080/v1", "default", local=True),
    Preset("openrouter", "OpenRouter", "https://openrouter.ai/api/v1", "openai/gpt-4.1-mini", "OPENROUTER_API_KEY",
           needs_key=True, headers={"X-Title": "Moka"}),
)


class OpenAIOptions(BackendOptions):
    """Sampling options every OpenAI-compatible server understands."""

    top_p: float | None = Field(default=None, ge=0, le=1, description="Nucleus sampling probability mass")


# ---- request conversion (openai_format.py) ----------------------------------------------


def parse_arguments(text: str) -> dict[str, Any] | None:
    """Parse complete tool arguments: {} for empty, None if not a JSON object."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
        if isinstance(value, str):  # some local models double-encode the arguments
            value = json.loads(value)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


# ---- stream assembly ------------------------------------------------------------------------


@dataclass
class _Call:
    call_id: str = ""
    name: str = ""
    started: bool = False
    parts: list[str] = field(default_factory=list)


class StreamAssembler:
    """Turns chat.completion.chunk objects into Moka agent events."""

    def __init__(self) -> None:
        self.calls: dict[int, _Call] = {}
        self.order: list[_Call] = []
        self.finish: str | None = None
        self.usage: Any = None

    def feed(self, chunk: Any) -> list[AgentEvent]:
        """Events for one chunk (text and tool-call pieces; usage is kept for the end)."""
        events: list[AgentEvent] = []
        if getattr(chunk, "usage", None) is not None:
            self.usage = chunk.usage  # some servers repeat it on every chunk: keep the last
        for choice in chunk.choices[:1]:
            delta = choice.delta
            if delta.content:
                events.append(TextDelta(text=delta.content))
            for tc in delta.tool_calls or []:
                events.extend(self._tool_delta(tc))
            if choice.finish_reason:
                self.finish = choice.finish_reason
        return events

    def _tool_delta(self, tc: Any) -> list[AgentEvent]:
        call = self.calls.get(tc.index)
        if call is None or (tc.id and call.call_id and tc.id != call.call_id):
            # A new id at a used index: some servers number every parallel call 0.
            call = self.calls[tc.index] = _Call()
            self.order.append(call)
        fn = tc.function
        call.call_id = call.call_id or tc.id or ""
        call.name = call.name or (fn.name if fn and fn.name else "")
        events: list[AgentEvent] = []
        if not call.started and call.name:
            call.call_id = call.call_id or f"call_{uuid.uuid4().hex[:24]}"
            call.started = True
            events.append(ToolCallStart(call_id=call.call_id, name=call.name))
            events.extend(ToolCallDelta(call_id=call.call_id, arguments_delta=p) for p in call.parts if p)
        if fn and fn.arguments:
            call.parts.append(fn.arguments)
            if call.started:
                events.append(ToolCallDelta(call_id=call.call_id, arguments_delta=fn.arguments))
        return events

    def finish_events(self) -> list[AgentEvent]:
        """ToolCallEnd for every call, then Usage and Done."""
        events: list[AgentEvent] = []
        for call in self.order:
            if not call.started:
                continue
            args = parse_arguments("".join(call.parts))
            if args is None:
                log.warning("tool call %s (%s): arguments are not a JSON object (%d chars)",
                            call.call_id, call.name, len("".join(call.parts)))
            events.append(ToolCallEnd(call_id=call.call_id, name=call.name, arguments=args or {}))
        if self.usage is not None:
            events.append(Usage(input_tokens=self.usage.prompt_tokens, output_tokens=self.usage.completion_tokens))
        has_calls = any(c.started for c in self.order)
        stop: StopReason = _STOP.get(self.finish or "", "other")
        if has_calls and stop == "end_turn":
            stop = "tool_use"  # Ollama has said "stop" after tool calls
        events.append(Done(stop_reason=stop))
        return events


# ---- errors ---------------------------------------------------------------------------------


def map_error(exc: openai.OpenAIError, preset: Preset, base_url: str) -> ProviderError:
    """Translate an SDK exception into a ProviderError with a useful hint."""
    import openai

    name = preset.display_name
    if isinstance(exc, openai.APIConnectionError):
        hint = (f"is {name} running? Start it, or point Moka at the right base URL"
                if preset.local else "check your network connection")
        return ProviderError("network", f"could not reach {name} at {base_url}: {exc.message}", hint=hint)
    detail = _provider_message(exc)
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        how = f"set {preset.key_env_var} or run `moka keys set {preset.backend_id}`" if preset.key_env_var \
            else f"check the API key your {name} server expects"
        return ProviderError("auth", f"{name} refused the request ({exc.status_code}): {detail}", hint=how)
    if isinstance(exc, openai.RateLimitError):
        return ProviderError("rate_limit", f"{name} rate limit: {detail}", hint="wait a moment and try again")
    if _CONTEXT_RE.search(detail) or getattr(exc, "code", None) == "context_length_exceeded":
        return ProviderError("context_length", f"the conversation is too long for this model: {detail}",
                             hint="start a new conversation or choose a model with a larger context")
    status = getattr(exc, "status_code", None)
    if status is None or status >= 500:
        return ProviderError("server", f"{name} failed: {detail}", hint="try again in a moment")
    fix = None
    if status == 404:
        fix = "pull the model first: `ollama pull MODEL`" if preset.backend_id == "ollama" else "check the model name"
    return ProviderError("bad_request", f"{name} rejected the request ({status}): {detail}", hint=fix)


def _provider_message(exc: openai.OpenAIError) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"]
    return getattr(exc, "message", None) or str(exc)


# ---- the backend ----------------------------------------------------------------------------


class OpenAICompatBackend(BaseBackend):
    """An OpenAI-compatible chat-completions server, configured by a preset."""

    Options: ClassVar[type[BackendOptions]] = OpenAIOptions
    supports_tools = True

    def __init__(self, preset: Preset, *, max_retries: int = 2, timeout: float = 600.0) -> None:
        self.preset = preset
        self.backend_id = preset.backend_id
        self.display_name = preset.display_name
        self.default_model = preset.default_model
        self.needs_key = preset.needs_key
        self.key_env_var = preset.key_env_var
        self.default_base_url = preset.base_url or None
        self.base_url_env_var = preset.base_url_env_var
        self.optional_key = preset.optional_key
        self.accepts_media = preset.accepts_media
        self.max_retries = max_retries
        self.timeout = timeout

    def _base_url(self, given: str | None) -> str:
        url = given or self.preset.base_url
        if not url:
            raise ProviderError("bad_request", f"{self.display_name} has no base URL",
                                hint="set one in Settings → Model (Base URL), or set OPENAI_BASE_URL")
        return url

    def _client(self, base_url: str, api_key: str | None, *, timeout: float, retries: int) -> openai.AsyncOpenAI:
        import openai

        return openai.AsyncOpenAI(
            api_key=api_key or PLACEHOLDER_KEY, base_url=base_url, timeout=timeout,
            max_retries=retries, default_headers=self.preset.headers or None,
        )

    def _params(self, request: AgentRequest) -> dict[str, Any]:
        try:
            opts = self.Options.model_validate(request.options)
        except ValidationError as exc:
            raise ProviderError("bad_request", f"invalid options for {self.backend_id}: {exc}") from None
        params: dict[str, Any] = {
            "model": request.model or self.default_model,
            "messages": to_openai_messages(request.messages, request.system),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            params["tools"] = to_openai_tools(request.tools)
        values = opts.model_dump(exclude_none=True)
        if "max_tokens" in values:
            params[self.preset.max_tokens_param] = values.pop("max_tokens")
        params.update(values)
        return params

    async def stream(self, request: AgentRequest) -> AsyncIterator[AgentEvent]:
        """Stream one chat completion as agent events."""
        import openai

        if self.needs_key and not request.api_key:
            raise NeedsKeyError(f"{self.display_name} needs an API key",
                                hint=f"set {self.key_env_var} or run `moka keys set {self.backend_id}`")
        base_url = self._base_url(request.base_url)
        params = self._params(request)
        assembler = StreamAssembler()
        client = self._client(base_url, request.api_key, timeout=self.timeout, retries=self.max_retries)
        try:
            stream = await client.chat.completions.create(**params)
            async with stream:
                async for chunk in stream:
                    for event in assembler.feed(chunk):
                        yield event
            for event in assembler.finish_events():
                yield event
        except openai.OpenAIError as exc:
            raise map_error(exc, self.preset, base_url) from exc
        finally:
            await client.close()

    async def list_models(self, base_url: str | None = None, api_key: str | None = None) -> list[str]:
        """The model ids the server offers (GET {base}/models); raises ProviderError."""
        import openai

        url = self._base_url(base_url)
        client = self._client(url, api_key, timeout=10.0, retries=0)
        try:
            page = await client.models.list()
            return [m.id for m in page.data]
        except openai.OpenAIError as exc:
            raise map_error(exc, self.preset, url) from exc
        finally:
            await client.close()

    async def probe(self, base_url: str | None = None) -> bool:
        """True if a server answers GET {base}/models within half a second."""
        # A plain GET, not the SDK: Settings probes the local backends on every page load, and
        # importing openai for that cost the desktop app 13 MiB (docs/performance.md §17).
        import httpx2

        url = base_url or self.preset.base_url
        if not url:
            return False
        headers = {**(self.preset.headers or {}), "Authorization": f"Bearer {PLACEHOLDER_KEY}"}
        try:
            async with httpx2.AsyncClient(timeout=PROBE_TIMEOUT) as client:
                response = await client.get(url.rstrip("/") + "/models", headers=headers)
        except httpx2.HTTPError:
            return False
        # 401/403: it is there; it only wants a key. Anything else but 2xx is not a backend.
        return response.is_success or response.status_code in (401, 403)


@hookimpl
def register_agent_backends(register: Any) -> None:
    """Register one OpenAI-compatible backend per preset."""
    for preset in PRESETS:
        register(OpenAICompatBackend(preset))
