"""Themes: the standard MCP Apps style variables, and Moka's own UI variables.

A view fails its handshake if ``styles.variables`` carries an unknown name or a null,
so everything a theme gives is filtered to the 76 standard names here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from moka_shell.errors import InvalidParamsError

if TYPE_CHECKING:
    from moka_shell.config import MokaConfig
    from moka_shell.registered import Registered

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
MAX_FONTS_CSS = 64 * 1024  # a theme's fonts CSS (styles.css.fonts): rules, not font files


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


def view_variables(provider: ThemeProvider, resolved: Mode, variables: dict[str, str]) -> dict[str, str]:
    """The standard variables as views get them (the spec's SHOULD): a colour the theme gives for both
    modes as ``light-dark(light, dark)``, which follows the view's ``color-scheme``; the rest (sizes,
    fonts, shadows, a colour given for one mode only) as ``variables``, the values for ``resolved``."""
    try:
        light = standard_only(provider.variables("light"))
        dark = standard_only(provider.variables("dark"))
    except Exception:  # a plugin's theme that fails for the other mode: the mode in use is still right
        return dict(variables)
    out = dict(variables)
    for key, value in variables.items():
        pair = (light.get(key), dark.get(key))
        if key.startswith("--color-") and pair[0] and pair[1] and pair[0] != pair[1] \
                and value == pair[0 if resolved == "light" else 1]:
            out[key] = f"light-dark({pair[0]}, {pair[1]})"
    return out


def theme_fonts(provider: ThemeProvider) -> str:
    """The theme's ``fonts()`` CSS (``@font-face`` / ``@import`` rules for the fonts its variables name),
    or "" when it has none (the method is optional) or it is not a string within ``MAX_FONTS_CSS``."""
    fonts = getattr(provider, "fonts", None)
    css = fonts() if callable(fonts) else ""
    return css if isinstance(css, str) and len(css) <= MAX_FONTS_CSS else ""


def theme_payload(provider: ThemeProvider, theme_id: str, mode: str, resolved: Mode) -> dict[str, Any]:
    """The ``Theme`` shape the UI receives (see docs/bridge-api.md)."""
    variables = standard_only(provider.variables(resolved))
    ui = dict(variables)
    try:
        ui.update({k: v for k, v in provider.ui_variables(resolved).items() if k.startswith("--")})
    except AttributeError:
        pass
    return {"themeId": theme_id, "label": provider.label, "mode": mode, "resolved": resolved,
            "variables": variables, "ui": ui, "fonts": theme_fonts(provider),
            "viewVariables": view_variables(provider, resolved, variables)}


class Appearance:
    """The configured theme and mode, resolved against the system's colour scheme."""

    def __init__(self, themes: dict[str, Registered[ThemeProvider]], config: MokaConfig,
                 save_config: Callable[[], None], on_change: Callable[[dict[str, Any]], None]) -> None:
        self._themes = themes
        self._config = config
        self._save_config = save_config
        self._on_change = on_change
        self.system_dark = False

    def current(self) -> dict[str, Any]:
        """The Theme payload for the configured theme and mode (the built-in one if that theme fails)."""
        try:
            return self._build()
        except Exception:  # a plugin's theme broke after registration: the UI must still come up
            fallback = self._themes.get("moka") or next(iter(self._themes.values()))
            return self._build(fallback)

    def _build(self, reg: Registered[ThemeProvider] | None = None) -> dict[str, Any]:
        theme_id = self._config.theme.theme_id
        reg = reg or self._themes.get(theme_id) or self._themes.get("moka") or next(iter(self._themes.values()))
        mode = self._config.theme.mode
        resolved: Mode = ("dark" if self.system_dark else "light") if mode == "system" else mode
        return theme_payload(reg.obj, reg.obj.theme_id, mode, resolved)

    def set(self, theme_id: str | None = None, mode: str | None = None) -> dict[str, Any]:
        """Switch theme and/or mode; everyone is told. Saved only once the new theme was built."""
        if theme_id is not None and theme_id not in self._themes:
            raise InvalidParamsError(f"unknown theme {theme_id!r} (available: {', '.join(self._themes)})")
        if mode is not None and mode not in ("light", "dark", "system"):
            raise InvalidParamsError(f"theme mode must be light, dark or system, not {mode!r}")
        before = (self._config.theme.theme_id, self._config.theme.mode)
        if theme_id is not None:
            self._config.theme.theme_id = theme_id
        if mode is not None:
            self._config.theme.mode = mode  # type: ignore[assignment]
        try:
            theme = self._build()
        except Exception as exc:  # a plugin's theme that fails at use: keep the old one, save nothing
            self._config.theme.theme_id, self._config.theme.mode = before
            raise InvalidParamsError(f"the theme {self._config.theme.theme_id if theme_id is None else theme_id!r} "
                                     f"could not be applied ({type(exc).__name__}: {exc}); the previous theme stays",
                                     hint="`moka plugins` shows which plugin registered it") from exc
        self._save_config()
        self._on_change(theme)
        return theme

    def note_system_dark(self, dark: bool) -> None:
        """The page said the system's colour scheme as it connected: what it asks for next follows it
        (nobody is told now; the page takes the theme from its own request)."""
        self.system_dark = dark

    def set_system_dark(self, dark: bool) -> dict[str, Any]:
        """The system's colour scheme changed; restyle if the mode follows it."""
        if dark != self.system_dark:
            self.system_dark = dark
            if self._config.theme.mode == "system":
                self._on_change(self.current())
        return self.current()
