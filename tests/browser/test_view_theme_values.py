"""Theme values as the spec prefers (issue 29.3): colours as `light-dark(light, dark)` and the
theme's fonts as `styles.css.fonts`, with what an app reads back still the theme's colours.

The view is built on the official SDK and applies the variables and fonts with its helpers, but
never calls `applyDocumentTheme`, so nothing of its own sets `color-scheme`: the colours it
paints with resolve to Moka's theme (dark on a light system, and back, live) only because
Moka's view prelude sets the scheme.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from browser_support import Moka
from support import SERVERS

SDK_APPS = {"command": sys.executable, "args": [str(SERVERS / "sdk_apps_server.py")]}
SHOTS = Path("/tmp/moka-theme-values")
DARK_BG, DARK_TEXT = "rgb(28, 25, 23)", "rgb(243, 238, 233)"  # Moka's dark --color-background/text-primary
LIGHT_BG, LIGHT_TEXT = "rgb(255, 255, 255)", "rgb(31, 26, 23)"


def painted(frame: Any) -> tuple[str, str]:
    return tuple(frame.evaluate("[getComputedStyle(document.body).backgroundColor,"
                                " getComputedStyle(document.body).color]"))  # type: ignore[return-value]


def test_colours_go_as_light_dark_and_fonts_as_css_and_the_app_paints_the_theme(moka_factory) -> None:  # type: ignore[no-untyped-def]
    moka: Moka = moka_factory({"sdk": SDK_APPS})
    moka.page.emulate_media(color_scheme="light")  # the operating system is light
    moka.call("theme.set", {"mode": "dark"})
    page = moka.open("runner")
    view_id = moka.call("tools.run", {"server": "sdk", "tool": "themed", "arguments": {}})["viewId"]
    view = moka.wait_view_ready("themed")
    assert view.id == view_id
    frame = moka.frame(view_id)
    moka.wait(lambda: frame.evaluate("document.body.dataset.themed") == "yes", 20, "the app applied the theme")

    # What the view was told: colours for both modes, the rest for the mode in use, and the fonts.
    init = next(e["message"]["result"] for e in moka.ui_rpc(view_id)
                if e.get("direction") == "out" and "hostContext" in (e["message"].get("result") or {}))
    styles = init["hostContext"]["styles"]
    assert styles["variables"]["--color-background-primary"] == "light-dark(#ffffff, #1c1917)"
    assert styles["variables"]["--border-radius-md"] == "8px"
    assert styles["variables"]["--font-sans"].startswith('"Moka Sans", system-ui')
    assert '@font-face{font-family:"Moka Sans"' in styles["css"]["fonts"]
    raw = frame.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--color-text-primary')")
    assert raw.strip() == "light-dark(#1f1a17, #f3eee9)"

    # What the app reads back is resolved for Moka's theme, not the system's.
    moka.wait(lambda: painted(frame) == (DARK_BG, DARK_TEXT), 20, "the dark colours in the view")
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "dark.png"))
    # The fonts came with them: the app's text is in Moka Sans, built from a local font (no fetch, no CSP).
    assert frame.evaluate("getComputedStyle(document.body).fontFamily").startswith('"Moka Sans"')
    loaded = frame.evaluate("document.fonts.load('16px \"Moka Sans\"').then((faces) => faces.length)")
    assert loaded >= 1
    # Moka's own page draws with the same families.
    assert page.evaluate("[...document.fonts].some((f) => f.family.includes('Moka Sans'))")
    assert page.evaluate("getComputedStyle(document.body).fontFamily").startswith('"Moka Sans"')

    moka.call("theme.set", {"mode": "light"})  # live: the app is not reloaded
    moka.wait(lambda: painted(frame) == (LIGHT_BG, LIGHT_TEXT), 20, "the light colours in the view")
    page.screenshot(path=str(SHOTS / "light.png"))
    assert frame.evaluate("document.body.dataset.themed") == "yes"
    assert not [c for c in moka.console if "pageerror" in c], moka.console


LATE = {"command": sys.executable, "args": [str(SERVERS / "late_failures_server.py")]}


def corner_pixel(page: Any, box: dict[str, float]) -> tuple[int, ...]:
    """The colour just inside the frame's bottom-right corner, where the app draws nothing."""
    from io import BytesIO

    from PIL import Image

    clip = {"x": box["x"] + box["width"] - 30, "y": box["y"] + box["height"] - 14, "width": 10, "height": 6}
    return Image.open(BytesIO(page.screenshot(clip=clip))).convert("RGB").getpixel((5, 3))  # type: ignore[no-any-return]


def test_a_transparent_view_in_the_dark_theme_shows_the_card_through_it(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """Its document is made dark for the light-dark() colours; the frame must agree, or the engine
    paints an opaque backdrop of its own behind the app."""
    moka: Moka = moka_factory({"late": LATE})
    moka.page.emulate_media(color_scheme="light")
    moka.call("theme.set", {"mode": "dark"})
    page = moka.open("runner")
    view_id = moka.call("tools.run", {"server": "late", "tool": "good", "arguments": {}})["viewId"]
    moka.wait_view_ready("good")
    frame = moka.frame(view_id)
    moka.wait(lambda: frame.evaluate("getComputedStyle(document.documentElement).colorScheme") == "dark", 20,
              "the view's document in the dark scheme")
    assert frame.evaluate("getComputedStyle(document.body).backgroundColor") == "rgba(0, 0, 0, 0)"  # paints none
    outer = page.locator(f'.view-card[data-view-id="{view_id}"] iframe.view-frame')
    moka.wait(lambda: frame.evaluate("document.getElementById('out') !== null"), 20, "the result drawn")
    page.wait_for_function("(f) => f.getBoundingClientRect().height > 40 && !f.getAnimations().length",
                           arg=outer.element_handle())
    box = outer.bounding_box()
    assert box is not None
    with_view = corner_pixel(page, box)
    outer.evaluate("(f) => { f.style.visibility = 'hidden'; }")
    without = corner_pixel(page, box)
    outer.evaluate("(f) => { f.style.visibility = ''; }")
    assert with_view == without, (with_view, without)  # the card's own colour, no backdrop
