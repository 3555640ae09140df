"""ui/initialize payloads: complete, truthful, and never a null."""

from __future__ import annotations

from typing import Any

from moka_shell.builtins.themes import MokaTheme
from moka_shell.core.views.csp import build_policy
from moka_shell.core.views.host_context import build_host_context, clean, host_capabilities
from moka_shell.core.themes import STANDARD_VARIABLES, theme_payload


def no_nulls(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, dict):
        return all(no_nulls(v) for v in value.values())
    if isinstance(value, list):
        return all(no_nulls(v) for v in value)
    return True


def context(**kw: Any) -> dict[str, Any]:
    theme = theme_payload(MokaTheme(), "moka", "system", "dark")
    args: dict[str, Any] = dict(theme=theme, display_mode="inline", available=["inline", "fullscreen", "pip"],
                                fixed=False, viewport={"width": 700}, client={}, platform="desktop",
                                tool={"name": "roll_dice", "inputSchema": {"type": "object"}}, call_id="c1")
    args.update(kw)
    return build_host_context(**args)


def test_host_context_has_every_field_and_no_null() -> None:
    """Theme, standard styles, modes, dimensions, locale, time zone, platform, insets, toolInfo."""
    ctx = context()
    assert ctx["theme"] == "dark" and ctx["displayMode"] == "inline"
    assert ctx["availableDisplayModes"] == ["inline", "fullscreen", "pip"]
    assert ctx["containerDimensions"] == {"maxHeight": 1200, "maxWidth": 700}
    assert set(ctx["safeAreaInsets"]) == {"top", "right", "bottom", "left"}
    assert ctx["toolInfo"] == {"tool": {"name": "roll_dice", "inputSchema": {"type": "object"}}, "id": "c1"}
    assert ctx["platform"] == "desktop" and ctx["locale"] and ctx["timeZone"]
    assert no_nulls(ctx)


def test_only_standard_style_variables_with_string_values() -> None:
    """A non-standard variable name would fail the view's validation: none are sent."""
    variables = context()["styles"]["variables"]
    assert variables and set(variables) <= set(STANDARD_VARIABLES)
    assert all(isinstance(v, str) and v for v in variables.values())
    assert len(STANDARD_VARIABLES) == 76


def test_fixed_modes_give_exact_height() -> None:
    """Fullscreen/pip: the host controls the size, so height is exact."""
    ctx = context(display_mode="fullscreen", fixed=True, viewport={"width": 1000, "height": 640})
    assert ctx["containerDimensions"] == {"height": 640, "width": 1000}


def test_capabilities_tell_the_truth() -> None:
    """Advertised: what Moka implements; sampling only with a backend; approved CSP reported."""
    policy = build_policy({"csp": {"connectDomains": ["https://api.example.com"]}, "permissions": {"camera": {}}})
    caps = host_capabilities(sampling=False, policy=policy)
    assert {"openLinks", "serverTools", "serverResources", "logging", "downloadFile", "message",
            "updateModelContext"} <= set(caps)
    assert "sampling" not in caps
    assert caps["sandbox"] == {"csp": {"connectDomains": ["https://api.example.com"]}, "permissions": {"camera": {}}}
    assert "sampling" in host_capabilities(sampling=True, policy=policy)
    assert no_nulls(caps)


def test_clean_drops_nulls_at_every_depth() -> None:
    """The last line of defence against a Python None reaching a view."""
    assert clean({"a": None, "b": {"c": None, "d": [1, None, {"e": None}]}}) == {"b": {"d": [1, {}]}}


def test_views_are_told_images_only_when_the_backend_takes_them(paths: Any) -> None:
    """A view may send images in ui/message only if the selected model will receive them."""
    import asyncio

    from moka_shell.config import MokaConfig
    from moka_shell.testing import start_app

    policy = build_policy({}, allow_eval=False)
    assert "image" not in host_capabilities(sampling=True, policy=policy, images=False)["message"]
    assert "image" in host_capabilities(sampling=True, policy=policy, images=True)["updateModelContext"]

    async def media(backend: str | None) -> frozenset[str]:
        config = MokaConfig()
        config.agent.backend = backend
        app = await start_app(paths, config=config, mode="headless")
        try:
            assert app.chat is not None
            return app.chat.accepts_media()
        finally:
            await app.stop()

    assert asyncio.run(media("openai")) == frozenset({"image"})
    assert asyncio.run(media(None)) == frozenset()


class OneSided:
    """A plugin theme: a colour for one mode only, no fonts method, and a broken other mode."""

    theme_id, label = "one-sided", "One sided"

    def variables(self, mode: str) -> dict[str, str]:
        if mode == "light":
            raise ValueError("light is not ready")
        return {"--color-background-primary": "#101010", "--font-sans": "serif"}

    def ui_variables(self, mode: str) -> dict[str, str]:
        return {}


def test_colours_go_as_light_dark_the_rest_resolved_and_the_fonts_as_css() -> None:
    """The spec's SHOULD (light-dark colours) and MAY (styles.css.fonts), issue 29.3."""
    styles = context()["styles"]
    variables = styles["variables"]
    assert variables["--color-background-primary"] == "light-dark(#ffffff, #1c1917)"
    assert variables["--color-text-primary"] == "light-dark(#1f1a17, #f3eee9)"
    assert variables["--shadow-sm"] == "0 1px 2px rgba(0, 0, 0, 0.4)"  # no colour: the dark value as it is
    assert variables["--border-radius-md"] == "8px" and variables["--font-sans"].startswith('"Moka Sans"')
    assert set(variables) == set(STANDARD_VARIABLES)
    fonts = styles["css"]["fonts"]
    assert fonts.count("@font-face") >= 4 and "url(" not in fonts and "@import" not in fonts  # local() only
    assert '"Moka Sans"' in fonts and '"Moka Mono"' in fonts
    # The Moka page gets the values for the mode in use (its own surfaces are drawn from them).
    assert theme_payload(MokaTheme(), "moka", "system", "dark")["variables"]["--color-background-primary"] == "#1c1917"


def test_a_theme_that_fails_for_the_other_mode_still_sends_the_mode_in_use() -> None:
    theme = theme_payload(OneSided(), "one-sided", "dark", "dark")  # type: ignore[arg-type]
    styles = build_host_context(theme=theme, display_mode="inline", available=["inline"], fixed=False,
                                viewport={}, client={}, platform="web", tool=None, call_id=None)["styles"]
    assert styles == {"variables": {"--color-background-primary": "#101010", "--font-sans": "serif"}}
