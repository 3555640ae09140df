"""Tools a live view registers (draft spec, "app-provided tools"), offered to the model while it lives.

A view that declares ``appCapabilities.tools`` is asked ``tools/list`` after its handshake and
again on ``notifications/tools/list_changed``. What it lists is checked and kept on the View
(``View.app_tools``) until its frame goes; the chat offers those of its conversation's live
views to the model under ``app__`` names (core/chat/tool_names.py) and runs a call with
``tools/call`` to that view. The draft's rules: registrations never outlive the view (nothing is
stored), a call to a view that is gone is an error, and the host bounds them (50 tools a view,
30 s a call, the 4 MiB result cap of every tool).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from moka_shell.core.mcp.catalog import cap_result
from moka_shell.core.views.view import View
from moka_shell.errors import BridgeError, ToolCallError

MAX_APP_TOOLS = 50
MAX_NAME = 128
APP_TOOL_TIMEOUT = 30.0
LIST_TIMEOUT = 5.0
Request = Callable[[View, str, dict[str, Any], float], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class AppTool:
    """One tool of one live view, in the shape the chat's tool naming reads (as a server tool's)."""

    view_id: str
    server: str
    name: str
    title: str | None
    description: str
    input_schema: dict[str, Any]
    annotations: dict[str, Any] | None
    app_title: str  # the view's tool title: what the person sees on the view's card
    resource_uri: None = None  # an app's tool has no view of its own
    model_visible: bool = True

    def describe(self) -> dict[str, str]:
        """``ToolCall.app``: which view's tool this is (the card says it is the app's)."""
        return {"viewId": self.view_id, "title": self.app_title}


def checked_tools(listed: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """The tools a ``tools/list`` answer names that Moka can offer, and what was wrong with the rest."""
    tools = listed.get("tools") if isinstance(listed, dict) else None
    if not isinstance(tools, list):
        return [], ["its tools/list answer has no 'tools' list"]
    kept: list[dict[str, Any]] = []
    problems: list[str] = []
    for tool in tools:
        name = tool.get("name") if isinstance(tool, dict) else None
        if not isinstance(name, str) or not name or len(name) > MAX_NAME:
            problems.append(f"a tool without a usable name (a string of 1 to {MAX_NAME} characters): {str(tool)[:80]}")
        elif any(t["name"] == name for t in kept):
            problems.append(f"the tool {name!r} is listed twice; the first is kept")
        elif len(kept) >= MAX_APP_TOOLS:
            problems.append(f"over {MAX_APP_TOOLS} tools; {name!r} and the rest are not offered")
            break
        else:
            kept.append(tool)
    return kept, problems


async def refresh(view: View, request: Request) -> list[str]:
    """Ask the view for its tools again (after its handshake, or when it says they changed)."""
    try:
        listed = await request(view, "tools/list", {}, LIST_TIMEOUT)
    except BridgeError as exc:
        view.app_tools = []
        return [f"its tools/list failed: {exc.message}"]
    view.app_tools, problems = checked_tools(listed) if view.live else ([], [])
    view.mark("app_tools")
    return problems


def offered(views: Iterable[View], conversation_id: str | None) -> list[AppTool]:
    """The tools the live views of one conversation offer now (a Tool runner view: ``None``)."""
    out: list[AppTool] = []
    for view in views:
        if not (view.live and view.initialized and view.app_tools) or view.conversation_id != conversation_id:
            continue
        for t in view.app_tools:
            schema = t.get("inputSchema")
            annotations = t.get("annotations")
            out.append(AppTool(
                view_id=view.id, server=view.server, name=t["name"],
                title=t["title"] if isinstance(t.get("title"), str) else None,
                description=t["description"] if isinstance(t.get("description"), str) else "",
                input_schema=schema if isinstance(schema, dict) and schema.get("type") == "object"
                else {"type": "object", "properties": {}},
                annotations=annotations if isinstance(annotations, dict) else None,
                app_title=view.tool.title or view.tool.name))
    return out


async def call(views: dict[str, View], request: Request, view_id: str, name: str,
               arguments: dict[str, Any]) -> dict[str, Any]:
    """``tools/call`` to the view that offered ``name``: its result, or a ToolCallError saying why not."""
    view = views.get(view_id)
    if view is None or not view.live or not view.initialized:
        raise ToolCallError(f"the app view that offered {name!r} is closed, so its tools are gone")
    if not any(t.get("name") == name for t in view.app_tools):
        raise ToolCallError(f"the app view no longer offers a tool {name!r}")
    try:
        result = await request(view, "tools/call", {"name": name, "arguments": arguments}, APP_TOOL_TIMEOUT)
    except BridgeError as exc:
        raise ToolCallError(f"the app's tool {name!r} failed: {exc.message}") from None
    if not isinstance(result.get("content", []), list):
        raise ToolCallError(f"the app's tool {name!r} answered without a content list")
    return cap_result({"content": [], **result})


async def settle(views: Iterable[View], timeout: float) -> None:
    """Wait (at most ``timeout`` s) until views a page is loading have listed their tools, if they have any.

    A view made by the step before may be what the model wants to use next; one no page loads
    (``moka chat``) is not waited for.
    """
    deadline = time.monotonic() + timeout
    waiting = [v for v in views if v.live and "document" in v.timings]
    while waiting and time.monotonic() < deadline:
        waiting = [v for v in waiting if v.live and (not v.initialized or (
            v.app_capabilities.get("tools") and "app_tools" not in v.timings))]
        if waiting:
            await asyncio.sleep(0.05)
