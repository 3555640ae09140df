"""Streamed arguments in Chromium: a view mounts when the model starts the call, and one whose
handshake ends late still gets the newest `tool-input-partial` (finding V3; issues 27.3, 29.4).

The view is built on the official view SDK (tests/servers/sdk_apps_server.py); the fake model
stops half-way through the call's arguments until the test lets it go on.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from browser_support import Moka
from moka_shell.core.chat.partial_json import repair_partial_json
from moka_shell.testing.fake_openai import FakeOpenAIServer, Hold, Text, ToolCall
from support import SERVERS

# Trusted, so its read-only tools run unasked (the partials are under test here, not approval).
SDK_APPS = {"command": sys.executable, "args": [str(SERVERS / "sdk_apps_server.py")], "trustAnnotations": True}
AGENT = {"backend": "ollama", "model": "fake-model"}
TEXT = "the newest partial reaches a view that finished its handshake late"


def _view_of(moka: Moka, tool: str) -> Any:
    return moka.wait(lambda: next((v for v in moka.views() if v.tool.name == tool), None), 20, f"a {tool} view")


def test_a_late_handshake_gets_the_newest_partial_and_the_view_mounts_at_the_call_start(moka_factory) -> None:  # type: ignore[no-untyped-def]
    call = ToolCall("late_note", {"text": TEXT}, fragments=8, hold=Hold(after=5))
    assert call.hold is not None
    with FakeOpenAIServer() as srv:
        srv.enqueue([[call], [Text("Noted.")]])
        moka: Moka = moka_factory({"sdk": SDK_APPS}, agent={**AGENT, "baseUrls": {"ollama": srv.base_url}})
        try:
            page = moka.open("chat")
            page.fill("#composer", "take a note")
            page.keyboard.press("Enter")
            assert call.hold.reached.wait(30), "the fake model never reached the hold"
            # Mounted while the model is still writing the call: its frame is in the tool's card.
            view = _view_of(moka, "late_note")
            card = page.locator(f'.tool-card:has(.view-slot[data-view-id="{view.id}"])')
            card.wait_for(timeout=20000)
            assert card.get_attribute("data-status") == "streaming"
            frame = moka.frame(view.id)
            moka.wait(lambda: frame.evaluate("typeof window.go === 'function'"), 20, "the view's script")
            frame.evaluate("window.go()")  # the handshake, after five fragments came
            moka.wait(lambda: view.state == "ready", 20, "the late handshake")
            expected = repair_partial_json("".join(call.pieces()[:5]))
            assert expected and expected.get("text"), expected
            want = json.dumps(expected, separators=(",", ":"))
            moka.wait(lambda: frame.inner_text("#partial") == want, 20, f"the partial {want} in the view")
            assert card.get_attribute("data-status") == "streaming"
        finally:
            call.hold.release.set()
        moka.wait(lambda: "noted:" in frame.inner_text("#result"), 30, "the result in the view")
        seen = frame.evaluate("window.seen")
        assert seen[0] == "partial" and seen.count("input") == 1 and seen[-1] == "result", seen
        assert set(seen[:seen.index("input")]) == {"partial"}, seen
        assert json.loads(frame.inner_text("#input")) == {"text": TEXT}
