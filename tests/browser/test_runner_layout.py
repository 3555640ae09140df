"""The Tool runner: form beside results on a wide window, a new result brought into view, text folded under a view."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

DEMO = {"command": "moka", "args": ["demo-server"]}
BROKEN = {"command": sys.executable, "args": [str(Path(__file__).resolve().parent.parent / "servers" / "broken_apps_server.py")]}


def box(page: Any, selector: str) -> dict[str, float]:
    return page.locator(selector).first.bounding_box()  # type: ignore[no-any-return]


def test_side_by_side_scrolling_and_folding(moka_factory: Any) -> None:
    moka = moka_factory({"moka-demo": DEMO, "broken": BROKEN})
    page = moka.open("runner?server=moka-demo&tool=roll_dice")
    page.set_viewport_size({"width": 1400, "height": 800})
    page.wait_for_selector("#runner-run:not([disabled])", timeout=15000)
    side, results = box(page, ".runner-side"), box(page, "#runner-results")
    assert results["x"] >= side["x"] + side["width"], (side, results)  # side by side

    for _ in range(3):  # enough results to push the newest out of view if nothing scrolled
        page.click("#runner-run")
        moka.wait(lambda: page.locator(".runner-result .badge-success").count() >= 1, what="a run done")
    page.locator("#runner-results").evaluate("el => el.closest('.screen-scroll').scrollTop = 99999")
    page.click("#runner-run")
    newest = page.locator(".runner-result").first
    moka.wait(lambda: newest.evaluate("el => { const r = el.getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight; }"),
              what="the new result scrolled into view")
    # roll_dice has an app: its text result is folded, the view is what shows.
    moka.wait(lambda: newest.locator(".runner-text-fold").count() == 1, what="the text result folded")
    assert newest.locator(".runner-text-fold").get_attribute("open") is None

    page.set_viewport_size({"width": 900, "height": 800})
    side, results = box(page, ".runner-side"), box(page, "#runner-results")
    assert results["y"] >= side["y"] + side["height"] - 1  # stacked on a narrow window

    page.goto(moka.url + "#runner?server=broken&tool=bad_uri")
    page.locator("#runner-problem").wait_for(timeout=10000)
    assert "no app will be shown" in page.locator("#runner-problem").inner_text()


def test_a_new_result_and_its_view_come_into_view_on_a_short_window(moka_factory: Any) -> None:
    """800×700 (form stacked over the results): roll_dice's result and its dice view end up on screen, not with
    only the entry's header showing and the view card's top at y=686 of 700, as before."""
    moka = moka_factory({"moka-demo": DEMO})
    page = moka.open("runner?server=moka-demo&tool=roll_dice")
    page.set_viewport_size({"width": 800, "height": 700})
    page.wait_for_selector("#runner-run:not([disabled])", timeout=15000)
    page.click("#runner-run")
    view = moka.wait_view_ready("roll_dice")
    frame = page.locator(f'.runner-result .view-frame[data-view-id="{view.id}"]')
    def in_sight() -> bool:
        r = frame.bounding_box()
        return bool(r and r["height"] > 100 and r["y"] >= 0 and r["y"] + r["height"] <= 700 + 1)
    moka.wait(in_sight, what="the dice view wholly on screen")
    page.screenshot(path="/tmp/moka-runner-800x700.png")
