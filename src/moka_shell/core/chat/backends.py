"""The agent backend contract: what a model backend plugin implements.

Shaped after simonw/llm's models: a backend declares its capabilities, its options
as a pydantic model, and implements one async streaming method. The agent loop
(tool calling, cancellation, persistence) lives in the core, once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field


class BackendOptions(BaseModel):
    """Base for a backend's options; unknown keys are an error, not silently dropped."""

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = Field(default=None, ge=0, le=2, description="Sampling temperature")
    max_tokens: int | None = Field(default=None, gt=0, description="Upper bound on output tokens")


# ---- what goes to a backend ---------------------------------------------------------------


class ModelTool(BaseModel):
    """A tool offered to the model, under a name unique across servers."""

    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class ToolCallRecord(BaseModel):
    """A tool call the model made, as kept in the conversation."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class MediaPart(BaseModel):
    """An image (or other media) that goes to the model beside a message's text, base64-encoded.

    The core only hands a backend the kinds it declares in ``accepts_media``; everything else
    has become a line of text already (core/chat/media.py).
    """

    kind: Literal["image", "audio"]
    mime_type: str
    data: str  # base64, no data: prefix
    name: str | None = None


class ChatMessage(BaseModel):
    """One message of the conversation, in a provider-neutral shape."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    # user and tool messages may carry images for the model (see MediaPart)
    media: list[MediaPart] = Field(default_factory=list)
    # assistant messages may carry tool calls; tool messages answer one of them
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    tool_call_id: str | None = None
    # for tool messages: the model-facing tool name, whether the call failed, and the
    # structuredContent (a backend may pass it where its provider expects it)
    name: str | None = None
    is_error: bool = False
    structured_content: Any = None


class AgentRequest(BaseModel):
    """Everything a backend needs for one model call."""

    model: str
    messages: list[ChatMessage]
    tools: list[ModelTool] = Field(default_factory=list)
    system: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    api_key: str | None = None
    base_url: str | None = None


# ---- what comes back (streamed) ------------------------------------------------------------


class TextDelta(BaseModel):
    """A piece of the assistant's text."""

    type: Literal["text"] = "text"
    text: str


class ToolCallStart(BaseModel):
    """The model began a tool call."""

    type: Literal["tool_call_start"] = "tool_call_start"
    call_id: str
    name: str


class ToolCallDelta(BaseModel):
    """A raw fragment of a tool call's JSON arguments, as the provider streams it."""

    type: Literal["tool_call_delta"] = "tool_call_delta"
    call_id: str
    arguments_delta: str


class ToolCallEnd(BaseModel):
    """A tool call is complete; `arguments` is the parsed object."""

    type: Literal["tool_call_end"] = "tool_call_end"
    call_id: str
    name: str
    arguments: dict[str, Any]


class Usage(BaseModel):
    """Token usage of the call, if the provider reports it."""

    type: Literal["usage"] = "usage"
    input_tokens: int | None = None
    output_tokens: int | None = None


class Done(BaseModel):
    """The model stopped; `stop_reason` is provider-neutral."""

    type: Literal["done"] = "done"
    stop_reason: Literal["end_turn", "tool_use", "max_tokens", "other"] = "end_turn"


AgentEvent = TextDelta | ToolCallStart | ToolCallDelta | ToolCallEnd | Usage | Done


@runtime_checkable
class AgentBackend(Protocol):
    """A model backend: registered through `register_agent_backends(register)`.

    Class attributes declare what it is; `stream` does the work. Raise
    `moka_shell.errors.ProviderError` (with a `kind`) for provider failures and
    `NeedsKeyError` when a key is required but missing.
    """

    backend_id: str
    display_name: str
    default_model: str
    supports_tools: bool
    needs_key: bool
    key_env_var: str | None
    default_base_url: str | None
    Options: ClassVar[type[BackendOptions]]

    def stream(self, request: AgentRequest) -> AsyncIterator[AgentEvent]:
        """Stream one model call: text deltas, tool calls (start, deltas, end), usage, done."""
        ...


class BaseBackend:
    """Optional base class with sensible defaults for backend authors."""

    backend_id: str = ""
    display_name: str = ""
    default_model: str = ""
    supports_tools: bool = True
    needs_key: bool = False
    key_env_var: str | None = None
    default_base_url: str | None = None
    # Optional declarations the core reads with getattr (older plugins need not have them):
    base_url_env_var: str | None = None  # the SDK's own variable for the base URL, e.g. OPENAI_BASE_URL
    optional_key: bool = False  # takes a key if given one (a custom endpoint), without needing it
    accepts_media: frozenset[str] = frozenset()  # MediaPart kinds sent to the model; others become text
    Options: ClassVar[type[BackendOptions]] = BackendOptions

    def stream(self, request: AgentRequest) -> AsyncIterator[AgentEvent]:
        """Stream one model call (must be implemented)."""
        raise NotImplementedError("The 'stream' method must be implemented.")

    async def probe(self, base_url: str | None = None) -> bool:
        """Return True if a local server for this backend answers (used to suggest one)."""
        return False
