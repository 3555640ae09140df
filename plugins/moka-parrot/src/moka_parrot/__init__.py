"""moka-parrot: a model backend that repeats you, word by word. No network, no key."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any, ClassVar

from pydantic import Field, ValidationError

from moka_shell import (
    AgentEvent,
    AgentRequest,
    BackendOptions,
    BaseBackend,
    Done,
    ProviderError,
    RegisterBackend,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
    hookimpl,
)


class ParrotOptions(BackendOptions):
    """The parrot's options: its own, plus temperature and max_tokens from BackendOptions."""

    uppercase: bool = Field(default=False, description="Shout the words back")


class ParrotBackend(BaseBackend):
    """Repeats the last message; "/tool NAME {json}" makes it call a tool instead."""

    backend_id = "parrot"
    display_name = "Parrot (repeats you, offline)"
    default_model = "parrot-1"
    supports_tools = True
    needs_key = False
    Options: ClassVar[type[BackendOptions]] = ParrotOptions

    def __init__(self, delay: float = 0.02) -> None:
        self.delay = delay  # seconds between pieces, so you can watch it stream

    async def stream(self, request: AgentRequest) -> AsyncIterator[AgentEvent]:
        """Answer one model call as a stream of events."""
        try:
            options = ParrotOptions.model_validate(request.options)
        except ValidationError as exc:
            raise ProviderError("bad_request", f"invalid parrot options: {exc}") from None
        last = request.messages[-1] if request.messages else None
        if last is not None and last.role == "user" and last.content.startswith("/tool "):
            async for event in self._call_tool(last.content, request):
                yield event
            return
        if last is None:
            text = "Say something!"
        elif last.role == "tool":
            text = f"The tool {'failed' if last.is_error else 'said'}: {last.content}"
        else:
            text = last.content
        words = re.findall(r"\S+\s*", text)
        for word in words:
            await asyncio.sleep(self.delay)
            yield TextDelta(text=word.upper() if options.uppercase else word)
        yield Usage(input_tokens=sum(len(m.content.split()) for m in request.messages), output_tokens=len(words))
        yield Done(stop_reason="end_turn")

    async def _call_tool(self, command: str, request: AgentRequest) -> AsyncIterator[AgentEvent]:
        # "/tool NAME {json}": the name, then the arguments as a JSON object.
        parts = command.split(maxsplit=2)
        name = parts[1] if len(parts) > 1 else ""
        try:
            arguments: Any = json.loads(parts[2]) if len(parts) > 2 else {}
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            raise ProviderError("bad_request", "write /tool NAME {\"arg\": \"value\"}")
        offered = [tool.name for tool in request.tools]
        if name not in offered:
            raise ProviderError("bad_request", f"no tool named {name!r}", hint=f"tools: {', '.join(offered)}")
        call_id = f"parrot_{uuid.uuid4().hex[:12]}"
        yield ToolCallStart(call_id=call_id, name=name)
        # Real models stream the JSON arguments in fragments; so does the parrot.
        text = json.dumps(arguments)
        for start in range(0, len(text), 8):
            await asyncio.sleep(self.delay)
            yield ToolCallDelta(call_id=call_id, arguments_delta=text[start : start + 8])
        yield ToolCallEnd(call_id=call_id, name=name, arguments=arguments)
        yield Done(stop_reason="tool_use")


@hookimpl
def register_agent_backends(register: RegisterBackend) -> None:
    """Tell Moka about the parrot."""
    register(ParrotBackend())
