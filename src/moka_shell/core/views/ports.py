"""What the views subsystem needs from the rest of the core, as small protocols."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from moka_shell.core.views.view import View

# (server, tool, context) → plugins' extras; awaited once per view, off the core loop (plugins may block)
HostContextHook = Callable[[str, str, dict[str, Any]], Awaitable[list[Any]]]
ConsentAsk = Callable[[str, str, dict[str, Any]], Awaitable[bool]]  # (action, server, detail) → allowed?


class ChatPort(Protocol):
    """The chat side of a view: its messages, its model context, and sampling."""

    async def post_app_message(self, view: View, blocks: list[dict[str, Any]]) -> None:
        """``ui/message``: the view's message becomes a turn of its conversation."""
        ...

    def model_context_changed(self, view: View) -> None:
        """``ui/update-model-context``: the view's context goes with the next turn."""
        ...

    def backend_configured(self) -> bool:
        """Can a model be asked right now (for sampling)?"""
        ...

    def accepts_media(self) -> frozenset[str]:
        """The media kinds (``image``…) the selected backend takes."""
        ...

    async def sample(self, params: dict[str, Any]) -> dict[str, Any]:
        """``sampling/createMessage`` with the current backend."""
        ...
