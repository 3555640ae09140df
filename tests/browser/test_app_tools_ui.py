"""App-registered tools offered to the model (draft spec; issue 29.1), with the official
budget-allocator app, which registers five tools in its view (`app.registerTool`).

While its view lives in the conversation, the model is offered them as `app__…` tools that say
whose they are; a call goes through the same approval card (which names the app) and runs in
the view (the slider moves); the card says it is the app's tool; when the view closes, they are
withdrawn from the next request.
"""

from __future__ import annotations

from typing import Any

from browser_support import Moka, npm_stdio
from moka_shell.testing.fake_openai import FakeOpenAIServer, Text, ToolCall

AGENT = {"backend": "ollama", "model": "fake-model"}
APP_TOOLS = {"app__get-allocations", "app__set-allocation", "app__set-total-budget", "app__set-company-stage",
             "app__get-benchmark-comparison"}


def offered(request: dict[str, Any]) -> dict[str, str]:
    return {t["function"]["name"]: t["function"]["description"] for t in request.get("tools", [])}


def allow_once(page: Any, call_name: str) -> Any:
    card = page.locator(f'.tool-card[data-status="approval"]:has(.tool-name:text-is("{call_name}"))')
    card.wait_for(timeout=20000)
    return card


def test_a_live_views_tools_are_offered_run_in_the_view_and_withdrawn(moka_factory) -> None:  # type: ignore[no-untyped-def]
    with FakeOpenAIServer() as srv:
        srv.enqueue([[ToolCall("get-budget-data", {})], [Text("Here is your budget.")]])
        moka: Moka = moka_factory({"budget": npm_stdio("mcp-budget-allocator-server")},
                                  agent={**AGENT, "baseUrls": {"ollama": srv.base_url}})
        page = moka.open("chat")
        page.fill("#composer", "show my budget")
        page.keyboard.press("Enter")
        allow_once(page, "get-budget-data").locator('[data-decision="once"]').click()
        view = moka.wait_view_ready("get-budget-data")
        frame = moka.frame(view.id)
        frame.wait_for_selector('.slider-row[data-category-id="marketing"] .slider', timeout=20000)
        moka.wait(lambda: {t["name"] for t in view.app_tools} >= {n.removeprefix("app__") for n in APP_TOOLS},
                  20, "the app's tools listed")
        page.wait_for_selector('.msg[data-role="assistant"]:has-text("Here is your budget.")', timeout=20000)
        # The first request had no app tools: the view did not exist yet.
        assert not [n for n in offered(srv.requests[0]) if n.startswith("app__")]

        srv.enqueue([[ToolCall("app__set-allocation", {"categoryId": "marketing", "percent": 42})],
                     [Text("Marketing is at 42%.")]])
        page.fill("#composer", "set marketing to 42%")
        page.keyboard.press("Enter")
        card = allow_once(page, "set-allocation")
        # Under the same approval policy (no annotations: asked), and the card says whose tool it is.
        assert "App tool" in card.inner_text() and "view · budget" in card.inner_text()
        assert "of the" in card.locator(".approval-question").inner_text()
        card.locator('[data-decision="once"]').click()
        done = page.locator('.tool-card.is-app-tool[data-status="done"]')
        done.wait_for(timeout=20000)
        page.wait_for_selector('.msg[data-role="assistant"]:has-text("Marketing is at 42%.")', timeout=20000)
        moka.wait(lambda: frame.evaluate(
            "document.querySelector('.slider-row[data-category-id=\"marketing\"] .slider').value") == "42",
            20, "the view's slider moved by the model's call")
        tools = offered(srv.requests[2])
        assert APP_TOOLS <= set(tools), sorted(tools)
        assert "app view from server budget" in tools["app__set-allocation"]
        assert "get-budget-data" in tools  # the server's own tools are still there, under their names
        answer = [m for m in srv.requests[3]["messages"] if m["role"] == "tool"][-1]
        assert "Marketing" in answer["content"] and "42" in answer["content"]
        # The view got the call as tools/call, recorded like every view message.
        calls = [e["message"] for e in moka.ui_rpc(view.id) if e["direction"] == "out"
                 and e["message"].get("method") == "tools/call"]
        assert calls and calls[0]["params"] == {"name": "set-allocation",
                                                "arguments": {"categoryId": "marketing", "percent": 42}}
        stored = moka.call("conversations.list")
        cid = (stored.get("conversations") if isinstance(stored, dict) else stored)[0]["id"]
        messages = moka.app.store.messages(cid)
        app_call = [c for m in messages for c in m["toolCalls"] if c["tool"] == "set-allocation"][0]
        assert app_call["app"]["viewId"] == view.id  # kept: a reopened conversation still says it was the app's

        # The view goes: its tools go with it.
        moka.call("view.close", {"viewId": view.id})
        moka.wait(lambda: view.state == "closed", 20, "the view closed")
        srv.enqueue([[Text("ok")]])
        page.fill("#composer", "thanks")
        page.keyboard.press("Enter")
        moka.wait(lambda: len(srv.requests) >= 5, 20, "the next request")
        assert not [n for n in offered(srv.requests[4]) if n.startswith("app__")]
        page.screenshot(path="/tmp/moka-app-tools.png")
