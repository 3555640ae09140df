"""Sampling: a server or a view asks the model for one message, with the person's consent."""

from __future__ import annotations

from typing import Any

from moka_shell.config import MokaConfig
from moka_shell.core.chat.approval import Approvals
from moka_shell.core.chat.backends import AgentBackend, AgentRequest, ChatMessage, Done, TextDelta
from moka_shell.core.chat.media import deliver_blocks
from moka_shell.core.views.ports import ChatPort, ConsentAsk
from moka_shell.errors import AgentError
from moka_shell.inspector import Inspector


def sampling_messages(params: dict[str, Any], accepts: frozenset[str] = frozenset()) -> list[ChatMessage]:
    """``sampling/createMessage`` messages as chat messages: images go along when the backend takes them."""
    messages = []
    for m in params.get("messages") or []:
        content = m.get("content")
        blocks = content if isinstance(content, list) else [content]
        out = deliver_blocks(blocks, frozenset() if m.get("role") == "assistant" else accepts)
        messages.append(ChatMessage(role="assistant" if m.get("role") == "assistant" else "user",
                                    content=out.text(), media=out.media))
    return messages


_STOP_REASONS = {"end_turn": "endTurn", "max_tokens": "maxTokens", "tool_use": "endTurn"}


def sampling_options(backend: AgentBackend, params: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with the request's ``maxTokens`` and ``temperature``, each kept only if the backend takes it."""
    wanted = {"max_tokens": params.get("maxTokens"), "temperature": params.get("temperature")}
    out = dict(options)
    schema = getattr(backend, "Options", None)
    for key, value in wanted.items():
        if value is None:
            continue
        trial = {**out, key: value}
        try:
            if schema is not None:
                schema.model_validate(trial)
        except ValueError:  # e.g. a backend that offers no temperature: leave it out, never fail the request
            continue
        out = trial
    return out


async def sample_once(backend: AgentBackend, request: AgentRequest,
                      params: dict[str, Any] | None = None) -> dict[str, Any]:
    """One tool-less call; the ``CreateMessageResult`` shape.

    With the request's ``params``: ``maxTokens`` and ``temperature`` go to the backend where it takes
    them, and the text ends at the first of ``stopSequences`` (``stopReason: "stopSequence"``).
    """
    params = params or {}
    request.options = sampling_options(backend, params, request.options)
    stops = [s for s in params.get("stopSequences") or [] if isinstance(s, str) and s]
    text, reason = "", "endTurn"
    async for event in backend.stream(request):
        if isinstance(event, TextDelta):
            text += event.text
            cut = min((i for i in (text.find(s) for s in stops) if i >= 0), default=-1)
            if cut >= 0:
                text, reason = text[:cut], "stopSequence"
                break  # the rest is not wanted; leaving the stream ends the call
        elif isinstance(event, Done):
            reason = _STOP_REASONS.get(event.stop_reason, "endTurn")
    return {"role": "assistant", "content": {"type": "text", "text": text}, "model": request.model,
            "stopReason": reason}


class ServerSampling:
    """``sampling/createMessage`` from an MCP server: only after the person allows it."""

    def __init__(self, *, chat: ChatPort, consent: ConsentAsk, approvals: Approvals, config: MokaConfig,
                 inspector: Inspector) -> None:
        self._chat = chat
        self._consent = consent
        self._approvals = approvals  # who can be asked now, and what was refused because nobody could
        self._config = config
        self._inspector = inspector

    async def __call__(self, server: str, params: dict[str, Any]) -> dict[str, Any]:
        """Ask, then answer with the current backend (AgentError when refused or impossible)."""
        self._inspector.record("agent", {"event": "sampling-request", "server": server,
                                         "messages": len(params.get("messages") or [])}, server=server,
                               method="sampling/createMessage")
        if not await self._consent("sampling", server, {"messages": params.get("messages"),
                                                        "systemPrompt": params.get("systemPrompt")}):
            approvals = self._approvals
            if self._config.consent.sampling == "ask" and not approvals.can_ask():
                # Said at once (never after a wait): nobody is there to allow it, e.g. in `moka chat`.
                refusal = (f"{server!r} asked to use the model (sampling), and nobody can allow it here. "
                           'To allow it in `moka chat`, set "consent": {"sampling": "allow"} in the config.')
                approvals.unanswered.append(refusal)
                raise AgentError(refusal)
            raise AgentError(f"the person did not allow {server!r} to use the model")
        if not self._chat.backend_configured():
            raise AgentError("no model backend is set up for sampling")
        return await self._chat.sample(params)
