"""What the views subsystem needs from the rest of the core, and its dispatcher from the host, as small protocols."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from moka_shell.errors import NoConversationsError

if TYPE_CHECKING:
    from moka_shell.core.views.display import DisplayMode
    from moka_shell.core.views.profile import HostProfile
    from moka_shell.core.views.view import View
    from moka_shell.registered import Registered

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


class HostSide(Protocol):
    """What the dispatcher asks of the view host: the lifecycle steps and the display it owns."""

    display_modes: dict[str, Registered[DisplayMode]]

    @property
    def profile(self) -> HostProfile | None:
        """The host profile in use (``moka check --profile``), if any."""
        ...

    def emit(self, event: str, data: Any) -> None:
        """Push an event to the page."""
        ...

    def on_initialized(self, view: View) -> None:
        """The view finished its handshake."""
        ...

    async def close(self, view: View, reason: str = "closed", *, park: bool = False) -> None:
        """Tear the view down."""
        ...

    async def request(self, view: View, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        """A host → view request."""
        ...

    def host_context(self, view: View) -> dict[str, Any]:
        """The view's hostContext now."""
        ...

    def available_wire_modes(self) -> list[str]:
        """The wire modes on offer."""
        ...

    def set_display_mode(self, view: View, mode_id: str) -> str:
        """Apply a display mode; the wire mode in effect."""
        ...

    def open_link(self, url: str) -> None:
        """Open a link outside Moka."""
        ...

    async def save_download(self, file: dict[str, Any]) -> None:
        """Hand a download to the shell."""
        ...


class NoChat:
    """The chat port of a run that keeps no conversations (``moka check``, ``tools``, ``call``, ``replay``).

    Such a run opens no store, so there is no conversation for a view's message to join and no
    next turn for its model context; sampling is not offered (hostCapabilities say so).
    """

    async def post_app_message(self, view: View, blocks: list[dict[str, Any]]) -> None:
        """Refused: there is no conversation to post to."""
        raise NoConversationsError("there is no chat to post this message to: this run keeps no conversations")

    def model_context_changed(self, view: View) -> None:
        """Nothing to do: no turn will read it."""

    def backend_configured(self) -> bool:
        """No model is asked in such a run."""
        return False

    def accepts_media(self) -> frozenset[str]:
        """No media: no model."""
        return frozenset()

    async def sample(self, params: dict[str, Any]) -> dict[str, Any]:
        """Refused: no model is asked in such a run."""
        raise NoConversationsError("sampling is not available: this run keeps no conversations")
