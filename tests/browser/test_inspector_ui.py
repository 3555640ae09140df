"""The Inspector screen with 20,000 events: the newest page, older pages, search in the core, live events."""

from __future__ import annotations

import re
from typing import Any

from moka_shell.inspector import Inspector

COUNT = 20_000
ROWS = "#inspector-list .insp-row"


async def fill(inspector: Inspector, start: int, count: int) -> None:
    """Record events on the core loop, as the app does; each carries a tag of its own to search for."""
    for i in range(start, start + count):
        message = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                   "params": {"name": "ping", "arguments": {"i": i, "tag": f"needle-{i:05d}"}}}
        inspector.record("ui.rpc", message, direction="in" if i % 2 else "out", server="bench", view=f"v{i % 7}")


def digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def row_seqs(page: Any) -> list[int]:
    return [int(s) for s in page.locator(ROWS).evaluate_all("rows => rows.map(r => r.dataset.seq)")]


def open_inspector(moka_factory: Any) -> tuple[Any, Any, int]:
    """Moka with COUNT events recorded, on its Inspector screen; and the seq of the first of them."""
    moka = moka_factory({})
    first = moka.app.inspector.seq + 1
    moka.core.submit(fill(moka.app.inspector, 0, COUNT)).result(120)
    page = moka.open("inspector")
    return moka, page, first


def test_the_newest_page_then_older_ones(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """First the newest 2,000 with an honest count; "Load older" and scrolling up fetch more, in place."""
    moka, page, _first = open_inspector(moka_factory)
    newest = moka.app.inspector.seq
    total = len(moka.app.inspector.query(limit=10_000_000))
    page.wait_for_selector(f'{ROWS}[data-seq="{newest}"]', timeout=20000)
    count = page.locator("#inspector-count")
    moka.wait(lambda: digits(count.inner_text()) == f"2000{total}", what="Showing 2,000 of all events")
    assert "Showing" in count.inner_text()
    assert page.locator(ROWS).count() < 120  # only the rows in view (and a few more) exist

    page.click("#inspector-older")
    moka.wait(lambda: digits(count.inner_text()) == f"4000{total}", what="a second page")
    # Scrolling to the top fetches the next page and keeps the rows in view where they were.
    page.locator("#inspector-list").evaluate("vp => { vp.scrollTop = 0; }")
    moka.wait(lambda: digits(count.inner_text()) == f"6000{total}", what="a third page on scrolling up")
    # The list grows above the rows that were on screen (its scroll is set in the frame after the rows).
    moka.wait(lambda: page.locator("#inspector-list").evaluate("vp => vp.scrollTop") >= 1900 * 30, 10,
              "the rows on screen kept in view above the new page")
    seqs = row_seqs(page)
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # consecutive: no gap, no repeat
    assert newest - 6000 < seqs[0] < newest - 3900


def test_search_finds_an_old_event_and_live_events_still_arrive(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """A search runs in the core over every event (not just the fetched page); live events append."""
    moka, page, first = open_inspector(moka_factory)
    page.wait_for_selector(f'{ROWS}[data-seq="{moka.app.inspector.seq}"]', timeout=20000)
    old = first + 42  # needle-00042: far older than the first page
    page.fill("#inspector-filter-text", "NEEDLE-00042")
    moka.wait(lambda: row_seqs(page) == [old], what="the one matching old event")
    assert digits(page.locator("#inspector-count").inner_text()).startswith("1")
    assert "1 matching event" in page.locator("#inspector-count").inner_text()
    page.locator(ROWS).first.click()
    assert "needle-00042" in page.locator("#inspector-detail").inner_text()

    # A live event that matches the search appears; one that does not, does not.
    moka.core.submit(fill(moka.app.inspector, 42, 1)).result(30)
    moka.core.submit(fill(moka.app.inspector, 43, 1)).result(30)
    newest = moka.app.inspector.seq
    moka.wait(lambda: row_seqs(page) == [old, newest - 1], what="the matching live event")
    assert "2 matching events" in page.locator("#inspector-count").inner_text()

    page.fill("#inspector-filter-text", "")
    moka.wait(lambda: newest in row_seqs(page) and digits(page.locator("#inspector-count").inner_text()).startswith(
        "2000"), what="the newest page again")
    moka.core.submit(fill(moka.app.inspector, 50_000, 3)).result(30)
    moka.wait(lambda: row_seqs(page)[-3:] == [newest + 1, newest + 2, newest + 3], what="live events appended")
