"""The built-in Moka theme: warm neutrals with a coffee accent, light and dark."""

from __future__ import annotations

import sys
from typing import Any

from moka_shell.core.themes import Mode
from moka_shell.hookspecs import hookimpl

# Moka's fonts are the system's. The fonts CSS (styles.css.fonts) names them "Moka Sans" and "Moka
# Mono" with local() faces only: no file is fetched, so a view's CSP needs no font-src for them,
# and a view that applies it draws in Moka's own fonts. Where none of a platform's candidates is
# installed the family does not load and the stack goes on to system-ui, as before. macOS's UI
# font cannot be named by local(), so there the sans family has no faces.
_SANS_FACES: tuple[str, ...] = {
    "win32": ("Segoe UI",),
    "darwin": (),
}.get(sys.platform, ("Ubuntu", "Cantarell", "Noto Sans", "DejaVu Sans"))
_MONO_FACES: tuple[str, ...] = {
    "win32": ("Cascadia Mono", "Consolas"),
    "darwin": ("SF Mono", "Menlo"),
}.get(sys.platform, ("Ubuntu Mono", "DejaVu Sans Mono", "Noto Sans Mono"))
_STYLES = (("400", "normal", ("", "Regular")), ("700", "normal", ("Bold",)),
           ("400", "italic", ("Italic", "Oblique")), ("700", "italic", ("Bold Italic", "Bold Oblique")))


def _faces(family: str, names: tuple[str, ...]) -> str:
    """@font-face rules for ``family`` from local fonts: four faces, each trying every candidate."""
    rules = []
    for weight, style, suffixes in _STYLES:
        sources = []
        for name in names:
            for suffix in suffixes:
                full = f"{name} {suffix}".strip()
                postscript = name.replace(" ", "") + (f"-{suffix.replace(' ', '')}" if suffix else "")
                sources += [f'local("{full}")', f'local("{postscript}")']
        if sources:
            rules.append(f'@font-face{{font-family:"{family}";font-style:{style};font-weight:{weight};'
                         f'src:{",".join(dict.fromkeys(sources))}}}')
    return "\n".join(rules)


FONTS_CSS = "\n".join(r for r in (_faces("Moka Sans", _SANS_FACES), _faces("Moka Mono", _MONO_FACES)) if r)

_SHARED = {
    "--font-sans": '"Moka Sans", system-ui, -apple-system, "Segoe UI", Roboto, Ubuntu, Cantarell, "Noto Sans", '
                   'sans-serif',
    "--font-mono": '"Moka Mono", ui-monospace, "SF Mono", "Cascadia Mono", "DejaVu Sans Mono", Menlo, Consolas, '
                   'monospace',
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

    def fonts(self) -> str:
        """The @font-face rules of the families --font-sans and --font-mono name first (local fonts only)."""
        return FONTS_CSS


@hookimpl
def register_themes(register: Any) -> None:
    """Register the Moka theme."""
    register(MokaTheme())
