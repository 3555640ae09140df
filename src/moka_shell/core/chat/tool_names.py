"""Model-facing tool names: unique across servers and live app views, within provider limits, mapped back."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from moka_shell.core.chat.backends import ModelTool
from moka_shell.core.mcp.catalog import ToolEntry
from moka_shell.core.views.app_tools import AppTool

MAX_NAME = 64  # OpenAI and Anthropic both cap function names at 64 characters
APP_PREFIX = "app__"  # every tool of a view, and only those (a server tool that would look so is renamed)
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

    A server tool's name is prefixed with its server only when two servers offer the same tool
    name. A live view's tools (``app_tools``) are all named ``app__<tool>`` (``app__<server>__<tool>``
    when two views offer the same name), and their descriptions say whose they are, so the model
    cannot take one for a server's tool; a server tool whose name starts so gets its server's prefix.
    """

    def __init__(self, tools: Sequence[ToolEntry], app_tools: Sequence[AppTool] = ()) -> None:
        visible = [t for t in tools if t.model_visible]
        counts: dict[str, int] = {}
        for t in visible:
            counts[_safe(t.name)] = counts.get(_safe(t.name), 0) + 1
        self.by_name: dict[str, ToolEntry | AppTool] = {}
        for t in visible:
            base = _safe(t.name)
            clash = counts[base] > 1 or base.startswith(APP_PREFIX)
            self._add(f"{_safe(t.server)}__{base}" if clash else base, t)
        app_counts: dict[str, int] = {}
        for a in app_tools:
            app_counts[_safe(a.name)] = app_counts.get(_safe(a.name), 0) + 1
        for a in app_tools:
            base = _safe(a.name)
            self._add(APP_PREFIX + (f"{_safe(a.server)}__{base}" if app_counts[base] > 1 else base), a)

    def _add(self, name: str, tool: ToolEntry | AppTool) -> None:
        name = _fit(name)
        while name in self.by_name:  # pathological: prefixed names still collide
            name = _fit(name + "_")
        self.by_name[name] = tool

    def model_tools(self) -> list[ModelTool]:
        """What the provider receives."""
        return [ModelTool(name=n, description=_description(t),
                          input_schema=t.input_schema if t.input_schema.get("type") == "object"
                          else {"type": "object", "properties": {}})
                for n, t in self.by_name.items()]

    def resolve(self, model_name: str) -> ToolEntry | AppTool | None:
        """The server tool (or live view's tool) behind a model-facing name."""
        return self.by_name.get(model_name)


def _description(tool: ToolEntry | AppTool) -> str:
    own = tool.description or tool.title or tool.name
    if isinstance(tool, AppTool):
        return (f"{own}\n\n(A tool of the \"{tool.app_title}\" app view from server {tool.server}, open in this "
                "conversation: it acts on that view, not on the server, and exists only while the view is open.)")
    return own
