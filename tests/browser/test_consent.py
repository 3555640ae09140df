"""The consent dialog for real: a view asks to open a link, the person answers by clicking."""

from __future__ import annotations

from typing import Any

from browser_support import DEMO, Moka
from test_demo_views import open_playground, wait_log

LINK = "https://modelcontextprotocol.io"  # the playground's link (demo/views/playground.js)


def ask_for_link(moka: Moka, frame: Any) -> Any:
    """Click the playground's Open link button and return the consent dialog the person sees."""
    moka.click_in_view(frame, "#btn-link")
    dialog = moka.page.locator("#consent-dialog")
    try:
        dialog.wait_for(state="visible", timeout=20000)
    except Exception as err:  # say what the page and the core saw, so a failure can be read
        events = [e for e in moka.app.inspector.query(limit=100000) if "consent" in str(e) or "open-link" in str(e)]
        raise AssertionError(f"no consent dialog; console: {moka.console[-20:]}; events: {events[-10:]}") from err
    assert LINK in dialog.inner_text()
    return dialog


def test_allow_by_clicking_opens_the_link(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """Allow: the core opens the link (browser mode: a new tab) and the view gets a success result."""
    moka = moka_factory({"moka-demo": DEMO})
    moka.context.route("https://modelcontextprotocol.io/**", lambda route: route.fulfill(body="opened"))
    view, frame = open_playground(moka)
    ask_for_link(moka, frame)
    with moka.context.expect_page(timeout=15000) as tab:
        moka.page.click("#consent-allow")
    assert tab.value.url.startswith(LINK)
    assert wait_log(moka, frame, "link", "ok")
    moka.page.locator("#consent-dialog").wait_for(state="detached", timeout=10000)
    opened = [e for e in moka.app.inspector.query(limit=100000) if e.get("method") == "view/open-link"]
    assert opened and opened[-1]["message"]["url"] == LINK + "/"  # the address as browsers write it


def test_deny_by_clicking_refuses(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """Deny: the view gets an isError result (not a JSON-RPC error), nothing is opened, and asking again asks again."""
    moka = moka_factory({"moka-demo": DEMO})
    view, frame = open_playground(moka)
    frame.fill("#message-text", "before the link")  # the old flaky test's order: a message first
    moka.click_in_view(frame, "#btn-message")
    assert wait_log(moka, frame, "message", "ok")
    ask_for_link(moka, frame)
    moka.page.click("#consent-deny")
    assert "host answered isError" in wait_log(moka, frame, "link", "error")
    assert not [e for e in moka.app.inspector.query(limit=100000) if e.get("method") == "view/open-link"]
    assert moka.app.config.consent.open_link == "ask"
    ask_for_link(moka, frame)  # a second question gets a fresh dialog
    moka.page.keyboard.press("Escape")  # closing without a choice is a no
    moka.wait(lambda: frame.locator('#log li[data-action="link"]').count() >= 2, what="second answer")
    assert "host answered isError" in wait_log(moka, frame, "link", "error")
