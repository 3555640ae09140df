"""Sampling: a server or a view asks the model for one message, with the person's consent."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from moka_shell.core.chat.backends import AgentBackend, AgentRequest, ChatMessage, TextDelta
from moka_shell.core.views.ports import ConsentAsk
from moka_shell.errors import AgentError
from moka_shell.inspector import Inspector

if TYPE_CHECKING:
    from moka_shell.core.chat.engine import ChatEngine


def sampling_messages(params: dict[str, Any]) -> list[ChatMessage]:
    """``sampling/createMessage`` messages as chat messages (text blocks only)."""
    messages = []
    for m in params.get("messages") or []:
        content = m.get("content")
        blocks = content if isinstance(content, list) else [content]
        text = "\n".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
        messages.append(ChatMessage(role="assistant" if m.get("role") == "assistant" else "user", content=text))
    return messages


async def sample_once(backend: AgentBackend, request: AgentRequest) -> dict[str, Any]:
    """One tool-less call; the ``CreateMessageResult`` shape."""
    text = ""
    async for event in backend.stream(request):
        if isinstance(event, TextDelta):
            text += event.text
    return {"role": "assistant", "content": {"type": "text", "text": text}, "model": request.model,
            "stopReason": "endTurn"}


class ServerSampling:
    """``sampling/createMessage`` from an MCP server: only after the person allows it."""

    def __init__(self, chat: ChatEngine, consent: ConsentAsk, inspector: Inspector) -> None:
        self._chat = chat
        self._consent = consent
        self._inspector = inspector

    async def __call__(self, server: str, params: dict[str, Any]) -> dict[str, Any]:
        """Ask, then answer with the current backend (AgentError when refused or impossible)."""
        self._inspector.record("agent", {"event": "sampling-request", "server": server,
                                         "messages": len(params.get("messages") or [])}, server=server,
                               method="sampling/createMessage")
        if not await self._consent("sampling", server, {"messages": params.get("messages"),
                                                        "systemPrompt": params.get("systemPrompt")}):
            approvals = self._chat.approvals
            if self._chat.config.consent.sampling == "ask" and not approvals.can_ask():
                # Said at once (never after a wait): nobody is there to allow it, e.g. in `moka chat`.
                refusal = (f"{server!r} asked to use the model (sampling), and nobody can allow it here. "
                           'To allow it in `moka chat`, set "consent": {"sampling": "allow"} in the config.')
                approvals.unanswered.append(refusal)
                raise AgentError(refusal)
            raise AgentError(f"the person did not allow {server!r} to use the model")
        if not self._chat.backend_configured():
            raise AgentError("no model backend is set up for sampling")
        return await self._chat.sample(params)
