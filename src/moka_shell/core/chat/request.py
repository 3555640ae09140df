"""One model request: which backend and model (the conversation's own, else the config's), the key,
the base URL (config, then the SDK's environment variable, then the default) and the system prompt."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from moka_shell.config import AgentSettings
from moka_shell.core.chat.backends import AgentBackend, AgentRequest, ChatMessage
from moka_shell.core.chat.endpoints import api_key, resolve_endpoint
from moka_shell.errors import AgentError, NeedsKeyError
from moka_shell.registered import Registered


@dataclass(frozen=True)
class Choice:
    """The backend, model and system prompt one conversation uses."""

    backend: str | None
    model: str | None
    system: str | None


def choose(agent: AgentSettings, own: dict[str, Any], backend: str | None = None, model: str | None = None) -> Choice:
    """What a turn uses: what the caller names, else the conversation's own pair, else the config's.

    A conversation keeps a backend and model as a pair; the config's model goes only with the
    config's backend.
    """
    system = own.get("systemPrompt") or agent.system_prompt
    if backend:
        return Choice(backend, model or (agent.model if backend == agent.backend else None), system)
    if own.get("backend"):
        return Choice(own["backend"], model or own.get("model"), system)
    return Choice(agent.backend, model or agent.model, system)


def build_request(backend: AgentBackend, agent: AgentSettings, model: str | None, system: str | None,
                  messages: list[ChatMessage], tools: list[Any]) -> AgentRequest:
    """The request for ``backend``; NeedsKeyError or AgentError say what is missing and where to set it."""
    key = api_key(backend)
    if backend.needs_key and not key:
        raise NeedsKeyError(f"the {backend.display_name} backend needs an API key",
                            hint=f"set {backend.key_env_var} or run `moka keys set {backend.backend_id}` "
                                 "(or add it in Settings → Model)")
    chosen = model or backend.default_model
    if not chosen:
        raise AgentError(f"no model is chosen for {backend.display_name}",
                         hint="pick one in Settings → Model (Test connection lists the endpoint's models)")
    options = backend.Options.model_validate(agent.options if agent.backend == backend.backend_id else {})
    endpoint = resolve_endpoint(backend, agent)
    return AgentRequest(model=chosen, messages=messages, tools=tools, system=system,
                        options=options.model_dump(exclude_none=True), api_key=key, base_url=endpoint.url)


async def detect_local(backends: dict[str, Registered[AgentBackend]], agent: AgentSettings) -> list[str]:
    """Local backends that answer right now (Ollama, LM Studio, ...), at their configured or default URL."""
    found = []
    for bid in ("ollama", "lmstudio", "llamacpp", "vllm"):
        reg = backends.get(bid)
        probe = getattr(reg.obj, "probe", None) if reg else None
        if reg is not None and probe is not None:
            try:
                if await probe(resolve_endpoint(reg.obj, agent).url):
                    found.append(bid)
            except Exception:  # a probe must never break settings
                continue
    return found
