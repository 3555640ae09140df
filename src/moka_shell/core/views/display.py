"""Display modes: how a view is placed, and what the view is told about it."""

from __future__ import annotations

import re
from typing import Literal, Protocol, runtime_checkable

WireMode = Literal["inline", "fullscreen", "pip"]
WIRE_MODES: tuple[WireMode, ...] = ("inline", "fullscreen", "pip")


@runtime_checkable
class DisplayMode(Protocol):
    """A display mode, registered through ``register_display_modes(register)``.

    ``mode_id`` is Moka's name (``popout`` is one); ``wire_mode`` is what the view is told.
    An optional ``icon`` attribute (SVG path data on a 24×24 grid, drawn with the text colour) is
    the mode's button; a mode without one gets Moka's generic display-mode icon (``mode_icon``).
    """

    mode_id: str
    wire_mode: WireMode
    label: str
    fixed_size: bool      # the host controls the size: reported sizes are ignored
    opens_window: bool    # rendered in its own window (desktop) or popup (browser)


# SVG path data: commands, numbers, separators. Nothing that could become markup or a URL.
_PATH_DATA = re.compile(r"^[MmLlHhVvCcSsQqTtAaZz0-9eE.,+\-\s]+$")
MAX_ICON_CHARS = 2000


def mode_icon(mode: object) -> str | None:
    """The mode's own icon path data, or None (no icon, or not path data: the generic icon is used)."""
    value = getattr(mode, "icon", None)
    return value if isinstance(value, str) and len(value) <= MAX_ICON_CHARS and _PATH_DATA.match(value) else None
