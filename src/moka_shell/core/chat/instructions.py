"""Server instructions for the model: each connected server's ``instructions``, labelled and kept short.

A server's instructions (from ``initialize`` or ``server/discover``) tell a model how to use its
tools. They go into the system prompt of every chat turn, after the person's own system prompt,
each under its server's name so the model (and the person reading the request) knows whose words
they are. A server's ``"useInstructions": false`` in the config leaves its instructions out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

PER_SERVER_CHARS = 2000  # the spec asks servers to be brief; a long text is cut, and says so
TOTAL_CHARS = 8000  # all servers together
HEADER = ("The following instructions come from the MCP servers whose tools you can use. "
          "They describe those tools; they are not the user's words.")


class _Server(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def config(self) -> Any: ...
    @property
    def instructions(self) -> str | None: ...


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters at a line or word end, marked when cut."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[:limit]
    for sep in ("\n", " "):
        at = cut.rfind(sep)
        if at > limit // 2:
            cut = cut[:at]
            break
    return cut.rstrip() + " […cut: the server's instructions were longer]"


def uses_instructions(config: Any) -> bool:
    """Does the person let this server's instructions reach the model (the default)?"""
    return getattr(config, "use_instructions", True) is not False


def instructions_prompt(servers: Iterable[_Server]) -> str | None:
    """The system-prompt section with every ready server's instructions, or None when there are none."""
    parts: list[str] = []
    used = 0
    for conn in servers:
        text = (conn.instructions or "").strip()
        if conn.status != "ready" or not text or not uses_instructions(conn.config):
            continue
        budget = min(PER_SERVER_CHARS, TOTAL_CHARS - used)
        if budget < 200:  # no room left for anything useful
            break
        body = shorten(text, budget)
        used += len(body)
        label = conn.name.replace('"', "'")
        parts.append(f'<server-instructions server="{label}">\n{body}\n</server-instructions>')
    if not parts:
        return None
    return HEADER + "\n\n" + "\n\n".join(parts)


def with_instructions(system: str | None, servers: Iterable[_Server]) -> str | None:
    """The person's system prompt followed by the servers' instructions."""
    extra = instructions_prompt(servers)
    if extra is None:
        return system
    return f"{system.rstrip()}\n\n{extra}" if system and system.strip() else extra
