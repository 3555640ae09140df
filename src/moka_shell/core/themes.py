"""Themes: the standard MCP Apps style variables, and Moka's own UI variables.

A view fails its handshake if ``styles.variables`` carries an unknown name or a null,
so everything a theme gives is filtered to the 76 standard names here.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

Mode = Literal["light", "dark"]

_TONES = ["primary", "secondary", "tertiary", "inverse", "ghost", "info", "danger", "success", "warning", "disabled"]
_SIZES = ["xs", "sm", "md", "lg"]
_HEADINGS = ["xs", "sm", "md", "lg", "xl", "2xl", "3xl"]

STANDARD_VARIABLES: tuple[str, ...] = tuple(
    [f"--color-background-{t}" for t in _TONES]
    + [f"--color-text-{t}" for t in _TONES]
    + [f"--color-border-{t}" for t in _TONES]
    + [f"--color-ring-{t}" for t in ["primary", "secondary", "inverse", "info", "danger", "success", "warning"]]
    + ["--font-sans", "--font-mono"]
    + [f"--font-weight-{w}" for w in ["normal", "medium", "semibold", "bold"]]
    + [f"--font-text-{s}-size" for s in _SIZES]
    + [f"--font-text-{s}-line-height" for s in _SIZES]
    + [f"--font-heading-{s}-size" for s in _HEADINGS]
    + [f"--font-heading-{s}-line-height" for s in _HEADINGS]
    + [f"--border-radius-{r}" for r in ["xs", "sm", "md", "lg", "xl", "full"]]
    + ["--border-width-regular"]
    + ["--shadow-hairline", "--shadow-sm", "--shadow-md", "--shadow-lg"]
)
assert len(STANDARD_VARIABLES) == 76


@runtime_checkable
class ThemeProvider(Protocol):
    """A theme: registered through ``register_themes(register)``."""

    theme_id: str
    label: str

    def variables(self, mode: Mode) -> dict[str, str]:
        """Values for (a subset of) the standard MCP Apps style variables."""
        ...

    def ui_variables(self, mode: Mode) -> dict[str, str]:
        """Extra ``--moka-*`` variables for Moka's own UI (may be empty)."""
        ...


def standard_only(variables: dict[str, Any]) -> dict[str, str]:
    """Keep only standard names with string values (a view rejects anything else)."""
    return {k: v for k, v in variables.items() if k in STANDARD_VARIABLES and isinstance(v, str) and v}


def theme_payload(provider: ThemeProvider, theme_id: str, mode: str, resolved: Mode) -> dict[str, Any]:
    """The ``Theme`` shape the UI receives (see docs/bridge-api.md)."""
    variables = standard_only(provider.variables(resolved))
    ui = dict(variables)
    try:
        ui.update({k: v for k, v in provider.ui_variables(resolved).items() if k.startswith("--")})
    except AttributeError:
        pass
    return {"themeId": theme_id, "label": provider.label, "mode": mode, "resolved": resolved,
            "variables": variables, "ui": ui}
