"""Built-in display modes: inline, fullscreen, pip and a native pop-out window."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from moka_shell.core.views.display import WireMode
from moka_shell.hookspecs import hookimpl


@dataclass(frozen=True)
class BuiltinMode:
    """A display mode defined by data alone."""

    mode_id: str
    wire_mode: WireMode
    label: str
    fixed_size: bool
    opens_window: bool = False


MODES = [
    BuiltinMode("inline", "inline", "Inline", fixed_size=False),
    BuiltinMode("fullscreen", "fullscreen", "Fullscreen", fixed_size=True),
    BuiltinMode("pip", "pip", "Picture in picture", fixed_size=True),
    # A pop-out fills its own window, so the view is told "fullscreen" (fixed size).
    BuiltinMode("popout", "fullscreen", "Pop out", fixed_size=True, opens_window=True),
]


@hookimpl
def register_display_modes(register: Any) -> None:
    """Register inline, fullscreen, pip and pop-out."""
    for mode in MODES:
        register(mode)
