"""The built-in Moka theme: warm neutrals with a coffee accent, light and dark."""

from __future__ import annotations

from typing import Any

from moka_shell.core.themes import Mode
from moka_shell.hookspecs import hookimpl

_SHARED = {
    "--font-sans": 'system-ui, -apple-system, "Segoe UI", Roboto, Ubuntu, Cantarell, "Noto Sans", sans-serif',
    "--font-mono": 'ui-monospace, "SF Mono", "Cascadia Mono", "DejaVu Sans Mono", Menlo, Consolas, monospace',
    "--font-weight-normal": "400", "--font-weight-medium": "500", "--font-weight-semibold": "600",
    "--font-weight-bold": "700",
    "--font-text-xs-size": "0.75rem", "--font-text-sm-size": "0.875rem", "--font-text-md-size": "1rem",
    "--font-text-lg-size": "1.125rem",
    "--font-text-xs-line-height": "1rem", "--font-text-sm-line-height": "1.25rem",
    "--font-text-md-line-height": "1.5rem", "--font-text-lg-line-height": "1.75rem",
    "--font-heading-xs-size": "0.875rem", "--font-heading-sm-size": "1rem", "--font-heading-md-size": "1.25rem",
    "--font-heading-lg-size": "1.5rem", "--font-heading-xl-size": "1.875rem", "--font-heading-2xl-size": "2.25rem",
    "--font-heading-3xl-size": "3rem",
    "--font-heading-xs-line-height": "1.25rem", "--font-heading-sm-line-height": "1.5rem",
    "--font-heading-md-line-height": "1.75rem", "--font-heading-lg-line-height": "2rem",
    "--font-heading-xl-line-height": "2.25rem", "--font-heading-2xl-line-height": "2.5rem",
    "--font-heading-3xl-line-height": "1",
    "--border-radius-xs": "3px", "--border-radius-sm": "5px", "--border-radius-md": "8px",
    "--border-radius-lg": "12px", "--border-radius-xl": "16px", "--border-radius-full": "9999px",
    "--border-width-regular": "1px",
}

_LIGHT = {
    "--color-background-primary": "#ffffff", "--color-background-secondary": "#f7f5f2",
    "--color-background-tertiary": "#efebe6", "--color-background-inverse": "#2a2420",
    "--color-background-ghost": "rgba(42, 36, 32, 0.04)", "--color-background-info": "#e8f1fd",
    "--color-background-danger": "#fdecec", "--color-background-success": "#e9f6ee",
    "--color-background-warning": "#fdf4e3", "--color-background-disabled": "#f1eeea",
    "--color-text-primary": "#1f1a17", "--color-text-secondary": "#5c534c", "--color-text-tertiary": "#8a8077",
    "--color-text-inverse": "#fbf9f7", "--color-text-info": "#1d5fb8", "--color-text-danger": "#b42318",
    "--color-text-success": "#1b7a43", "--color-text-warning": "#8a5a00", "--color-text-disabled": "#b3aaa2",
    "--color-text-ghost": "#8a8077",
    "--color-border-primary": "#e2ddd7", "--color-border-secondary": "#ebe7e2", "--color-border-tertiary": "#f2efeb",
    "--color-border-inverse": "#3a322c", "--color-border-ghost": "rgba(42, 36, 32, 0.08)",
    "--color-border-info": "#a9c8f3", "--color-border-danger": "#f1b4ae", "--color-border-success": "#a6dbbb",
    "--color-border-warning": "#ecd09a", "--color-border-disabled": "#ebe7e2",
    "--color-ring-primary": "#9c5b2e", "--color-ring-secondary": "#c4b8ad", "--color-ring-inverse": "#fbf9f7",
    "--color-ring-info": "#1d5fb8", "--color-ring-danger": "#b42318", "--color-ring-success": "#1b7a43",
    "--color-ring-warning": "#8a5a00",
    "--shadow-hairline": "0 0 0 1px rgba(42, 36, 32, 0.06)",
    "--shadow-sm": "0 1px 2px rgba(42, 36, 32, 0.08)",
    "--shadow-md": "0 4px 12px rgba(42, 36, 32, 0.10)",
    "--shadow-lg": "0 12px 32px rgba(42, 36, 32, 0.16)",
}

_DARK = {
    "--color-background-primary": "#1c1917", "--color-background-secondary": "#23201d",
    "--color-background-tertiary": "#2d2925", "--color-background-inverse": "#f5f1ec",
    "--color-background-ghost": "rgba(255, 250, 245, 0.05)", "--color-background-info": "#16263d",
    "--color-background-danger": "#3a1a17", "--color-background-success": "#15301f",
    "--color-background-warning": "#362a12", "--color-background-disabled": "#26221f",
    "--color-text-primary": "#f3eee9", "--color-text-secondary": "#c2b8ae", "--color-text-tertiary": "#8f857c",
    "--color-text-inverse": "#1f1a17", "--color-text-info": "#8dbaf5", "--color-text-danger": "#f59e94",
    "--color-text-success": "#84d6a4", "--color-text-warning": "#f0c46c", "--color-text-disabled": "#5d554f",
    "--color-text-ghost": "#8f857c",
    "--color-border-primary": "#3a342f", "--color-border-secondary": "#322d29", "--color-border-tertiary": "#2a2623",
    "--color-border-inverse": "#e2ddd7", "--color-border-ghost": "rgba(255, 250, 245, 0.08)",
    "--color-border-info": "#2d4f7e", "--color-border-danger": "#7a302a", "--color-border-success": "#2b6a43",
    "--color-border-warning": "#6e5221", "--color-border-disabled": "#322d29",
    "--color-ring-primary": "#e0a371", "--color-ring-secondary": "#5d554f", "--color-ring-inverse": "#1f1a17",
    "--color-ring-info": "#8dbaf5", "--color-ring-danger": "#f59e94", "--color-ring-success": "#84d6a4",
    "--color-ring-warning": "#f0c46c",
    "--shadow-hairline": "0 0 0 1px rgba(0, 0, 0, 0.4)",
    "--shadow-sm": "0 1px 2px rgba(0, 0, 0, 0.4)",
    "--shadow-md": "0 4px 12px rgba(0, 0, 0, 0.45)",
    "--shadow-lg": "0 12px 32px rgba(0, 0, 0, 0.55)",
}

_UI = {
    "light": {"--moka-accent": "#9c5b2e", "--moka-accent-contrast": "#ffffff", "--moka-accent-soft": "#f4e7dc",
              "--moka-rail": "#f1ede8"},
    "dark": {"--moka-accent": "#e0a371", "--moka-accent-contrast": "#1c1917", "--moka-accent-soft": "#3a2c21",
             "--moka-rail": "#171412"},
}


class MokaTheme:
    """Moka's default look."""

    theme_id = "moka"
    label = "Moka"

    def variables(self, mode: Mode) -> dict[str, str]:
        """The standard variables for light or dark."""
        return {**_SHARED, **(_DARK if mode == "dark" else _LIGHT)}

    def ui_variables(self, mode: Mode) -> dict[str, str]:
        """Moka's own accent colours."""
        return dict(_UI[mode])


@hookimpl
def register_themes(register: Any) -> None:
    """Register the Moka theme."""
    register(MokaTheme())
