"""The official example apps (built on the ext-apps view SDK, installed from npm) in Chromium.

The SDK validates our ui/initialize result with its own schemas: a view that renders its
data proves the handshake passed.
"""

from __future__ import annotations

import re

from browser_support import DEMO, Moka, npm_stdio


def run_in_runner(moka: Moka, server: str, tool: str) -> None:
    page = moka.open(f"runner?server={server}&tool={tool}")
    page.wait_for_selector("#runner-run:not([disabled])", timeout=15000)
    page.click("#runner-run")


def test_basic_vanillajs_renders_and_calls_its_server(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """Handshake passes the SDK's validation, the result renders, and the view's button calls get-time."""
    moka = moka_factory({"vanilla": npm_stdio("mcp-server-basic-vanillajs")})
    run_in_runner(moka, "vanilla", "get-time")
    view = moka.wait_view_ready("get-time")
    frame = moka.frame(view.id)
    time_el = frame.locator("#server-time")
    time_el.wait_for()
    moka.wait(lambda: re.match(r"\d{4}-\d\d-\d\d", time_el.inner_text() or ""), what="server time rendered")
    first = time_el.inner_text()
    assert view.app_info.get("name")  # the SDK App introduced itself
    moka.click_in_view(frame, "#get-time-btn")
    moka.wait(lambda: time_el.inner_text() != first, what="time refreshed by the view's tools/call")
    calls = [e for e in moka.ui_rpc(view.id) if e["direction"] == "in" and e.get("method") == "tools/call"]
    assert calls and calls[0]["message"]["params"]["name"] == "get-time"
    replies = [e["message"] for e in moka.ui_rpc(view.id) if e["direction"] == "out" and e["message"].get("id") == calls[0]["message"]["id"]]
    assert replies and "result" in replies[0]
    # the card is labelled with where the app comes from, and the frame got a size from the view
    card = moka.page.locator(f'.view-card[data-view-id="{view.id}"]')
    assert "vanilla" in card.inner_text()
    assert view.height and view.height >= 60


def test_budget_allocator_renders_from_tool_result(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """budget-allocator renders its chart and sliders from the tool result."""
    moka = moka_factory({"budget": npm_stdio("mcp-budget-allocator-server")})
    run_in_runner(moka, "budget", "get-budget-data")
    view = moka.wait_view_ready("get-budget-data")
    frame = moka.frame(view.id)
    frame.wait_for_selector("#sliders-container input", timeout=20000)
    assert frame.locator("#sliders-container input").count() >= 3
    # it registers app tools: the host asked it for them
    moka.wait(lambda: any(e["message"].get("method") == "tools/list" for e in moka.ui_rpc(view.id)
                          if e["direction"] == "out"), what="tools/list sent to the app")


def test_system_monitor_polls_its_app_only_tool(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """system-monitor calls poll-system-stats (visibility ["app"]) from the view and it is allowed."""
    moka = moka_factory({"sysmon": npm_stdio("mcp-system-monitor-server")})
    run_in_runner(moka, "sysmon", "get-system-info")
    view = moka.wait_view_ready("get-system-info")
    frame = moka.frame(view.id)
    frame.wait_for_selector("#info-hostname", timeout=20000)
    moka.wait(lambda: frame.locator("#info-hostname").inner_text().strip() not in ("", "-", "—"),
              what="hostname rendered")

    def polled() -> bool:
        for e in moka.ui_rpc(view.id):
            msg = e["message"]
            if e["direction"] == "in" and msg.get("method") == "tools/call" and msg["params"]["name"] == "poll-system-stats":
                return True
        return False

    if not polled():
        moka.click_in_view(frame, "#poll-toggle-btn")
    moka.wait(polled, 20, "poll-system-stats called")
    errors = [e for e in moka.ui_rpc(view.id) if e["direction"] == "out" and "error" in e["message"]]
    assert not errors, errors


def test_react_view_and_demo_side_by_side(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """A React (useApp) view and a moka-demo view render in the same page, each talking to its own server."""
    moka = moka_factory({"react": npm_stdio("mcp-server-basic-react"), "moka-demo": DEMO})
    moka.open("runner")
    moka.call("tools.run", {"server": "react", "tool": "get-time", "arguments": {}})
    moka.call("tools.run", {"server": "moka-demo", "tool": "roll_dice", "arguments": {"count": 2}})
    react = moka.wait_view_ready("get-time")
    dice = moka.wait_view_ready("roll_dice")
    assert react.server == "react" and dice.server == "moka-demo"
