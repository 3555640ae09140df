"""Model-facing tool names: unique across servers, within provider limits, mapped back."""

from __future__ import annotations

import hashlib
import re

from moka_shell.core.chat.backends import ModelTool
from moka_shell.core.mcp.catalog import ToolEntry

MAX_NAME = 64  # OpenAI and Anthropic both cap function names at 64 characters
_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")


def _safe(name: str) -> str:
    return _ALLOWED.sub("_", name) or "tool"


def _fit(name: str) -> str:
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:8]
    return name[: MAX_NAME - 9] + "_" + digest


class ToolNames:
    """The tools a model may see (visibility includes "model"), under unique names.

    A name is prefixed with its server only when two servers offer the same tool name.
    """

    def __init__(self, tools: list[ToolEntry]) -> None:
        visible = [t for t in tools if t.model_visible]
        counts: dict[str, int] = {}
        for t in visible:
            counts[_safe(t.name)] = counts.get(_safe(t.name), 0) + 1
        self.by_name: dict[str, ToolEntry] = {}
        for t in visible:
            base = _safe(t.name)
            name = _fit(base if counts[base] == 1 else f"{_safe(t.server)}__{base}")
            while name in self.by_name:  # pathological: prefixed names still collide
                name = _fit(name + "_")
            self.by_name[name] = t

    def model_tools(self) -> list[ModelTool]:
        """What the provider receives."""
        return [ModelTool(name=n, description=t.description or t.title or t.name,
                          input_schema=t.input_schema if t.input_schema.get("type") == "object"
                          else {"type": "object", "properties": {}})
                for n, t in self.by_name.items()]

    def resolve(self, model_name: str) -> ToolEntry | None:
        """The server tool behind a model-facing name."""
        return self.by_name.get(model_name)
