"""Matcha: a green-tea theme for Moka, plus a "present" display mode."""

from __future__ import annotations

from dataclasses import dataclass

from moka_shell import RegisterDisplayMode, RegisterTheme, WireMode, hookimpl

# Only the colours differ from Moka's own theme; fonts, sizes and radii are left to the view's defaults.
LIGHT = {
    "--color-background-primary": "#fbfdf8",
    "--color-background-secondary": "#f1f6ea",
    "--color-background-tertiary": "#e4eed8",
    "--color-text-primary": "#1d2a16",
    "--color-text-secondary": "#4b5d40",
    "--color-text-tertiary": "#7a8b6e",
    "--color-border-primary": "#d3e2c3",
    "--color-border-secondary": "#e1ecd5",
    "--color-ring-primary": "#4f7a28",
    "--color-text-danger": "#b3261e",
    "--color-text-success": "#2e7d32",
    "--border-radius-md": "10px",
}
DARK = {
    "--color-background-primary": "#141a11",
    "--color-background-secondary": "#1b2317",
    "--color-background-tertiary": "#25301f",
    "--color-text-primary": "#e8f1df",
    "--color-text-secondary": "#b4c6a4",
    "--color-text-tertiary": "#82966f",
    "--color-border-primary": "#32402a",
    "--color-border-secondary": "#2a3623",
    "--color-ring-primary": "#9ccc65",
    "--color-text-danger": "#f2b8b5",
    "--color-text-success": "#a5d6a7",
    "--border-radius-md": "10px",
}


class Matcha:
    """A theme: an id, a label, and values for the standard MCP Apps variables."""

    theme_id = "matcha"
    label = "Matcha"

    def variables(self, mode: str) -> dict[str, str]:
        """Standard variables only: views reject any other name."""
        return dict(DARK if mode == "dark" else LIGHT)

    def ui_variables(self, mode: str) -> dict[str, str]:
        """Moka's own accent for its buttons and rail."""
        if mode == "dark":
            return {"--moka-accent": "#9ccc65", "--moka-accent-contrast": "#141a11",
                    "--moka-accent-soft": "#2b3a22", "--moka-rail": "#10150d"}
        return {"--moka-accent": "#4f7a28", "--moka-accent-contrast": "#ffffff",
                "--moka-accent-soft": "#e2efd3", "--moka-rail": "#eaf2e0"}


@dataclass(frozen=True)
class Present:
    """A display mode: the view fills the window, as fullscreen does, under its own name."""

    mode_id: str = "present"
    wire_mode: WireMode = "fullscreen"  # what the view is told: inline, fullscreen or pip
    label: str = "Present"
    fixed_size: bool = True  # the host sets the size; the view's size reports are ignored
    opens_window: bool = False  # True would render it in its own window, like pop-out
    icon: str = "M3 5h18v11H3zM12 16v3M8 20h8"  # SVG path data, 24x24: a screen on a stand


@hookimpl
def register_themes(register: RegisterTheme) -> None:
    """Add the Matcha theme."""
    register(Matcha())


@hookimpl
def register_display_modes(register: RegisterDisplayMode) -> None:
    """Add the Present display mode."""
    register(Present())
