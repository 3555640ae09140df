"""Picture in picture lives above the screens and never covers its own "Return inline" control."""

from __future__ import annotations

from typing import Any

import pytest

from browser_support import DEMO, Moka


def pip_view(moka: Moka) -> tuple[Any, Any, Any]:
    """Run roll_dice in the runner and put its view in picture in picture: (view, card, frame)."""
    moka.open("runner")
    moka.call("tools.run", {"server": "moka-demo", "tool": "roll_dice", "arguments": {}})
    view = moka.wait_view_ready("roll_dice")
    frame = moka.frame(view.id)
    card = moka.page.locator(f'.view-card[data-view-id="{view.id}"]')
    moka.call("view.setDisplayMode", {"viewId": view.id, "mode": "pip"})
    moka.wait(lambda: card.get_attribute("data-wire") == "pip", what="pip mode")
    return view, card, frame


def test_pip_stays_where_it_was_across_screens(moka_factory: Any) -> None:
    """To Servers and back: the panel stays visible, in place, and its view is not reloaded."""
    moka: Moka = moka_factory({"moka-demo": DEMO})
    view, card, frame = pip_view(moka)
    frame.evaluate("window.mokaTestMark = 'still the same document'")
    before = card.bounding_box()
    moka.page.evaluate("location.hash = '#servers'")
    moka.page.locator("#server-list .server-card").first.wait_for()
    assert moka.page.locator("#screen-runner").get_attribute("hidden") is not None
    assert card.is_visible() and card.bounding_box() == before
    # The panel is on top and takes clicks; the hidden runner screen takes none.
    box = card.locator(".view-head").bounding_box()
    hit = moka.page.evaluate("([x, y]) => document.elementFromPoint(x, y).closest('.view-card')?.dataset.viewId",
                             [box["x"] + 10, box["y"] + box["height"] / 2])
    assert hit == view.id
    assert moka.page.locator('.server-card[data-server="moka-demo"] [data-action="edit"]').is_visible()
    moka.page.evaluate("location.hash = '#runner'")
    assert card.is_visible() and card.bounding_box() == before
    assert frame.evaluate("window.mokaTestMark") == "still the same document"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_pip_never_covers_return_inline(moka_factory: Any, scheme: str) -> None:
    """With the note scrolled to the bottom of the window, "Return inline" is still the thing under the pointer."""
    moka: Moka = moka_factory({"moka-demo": DEMO})
    moka.page.emulate_media(color_scheme=scheme)
    view, card, _ = pip_view(moka)
    note = moka.page.locator(f'.view-slot[data-view-id="{view.id}"] .view-note')
    note.evaluate("n => n.scrollIntoView({ block: 'end' })")
    button = note.locator('[data-action="return-inline"]')

    def under_the_pointer() -> str | None:  # the scroll's animation frame re-lays the panel out: wait for it
        box = button.bounding_box()
        return moka.page.evaluate("([x, y]) => document.elementFromPoint(x, y)?.closest('[data-action]')?.dataset.action",
                                  [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2])

    moka.wait(lambda: under_the_pointer() == "return-inline", 10, "Return inline under the pointer, not the PiP")
    moka.page.screenshot(path=f"/tmp/shots/pip-{scheme}.png")
    button.click()
    moka.wait(lambda: card.get_attribute("data-wire") == "inline", what="back inline")
