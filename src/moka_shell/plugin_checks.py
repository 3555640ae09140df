"""What a registered object must answer before Moka accepts it (beyond having its Protocol's names).

A theme whose ``variables()`` returns a list, or a display mode whose ``wire_mode`` is "sideways",
would otherwise pass registration and fail later, where a person can't tell why (and, for a theme,
after the choice was saved). Each check returns the problem in words, or None.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from moka_shell.core.views.display import MAX_ICON_CHARS, WIRE_MODES, mode_icon


def _string_map(value: Any, what: str) -> str | None:
    if not isinstance(value, dict):
        return f"{what} returned {type(value).__name__}, not a dict of CSS variable names to strings"
    bad = [k for k, v in value.items() if not isinstance(k, str) or not isinstance(v, str)]
    if bad:
        return f"{what} has non-string names or values (e.g. {bad[0]!r})"
    return None


def check_theme(obj: Any) -> str | None:
    """Both modes give dicts of strings (``ui_variables`` too, when the theme has it)."""
    if not isinstance(getattr(obj, "label", None), str):
        return "label is not a string"
    for mode in ("light", "dark"):
        problem = _string_map(obj.variables(mode), f"variables({mode!r})")
        if problem:
            return problem
        extra = getattr(obj, "ui_variables", None)
        if callable(extra):
            problem = _string_map(extra(mode), f"ui_variables({mode!r})")
            if problem:
                return problem
    return None


def check_display_mode(obj: Any) -> str | None:
    """A known wire mode, a string label, real booleans, and path data for an icon if it has one."""
    if obj.wire_mode not in WIRE_MODES:
        return f"wire_mode {obj.wire_mode!r} is not one of {', '.join(WIRE_MODES)}"
    if not isinstance(obj.label, str):
        return "label is not a string"
    for flag in ("fixed_size", "opens_window"):
        if not isinstance(getattr(obj, flag), bool):
            return f"{flag} is not True or False"
    if getattr(obj, "icon", None) is not None and mode_icon(obj) is None:
        return (f"icon must be SVG path data on a 24x24 grid (e.g. \"M4 5h16v14H4z\"), at most "
                f"{MAX_ICON_CHARS} characters")
    return None


CHECKS: dict[str, Callable[[Any], str | None]] = {"themes": check_theme, "display_modes": check_display_mode}
