"""A tool call the model made, as the chat loop tracks it (converted to the wire shape at the edge)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from moka_shell.core.views.view import View

# "approval": waiting for the person to allow it; "denied": they (or their saved choice) said no.
CallStatus = Literal["streaming", "approval", "running", "done", "error", "cancelled", "denied"]
OPEN_STATUSES: frozenset[str] = frozenset({"streaming", "approval", "running"})  # no answer yet


@dataclass
class ToolCall:
    """One tool call of one assistant message.

    ``id`` is Moka's own and unique (the store, the UI and the views key on it). ``provider_id`` is
    whatever the model server called it: unique within one response at most, reused across responses
    by some servers, empty or missing with others. It is data, used only to answer the model.
    """

    id: str
    server: str  # "?" when the model named a tool no server has
    tool: str
    model_name: str
    message_id: str
    arguments: dict[str, Any] = field(default_factory=dict)
    status: CallStatus = "streaming"
    result: dict[str, Any] | None = None
    error: str | None = None
    view: View | None = None
    approval: dict[str, Any] | None = None  # what the approval card shows, while status is "approval"
    provider_id: str = ""
    app: dict[str, str] | None = None  # a live view's own tool: {"viewId", "title"} (core/views/app_tools.py)

    @property
    def known(self) -> bool:
        """Did the model name a tool that exists?"""
        return self.server != "?"

    @property
    def policy_tool(self) -> str:
        """The name the person's standing approval choices know this tool by (an app's are kept apart)."""
        return f"app:{self.tool}" if self.app else self.tool

    def to_json(self) -> dict[str, Any]:
        """The ``ToolCall`` shape of docs/bridge-api.md (and of the store's rows)."""
        out: dict[str, Any] = {"id": self.id, "server": self.server, "tool": self.tool, "modelName": self.model_name,
                               "arguments": self.arguments, "status": self.status}
        if self.result is not None:
            out["result"] = self.result
        if self.error is not None:
            out["error"] = self.error
        if self.approval is not None:
            out["approval"] = self.approval
        if self.provider_id:
            out["providerId"] = self.provider_id
        if self.app is not None:
            out["app"] = self.app
        if self.view is not None:
            out["viewId"] = self.view.id
            out["recordId"] = self.view.record_id or self.view.id
        return out
