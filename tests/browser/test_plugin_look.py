"""A plugin's look, in Chromium: display modes with their own icons and labels, and a theme that sets
only some colours still paints all of Moka's surfaces (ux.md rows 13, worst problems 6 and 7).

The plugins are real wheels installed into a plugin folder (the packaged apps' way), which this test
process puts on sys.path before Moka starts, as a packaged app does at its start.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from browser_support import DEMO, Moka
from moka_shell.plugin_install import folder
from moka_shell.plugin_install.kind import activate
from moka_shell.plugin_install.wheel import open_wheel
from test_plugin_folder import make_wheel

# Harbor, as the UX walk wrote it: five standard variables in each mode, nothing else.
LOOK = '''from dataclasses import dataclass
from moka_shell import hookimpl

HARBOR = {
    "light": {"--color-background-primary": "#f7fbff", "--color-background-secondary": "#e8f0f8",
              "--color-text-primary": "#0f2236", "--color-border-primary": "#c3d3e4",
              "--color-ring-primary": "#1f6fb2"},
    "dark": {"--color-background-primary": "#13263a", "--color-background-secondary": "#0c1a2a",
             "--color-text-primary": "#e3eefa", "--color-border-primary": "#25405c",
             "--color-ring-primary": "#6fb4f0"},
}


class Harbor:
    theme_id = "harbor"
    label = "Harbor"

    def variables(self, mode):
        return dict(HARBOR[mode])

    def ui_variables(self, mode):
        return {}


@dataclass(frozen=True)
class Mode:
    mode_id: str
    label: str
    wire_mode: str = "pip"
    fixed_size: bool = True
    opens_window: bool = False
    icon: str | None = None


@hookimpl
def register_themes(register):
    register(Harbor())


@hookimpl
def register_display_modes(register):
    register(Mode("sidecar", "Sidecar"))
    register(Mode("stage", "Stage", wire_mode="fullscreen", icon="M3 6h18v11H3zM8 20h8"))
'''

STAGE_ICON = "M3 6h18v11H3zM8 20h8"


@pytest.fixture
def look_plugin(tmp_path: Path) -> Iterator[None]:
    root = tmp_path / "plugin-folder"
    wheel = make_wheel(tmp_path, "moka-t-look", files={"moka_t_look/__init__.py": LOOK}, plugin="look")
    folder.install(root, [(open_wheel(wheel), True)])
    before = list(sys.path)
    activate(root)
    yield
    sys.path[:] = before
    sys.modules.pop("moka_t_look", None)


# A computed colour in any syntax (rgb(), color(srgb …), oklab() while a colour-mix transition runs)
# as 0-255 sRGB channels, read back from a 1×1 canvas the page paints it on.
_TO_RGB = """css => {
  const ctx = Object.assign(document.createElement('canvas'), {width: 1, height: 1}).getContext('2d');
  ctx.fillStyle = css; ctx.fillRect(0, 0, 1, 1);
  return Array.from(ctx.getImageData(0, 0, 1, 1).data.slice(0, 3));
}"""


def _rgb(page: object, css: str) -> tuple[float, float, float]:
    """``css`` (any colour the page computed) as 0-255 sRGB channels."""
    r, g, b = page.evaluate(_TO_RGB, css)  # type: ignore[attr-defined]
    return float(r), float(g), float(b)


def _shoot(page: object, name: str, tmp_path: Path) -> None:
    out = Path(os.environ.get("MOKA_SCREENSHOT_DIR") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out / f"{name}.png"))  # type: ignore[attr-defined]


def test_plugin_modes_have_their_own_icons_and_labels_in_a_more_menu(look_plugin: None, moka_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    moka: Moka = moka_factory({"moka-demo": DEMO})
    assert {"sidecar", "stage"} <= set(moka.app.display_modes)
    page = moka.open("runner?server=moka-demo&tool=roll_dice")
    page.wait_for_selector("#runner-run:not([disabled])", timeout=60000)  # the settings (and modes) are in
    page.click("#runner-run")
    view = moka.wait_view_ready("roll_dice")
    card = page.locator(f'.view-card[data-view-id="{view.id}"]')
    controls = card.locator(".view-controls")
    # The spec's modes and pop-out keep their own buttons; the plugins' modes go in one menu.
    assert controls.locator("[data-mode]").evaluate_all("bs => bs.map(b => b.dataset.mode)") == [
        "inline", "fullscreen", "pip", "popout"]
    more = controls.locator("[data-mode-menu]")
    assert more.get_attribute("aria-label") == "More display modes"
    more.click()
    items = page.locator(".menu [role=menuitem]")
    labels = items.evaluate_all("els => els.map(e => e.textContent)")
    assert {"Sidecar", "Stage"} <= set(labels) and len(labels) == len(set(labels)), labels  # matcha's Present too
    pip_icon = controls.locator('[data-mode="pip"] svg').inner_html()
    fullscreen_icon = controls.locator('[data-mode="fullscreen"] svg').inner_html()
    sidecar_icon = page.locator('.menu [data-mode="sidecar"] svg').inner_html()
    stage_icon = page.locator('.menu [data-mode="stage"] svg').inner_html()
    assert sidecar_icon != pip_icon and stage_icon != fullscreen_icon and sidecar_icon != stage_icon
    assert f'd="{STAGE_ICON}"' in stage_icon
    _shoot(page, "modes-menu-light", tmp_path)
    page.locator('.menu [data-mode="sidecar"]').click()
    moka.wait(lambda: card.get_attribute("data-mode") == "sidecar" and card.get_attribute("data-wire") == "pip",
              what="the view in the Sidecar mode")
    more = controls.locator("[data-mode-menu]")
    assert more.get_attribute("aria-pressed") == "true"
    assert more.get_attribute("aria-label") == "More display modes (now: Sidecar)"
    assert all(b.get_attribute("aria-pressed") == "false" for b in controls.locator("[data-mode]").all())
    moka.call("theme.set", {"themeId": "moka", "mode": "dark"})
    moka.wait(lambda: page.evaluate("document.documentElement.dataset.theme") == "dark", what="dark")
    page.locator('.view-card[data-mode="sidecar"] [data-mode-menu]').click()
    page.locator('.menu [data-mode="stage"]').wait_for()
    _shoot(page, "modes-menu-dark-in-sidecar", tmp_path)


def test_a_theme_with_some_colours_paints_all_of_mokas_surfaces(look_plugin: None, moka_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    moka: Moka = moka_factory({"moka-demo": DEMO})
    page = moka.open("runner?server=moka-demo&tool=roll_dice")
    page.wait_for_selector("#runner-run:not([disabled])", timeout=60000)
    page.click("#runner-run")
    view = moka.wait_view_ready("roll_dice")
    head = page.locator(f'.view-card[data-view-id="{view.id}"] .view-head')
    foot = page.locator(".card-foot").first

    def background(locator: object) -> tuple[float, float, float]:
        return _rgb(page, locator.evaluate("e => getComputedStyle(e).backgroundColor"))  # type: ignore[attr-defined]

    for mode in ("light", "dark"):
        moka.call("theme.set", {"themeId": "harbor", "mode": mode})
        moka.wait(lambda: page.evaluate("document.documentElement.dataset.theme") == mode
                  and "--color-ring-primary" in page.evaluate("document.documentElement.style.cssText"),
                  what=f"Harbor {mode} applied")
        # The colours move by CSS transitions: read them once every one has finished, not mid-way.
        page.wait_for_function("() => document.getAnimations().every(a => a.playState !== 'running')",
                               timeout=30000)
        for name, locator in (("view header", head), ("runner footer", foot), ("page", page.locator("body"))):
            r, g, b = background(locator)
            # Harbor is blue: each surface derived from it is too, never Moka's own beige or brown.
            assert b > r + 6, (mode, name, (r, g, b))
        accent = _rgb(page, page.evaluate("getComputedStyle(document.querySelector('#runner-run')).backgroundColor"))
        assert accent[2] > accent[0] + 40, (mode, "the run button takes the theme's ring colour", accent)
        _shoot(page, f"harbor-runner-{mode}", tmp_path)
