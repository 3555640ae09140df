"""Testing a plugin the way Moka loads it: through the real plugin host and its checks.

``registered(moka_hello, "backends")`` registers the module as Moka does at start and returns what
it registered, or fails with the reason Moka would give (a wrong hook name, a missing attribute, a
theme variable a view would reject). ``reply(backend, "hi")`` runs one model call and returns the text.
"""

from __future__ import annotations

import asyncio
from typing import Any

from moka_shell.core.chat.backends import AgentBackend, AgentRequest, ChatMessage, TextDelta
from moka_shell.plugins import REGISTRIES, PluginHost

__all__ = ["registered", "reply"]


def registered(plugin: Any, registry: str) -> dict[str, Any]:
    """What ``plugin`` (a module or object with hooks) registers in ``registry``, checked as Moka checks it.

    ``registry`` is one of ``backends``, ``themes``, ``display_modes`` or ``transports``.
    Raises AssertionError with Moka's own message when the plugin has a problem.
    """
    if registry not in REGISTRIES:
        raise ValueError(f"registry must be one of {', '.join(REGISTRIES)}, not {registry!r}")
    host = PluginHost(load_entrypoints=False, extra=[plugin])
    found = {key: reg.obj for key, reg in host.registry(registry).items() if not reg.plugin.startswith("moka.")}
    problems = [str(e) for e in host.broken()]
    if problems:
        raise AssertionError("; ".join(problems))
    return found


def reply(backend: AgentBackend, text: str, **request: Any) -> str:
    """The text ``backend`` streams back for one user message (``request``: more AgentRequest fields)."""

    async def collect() -> str:
        ask = AgentRequest(model=request.pop("model", backend.default_model),
                           messages=[ChatMessage(role="user", content=text)], **request)
        return "".join([e.text async for e in backend.stream(ask) if isinstance(e, TextDelta)])

    return asyncio.run(collect())
