"""Display modes: how a view is placed, and what the view is told about it."""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

WireMode = Literal["inline", "fullscreen", "pip"]
WIRE_MODES: tuple[WireMode, ...] = ("inline", "fullscreen", "pip")


@runtime_checkable
class DisplayMode(Protocol):
    """A display mode, registered through ``register_display_modes(register)``.

    ``mode_id`` is Moka's name (``popout`` is one); ``wire_mode`` is what the view is told.
    """

    mode_id: str
    wire_mode: WireMode
    label: str
    fixed_size: bool      # the host controls the size: reported sizes are ignored
    opens_window: bool    # rendered in its own window (desktop) or popup (browser)
