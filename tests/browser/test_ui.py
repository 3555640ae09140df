"""The Moka UI in Chromium: a chat turn with a fake model, the Tool runner form, theme, pop-out, inspector."""

from __future__ import annotations

import json
import sys
from typing import Any

from browser_support import DEMO, Moka
from moka_shell.testing.fake_openai import FakeOpenAIServer, Text, ToolCall
from support import SERVERS


def chat_settings(srv: FakeOpenAIServer) -> dict[str, Any]:
    return {"agent": {"backend": "ollama", "model": "fake-model", "baseUrls": {"ollama": srv.base_url}}}


def test_chat_turn_calls_roll_dice_and_shows_the_view(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """Typing a message runs the agent; the dice view appears under its tool call; text streams in."""
    with FakeOpenAIServer() as srv:
        srv.tool_then_reply("roll_dice", {"sides": 6, "count": 2}, "Two dice, **rolled**.", fragments=5, delay=0.02)
        moka = moka_factory({"moka-demo": DEMO}, **chat_settings(srv))
        page = moka.open("chat")
        page.fill("#composer", "roll two dice please")
        page.keyboard.press("Enter")
        card = page.locator('.tool-card[data-status="done"]')
        card.wait_for(timeout=20000)
        view = moka.wait_view_ready("roll_dice")
        assert page.locator(f'.tool-card .view-frame[data-view-id="{view.id}"]').count() == 1
        frame = moka.frame(view.id)
        frame.wait_for_selector('body[data-state="result"]', timeout=15000)
        page.wait_for_selector('.msg[data-role="assistant"] strong', timeout=15000)  # Markdown, safely rendered
        assert "rolled" in page.locator('.msg[data-role="assistant"]').last.inner_text()


def test_ui_message_from_a_view_runs_the_agent_with_model_context(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """A view's ui/message shows as "From app" and runs a turn; its model context rides along."""
    with FakeOpenAIServer() as srv:
        srv.enqueue([[Text("Got your message.")]])
        moka = moka_factory({"moka-demo": DEMO}, **chat_settings(srv))
        page = moka.open("runner")
        moka.call("tools.run", {"server": "moka-demo", "tool": "open_playground", "arguments": {}})
        view = moka.wait_view_ready("open_playground")
        frame = moka.frame(view.id)
        frame.wait_for_selector('body[data-state="ready"]')
        moka.click_in_view(frame, "#btn-context")
        moka.wait(lambda: view.model_context is not None, what="model context stored")
        frame.fill("#message-text", "please summarise the playground")
        moka.click_in_view(frame, "#btn-message")
        moka.wait(lambda: srv.requests, what="the provider got a request")
        page.click("#nav-chat")
        page.locator("#conv-list .conv-item").first.click()  # the view started a new conversation
        page.wait_for_selector(".msg-from-app", timeout=15000)
        assert "please summarise the playground" in page.locator(".msg-app").first.inner_text()
        page.wait_for_selector('.msg[data-role="assistant"]:has-text("Got your message.")', timeout=15000)
    sent = json.dumps(srv.requests[0]["messages"])
    assert "please summarise the playground" in sent
    assert "Context from the app \\\"open_playground\\\" of server \\\"moka-demo\\\"" in sent


def test_runner_form_with_nested_objects_and_arrays(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """The generated form handles required fields, nested objects, arrays, enums, booleans and defaults."""
    moka = moka_factory({"forms": {"command": sys.executable, "args": [str(SERVERS / "forms_server.py")]}})
    page = moka.open("runner?server=forms&tool=plan_trip")
    page.wait_for_selector('#runner-form [name="destination"]', timeout=15000)
    page.click("#runner-run")  # required fields are empty: the form says so and nothing runs
    page.wait_for_selector(".field-error:not(:empty)", timeout=5000)
    assert page.locator(".runner-result").count() == 0
    page.fill('[name="destination"]', "Lisbon")
    page.fill('[name="nights"]', "3")
    page.click('[data-field="travellers"] [data-action="add-item"]')
    page.fill('[name="travellers.0.name"]', "Ada")
    page.fill('[name="travellers.0.age"]', "36")
    page.select_option('[name="options.room"]', "suite")
    page.check('[name="options.breakfast"]')
    page.click("#runner-run")
    result = page.locator(".runner-result").first
    result.wait_for(timeout=15000)
    calls = [e for e in moka.app.inspector.query(limit=10000) if e.get("method") == "tools/call"
             and e["direction"] == "out" and e["channel"] == "mcp.rpc"]
    args = calls[-1]["message"]["params"]["arguments"]
    assert args["destination"] == "Lisbon" and args["nights"] == 3
    assert args["travellers"] == [{"name": "Ada", "age": 36}]
    assert args["options"] == {"room": "suite", "breakfast": True}
    page.click("#runner-raw-toggle")  # raw JSON mode round-trips what the form holds
    raw = json.loads(page.locator("#runner-raw").input_value())
    assert raw["travellers"][0]["name"] == "Ada"


def test_theme_switch_from_settings_reaches_a_live_view(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """Switching the theme in Settings restyles Moka and sends host-context-changed to the view."""
    moka = moka_factory({"moka-demo": DEMO})
    page = moka.open("runner")
    moka.call("tools.run", {"server": "moka-demo", "tool": "open_playground", "arguments": {}})
    view = moka.wait_view_ready("open_playground")
    frame = moka.frame(view.id)
    frame.wait_for_selector('body[data-state="ready"]')
    page.click("#nav-settings")
    page.select_option("#theme-mode", "dark")
    moka.wait(lambda: page.locator("html").get_attribute("data-theme") == "dark", what="Moka dark")
    moka.wait(lambda: frame.locator("#ctx-theme").inner_text().strip() == "dark", what="view dark")
    page.select_option("#theme-mode", "light")
    moka.wait(lambda: frame.locator("#ctx-theme").inner_text().strip() == "light", what="view light")


def test_fullscreen_control_and_popout_window(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """The host's own controls: fullscreen and back; pop-out opens a window where the view runs again."""
    moka = moka_factory({"moka-demo": DEMO})
    page = moka.open("runner")
    moka.call("tools.run", {"server": "moka-demo", "tool": "roll_dice", "arguments": {"count": 3}})
    view = moka.wait_view_ready("roll_dice")
    card = page.locator(f'.view-card[data-view-id="{view.id}"]')
    card.locator('.view-controls [data-mode="fullscreen"]').click()
    moka.wait(lambda: card.get_attribute("data-mode") == "fullscreen", what="fullscreen")
    page.keyboard.press("Escape")
    moka.wait(lambda: card.get_attribute("data-mode") == "inline", what="inline again")
    inits_before = sum(1 for e in moka.ui_rpc(view.id) if e.get("method") == "ui/initialize")
    # Only a live view is asked about (a loading one loses nothing): wait until the page knows it is.
    moka.wait(lambda: card.get_attribute("data-state") == "ready", what="the card shows the view ready")
    # The app starts again there: asked first. A click the loaded page never handled is made again
    # (seen once in CI: no question in 15 s, the card still inline and ready); a handled one is not.
    strip = card.locator(".view-restart")
    for _ in range(3):
        card.locator('.view-controls [data-mode="popout"]').click()
        for _ in range(50):  # up to 5 s for the page to handle it
            if strip.is_visible() or card.get_attribute("data-mode") != "inline":
                break
            page.wait_for_timeout(100)
        assert card.get_attribute("data-mode") == "inline", f"popped out unasked ({card.get_attribute('data-state')})"
        if strip.is_visible():
            break
        moka.console.append("the pop-out click was not handled in 5 s; clicking again")
    strip.wait_for(timeout=15000)
    with page.expect_popup(timeout=15000) as popup_info:
        card.locator('.view-restart [data-action="go"]').click()
    popup = popup_info.value
    popup.wait_for_load_state()
    moka.wait(lambda: sum(1 for e in moka.ui_rpc(view.id) if e.get("method") == "ui/initialize") > inits_before,
              what="the view initialised in the pop-out window")
    moka.wait(lambda: any(f"/view/{view.id}" in f.url for f in popup.frames), what="view frame in popup")
    frame = next(f for f in popup.frames if f"/view/{view.id}" in f.url)
    frame.wait_for_selector('body[data-state="result"]', timeout=15000)
    assert view.display_mode == "popout"


def test_inspector_lists_filters_and_exports_ui_rpc(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """The inspector shows ui.rpc events live, filters by channel and method, and exports the filtered set."""
    moka = moka_factory({"moka-demo": DEMO})
    page = moka.open("runner")
    moka.call("tools.run", {"server": "moka-demo", "tool": "roll_dice", "arguments": {}})
    view = moka.wait_view_ready("roll_dice")
    page.click("#nav-inspector")
    page.wait_for_selector("#inspector-list .insp-row", timeout=15000)
    page.select_option("#inspector-filter-channel", "ui.rpc")
    moka.wait(lambda: page.locator("#inspector-list .insp-row").count() > 0 and all(
        r == "ui.rpc" for r in page.locator("#inspector-list .insp-row").evaluate_all(
            "rows => rows.map(r => r.dataset.channel)")), what="only ui.rpc rows")
    page.fill("#inspector-filter-method", "ui/initialize")
    moka.wait(lambda: 1 <= page.locator("#inspector-list .insp-row").count() and all(
        "ui/initialize" in t for t in page.locator("#inspector-list .insp-row .c-method").all_inner_texts()),
        what="rows filtered by method")
    page.locator("#inspector-list .insp-row").first.click()
    assert "ui/initialize" in page.locator("#inspector-detail").inner_text()
    with page.expect_download(timeout=15000) as dl:
        page.click("#inspector-export")
    lines = [json.loads(line) for line in open(dl.value.path()).read().splitlines() if line.strip()]
    assert lines and all(e["channel"] == "ui.rpc" and "ui/initialize" in (e.get("method") or e.get("request_method") or "") for e in lines)
    assert any(e.get("view") == view.id for e in lines)


def test_plugin_theme_reaches_a_view(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """The Matcha theme plugin (installed through its entry point) restyles Moka and the view."""
    moka = moka_factory({"moka-demo": DEMO})
    if "matcha" not in moka.app.themes:
        import pytest

        pytest.fail("moka-theme-matcha is not installed: scripts/setup.sh installs plugins/*")
    page = moka.open("runner")
    moka.call("tools.run", {"server": "moka-demo", "tool": "open_playground", "arguments": {}})
    view = moka.wait_view_ready("open_playground")
    frame = moka.frame(view.id)
    frame.wait_for_selector('body[data-state="ready"]')
    assert int(frame.locator("#ctx-style-vars").inner_text()) == 76
    moka.call("theme.set", {"themeId": "matcha", "mode": "light"})
    moka.wait(lambda: frame.locator("#ctx-style-vars").inner_text().strip() == "12", what="Matcha's variables")
    background = frame.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--color-background-primary')")
    assert background.strip() == "light-dark(#fbfdf8, #141a11)"  # both modes; the view's scheme picks
    probe = ("(() => { const d = document.createElement('div'); d.style.background = "
             "'var(--color-background-primary)'; document.body.append(d); const c = getComputedStyle(d)"
             ".backgroundColor; d.remove(); return c; })()")
    assert frame.evaluate(probe) == "rgb(251, 253, 248)"  # what the app reads back: Matcha's light colour
    moka.wait(lambda: page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--moka-accent')").strip()
              == "#4f7a28", what="Moka's accent restyled")


def test_many_views_park_off_screen_and_come_back(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """With more than six live views, off-screen ones are torn down and re-rendered when scrolled back."""
    moka = moka_factory({"moka-demo": DEMO})
    page = moka.open("runner")
    for i in range(10):
        moka.call("tools.run", {"server": "moka-demo", "tool": "roll_dice", "arguments": {"count": 1 + i % 5}})
    moka.wait(lambda: sum(1 for v in moka.views() if v.state == "ready") >= 6, 60, "views ready")
    cards = page.locator(".view-slot")
    for i in range(cards.count()):  # scroll through everything, as a person would
        cards.nth(i).scroll_into_view_if_needed()
        page.wait_for_timeout(150)
    moka.wait(lambda: sum(1 for v in moka.views() if v.state == "parked") >= 3, 30, "parked views")
    moka.wait(lambda: sum(1 for v in moka.views() if v.live) <= 6, 30, "at most six live views")
    parked = next(v for v in moka.views() if v.state == "parked")
    teardowns = [e for e in moka.ui_rpc(parked.id) if e.get("method") == "ui/resource-teardown"]
    assert teardowns  # parked properly, not just hidden
    page.locator(f'.view-slot[data-view-id="{parked.id}"]').scroll_into_view_if_needed()
    moka.wait(lambda: parked.state == "ready" and "result_sent" in parked.timings, 30, "the parked view back")
    inits = [e for e in moka.ui_rpc(parked.id) if e.get("method") == "ui/initialize"]
    assert len(inits) == 2  # a new frame, a new handshake, input and result replayed
