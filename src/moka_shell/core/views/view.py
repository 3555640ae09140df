"""A view: one rendering of a tool's UI resource, and the ordering rules of what it receives.

Nothing goes to a view before it says ``ui/notifications/initialized`` (except the answer
to ``ui/initialize``). Then it gets ``tool-input`` once, before ``tool-result`` or
``tool-cancelled``; a repeated handshake replays both.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from moka_shell.core.mcp.catalog import ToolEntry, UiResource
from moka_shell.core.views.csp import ViewPolicy

ViewState = Literal["loading", "ready", "failed", "parked", "closed"]


@dataclass
class View:
    """Everything Moka knows about one view."""

    id: str
    server: str
    tool: ToolEntry
    call_id: str
    resource: UiResource
    policy: ViewPolicy
    display_mode: str = "inline"
    conversation_id: str | None = None
    message_id: str | None = None
    record_id: str | None = None
    key: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    state: ViewState = "loading"
    initialized: bool = False
    arguments: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    cancelled: str | None = None
    failure: str | None = None
    app_info: dict[str, Any] = field(default_factory=dict)
    app_capabilities: dict[str, Any] = field(default_factory=dict)
    model_context: dict[str, Any] | None = None
    app_tools: list[dict[str, Any]] = field(default_factory=list)  # tools the view offers (moka check reports them)
    context_extras: list[Any] = field(default_factory=list)  # plugins' hostContext additions, asked once
    viewport: dict[str, Any] = field(default_factory=dict)
    height: int | None = None
    queue: list[dict[str, Any]] = field(default_factory=list)
    pending: dict[int, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    inflight: dict[Any, asyncio.Task[Any]] = field(default_factory=dict)
    next_id: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    parking: bool = False  # a teardown for parking is under way
    released: bool = False  # ended or parked, its input and result dropped (core/views/retention.py)

    def mark(self, what: str) -> None:
        """Record when a lifecycle step happened (perf_counter seconds)."""
        self.timings.setdefault(what, time.perf_counter())

    @property
    def live(self) -> bool:
        """True while a frame for this view may exist."""
        return self.state in ("loading", "ready")

    def new_request_id(self) -> int:
        """Ids for host → view requests (the view's own ids are a separate space)."""
        self.next_id += 1
        return self.next_id

    def data_messages(self) -> list[dict[str, Any]]:
        """What a freshly initialized view must get: input, then result or cancellation."""
        out: list[dict[str, Any]] = []
        if self.arguments is not None:
            out.append(notification("ui/notifications/tool-input", {"arguments": self.arguments}))
            if self.result is not None:
                out.append(notification("ui/notifications/tool-result", self.result))
            elif self.cancelled is not None:
                out.append(notification("ui/notifications/tool-cancelled", {"reason": self.cancelled}))
        elif self.cancelled is not None:
            # A call that failed before its arguments were complete still ends visibly.
            out.append(notification("ui/notifications/tool-input", {"arguments": {}}))
            out.append(notification("ui/notifications/tool-cancelled", {"reason": self.cancelled}))
        return out


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A JSON-RPC notification object (params omitted when None)."""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg
