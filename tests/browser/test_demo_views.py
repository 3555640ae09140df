"""Every host method, exercised from the moka-demo views in Chromium through the real UI."""

from __future__ import annotations

from typing import Any

from browser_support import DEMO, Moka


def open_playground(moka: Moka) -> tuple[Any, Any]:
    moka.open("runner")
    moka.call("tools.run", {"server": "moka-demo", "tool": "open_playground", "arguments": {}})
    view = moka.wait_view_ready("open_playground")
    frame = moka.frame(view.id)
    frame.wait_for_selector('body[data-state="ready"]', timeout=20000)
    return view, frame


def last_log(frame: Any, action: str) -> str:
    entry = frame.locator(f'#log li[data-action="{action}"]').first
    entry.wait_for(timeout=15000)
    return str(entry.get_attribute("data-outcome")) + " " + entry.inner_text()


def wait_log(moka: Moka, frame: Any, action: str, outcome: str) -> str:
    return moka.wait(lambda: (t := last_log(frame, action)).startswith(outcome) and t, 15, f"{action} {outcome}")


def test_dice_view_rerolls_through_its_app_only_tool(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """The dice view renders input then result, and its Roll again button calls reroll_dice (app-only)."""
    moka = moka_factory({"moka-demo": DEMO})
    moka.open("runner")
    moka.call("tools.run", {"server": "moka-demo", "tool": "roll_dice", "arguments": {"sides": 12, "count": 4}})
    view = moka.wait_view_ready("roll_dice")
    frame = moka.frame(view.id)
    frame.wait_for_selector('body[data-state="result"]', timeout=20000)
    assert len(frame.locator("#dice-values").inner_text().split(",")) == 4
    count = frame.locator("body").get_attribute("data-result-count")
    moka.click_in_view(frame, "#reroll")
    moka.wait(lambda: frame.locator("body").get_attribute("data-result-count") != count, what="reroll rendered")
    calls = [e["message"]["params"]["name"] for e in moka.ui_rpc(view.id)
             if e["direction"] == "in" and e.get("method") == "tools/call"]
    assert calls == ["reroll_dice"]


def test_playground_tool_calls_resources_and_refusals(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """App-only tools work, the model-only tool is refused with a JSON-RPC error, resources are readable."""
    moka = moka_factory({"moka-demo": DEMO})
    view, frame = open_playground(moka)
    moka.click_in_view(frame, "#btn-reroll")
    assert wait_log(moka, frame, "reroll", "ok")
    moka.click_in_view(frame, "#btn-model-only")
    refused = wait_log(moka, frame, "model-only", "refused")
    assert "-32000" in refused
    moka.click_in_view(frame, "#btn-read")
    assert wait_log(moka, frame, "read", "ok")
    moka.click_in_view(frame, "#btn-list")
    assert wait_log(moka, frame, "list", "ok")
    moka.click_in_view(frame, "#btn-ping")
    assert wait_log(moka, frame, "ping", "ok")
    # the host asked the app for its tools and can call the one it registered
    moka.wait(lambda: frame.locator("#app-tools-listed").inner_text().strip() not in ("", "0", "—"),
              what="app tools listed")


def test_display_modes_size_and_theme_reach_the_view(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """Fullscreen on request and back (Esc), size changes resize the frame, a theme switch reaches the view."""
    moka = moka_factory({"moka-demo": DEMO})
    view, frame = open_playground(moka)
    page = moka.page
    card = page.locator(f'.view-card[data-view-id="{view.id}"]')
    moka.click_in_view(frame, "#btn-fullscreen")
    assert "fullscreen" in wait_log(moka, frame, "display-mode", "ok")
    moka.wait(lambda: card.get_attribute("data-mode") == "fullscreen", what="card in fullscreen")
    moka.wait(lambda: frame.locator("#ctx-display-mode").inner_text().strip() == "fullscreen", what="view told")
    card.locator(".view-title").click()  # focus back on Moka's own page (the view's frame had it)
    page.keyboard.press("Escape")
    moka.wait(lambda: card.get_attribute("data-mode") == "inline", what="Esc back to inline")
    moka.wait(lambda: frame.locator("#ctx-display-mode").inner_text().strip() == "inline", what="view told inline")

    iframe = page.locator(f'.view-frame[data-view-id="{view.id}"]')
    # Measure once the frame has settled at the height the view reported: while it is still
    # animating there, any later reading is bigger whether or not the view grew.
    moka.wait(lambda: abs(iframe.bounding_box()["height"] - view.height) < 1, what="frame at the view's height")
    before = view.height
    moka.click_in_view(frame, "#btn-grow")
    moka.wait(lambda: view.height > before, what="the view reported a bigger size")
    moka.wait(lambda: abs(iframe.bounding_box()["height"] - view.height) < 1 and view.height > before,
              what="frame grew to the view's new height")

    start_theme = frame.locator("#ctx-theme").inner_text().strip()
    target = "dark" if start_theme != "dark" else "light"
    moka.call("theme.set", {"mode": target})
    moka.wait(lambda: frame.locator("#ctx-theme").inner_text().strip() == target, what="theme reached the view")
    moka.wait(lambda: page.locator("html").get_attribute("data-theme") == target, what="Moka restyled")


def test_undeclared_connect_is_blocked(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """A fetch to a domain the resource did not declare is blocked by the CSP, and Moka hears about it."""
    moka = moka_factory({"moka-demo": DEMO})
    view, frame = open_playground(moka)
    frame.fill("#fetch-url", "http://127.0.0.1:9/undeclared")
    moka.click_in_view(frame, "#btn-fetch")
    assert wait_log(moka, frame, "csp", "warning")
    moka.wait(lambda: any("connect-src" in p for p in view.problems), what="problem recorded")
    moka.page.wait_for_selector(f'.view-problem', timeout=10000)


def test_message_link_download_and_teardown(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """ui/message lands in the chat as "From app", open-link asks first, download works, teardown happens."""
    moka = moka_factory({"moka-demo": DEMO})
    view, frame = open_playground(moka)
    frame.fill("#message-text", "hello from the playground")
    moka.click_in_view(frame, "#btn-message")
    assert wait_log(moka, frame, "message", "ok")
    convs = moka.wait(lambda: moka.call("conversations.list"), what="a conversation")
    msgs = moka.call("conversations.get", {"id": convs[0]["id"]})["messages"]
    assert msgs[0]["source"] == "app" and "hello from the playground" in msgs[0]["content"]

    moka.call("settings.set", {"key": "consent.open_link", "value": "deny"})
    moka.click_in_view(frame, "#btn-link")  # the person's setting says no
    assert "host answered isError" in wait_log(moka, frame, "link", "error")  # a denial is an isError result

    moka.call("settings.set", {"key": "consent.download", "value": "allow"})
    with moka.page.expect_download(timeout=15000) as dl:
        moka.click_in_view(frame, "#btn-download")
    assert dl.value.suggested_filename == "moka-dice.txt"

    moka.call("view.close", {"viewId": view.id})
    rpc = moka.ui_rpc(view.id)
    teardown = [e for e in rpc if e["direction"] == "out" and e.get("method") == "ui/resource-teardown"]
    assert teardown
    answered = [e for e in rpc if e["direction"] == "in" and "method" not in e["message"]
                and e["message"].get("id") == teardown[0]["message"]["id"]]
    assert answered and "result" in answered[0]["message"]
    assert view.state == "closed"

