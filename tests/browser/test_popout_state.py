"""Pop-out never loses state silently (finding V2; issue 27.3).

No engine keeps a frame alive in another window, so the app starts again there. Before it does,
the person is told in the view's card and may keep it where it is; the frame that goes is torn
down properly first (`ui/resource-teardown`), so an app that saves then finds its state in the
new window; storage, input, result and the view's model context come along, both ways.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from browser_support import Moka
from support import SERVERS

SDK_APPS = {"command": sys.executable, "args": [str(SERVERS / "sdk_apps_server.py")]}
SHOTS = Path("/tmp/moka-popout")


def view_frame(moka: Moka, page: Any, view_id: str) -> Any:
    return moka.wait(lambda: next((f for f in page.frames if f"/view/{view_id}" in f.url and not f.is_detached()),
                                  None), 20, "the view's frame")


def count(frame: Any) -> str:
    return str(frame.evaluate("document.getElementById('count')?.textContent"))


def teardowns(moka: Moka, view_id: str) -> list[dict[str, Any]]:
    return [e["message"] for e in moka.ui_rpc(view_id)
            if e["direction"] == "out" and e["message"].get("method") == "ui/resource-teardown"]


def test_pop_out_asks_first_tears_down_and_the_app_keeps_what_it_saved(moka_factory) -> None:  # type: ignore[no-untyped-def]
    moka: Moka = moka_factory({"sdk": SDK_APPS})
    page = moka.open("runner")
    view_id = moka.call("tools.run", {"server": "sdk", "tool": "counter", "arguments": {}})["viewId"]
    view = moka.wait_view_ready("counter")
    frame = view_frame(moka, page, view_id)
    for _ in range(3):
        moka.click_in_view(frame, "#more")
    moka.wait(lambda: count(frame) == "3", 20, "three clicks counted")
    moka.wait(lambda: (view.model_context or {}).get("content") == [{"type": "text", "text": "count 3"}], 20,
              "the view's model context")

    # 1. The person is told first, and may keep it here: nothing happens then.
    card = page.locator(f'.view-card[data-view-id="{view_id}"]')
    card.locator('.view-controls [data-mode="popout"]').click()
    note = card.locator(".view-restart")
    note.wait_for(timeout=5000)
    assert "starts again in its own window" in note.inner_text()
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "asked.png"))
    note.locator('[data-action="stay"]').click()
    assert note.count() == 0 and view.display_mode == "inline" and count(frame) == "3" and not teardowns(moka, view_id)

    # 2. Going: the inline frame is torn down first (the app saves), then it starts in the window.
    card.locator('.view-controls [data-mode="popout"]').click()
    with page.expect_popup(timeout=20000) as popup_info:
        card.locator('.view-restart [data-action="go"]').click()
    popup = popup_info.value
    popup.wait_for_load_state()
    assert teardowns(moka, view_id) and "another window" in teardowns(moka, view_id)[0]["params"]["reason"]
    out = view_frame(moka, popup, view_id)
    moka.wait(lambda: count(out) == "3", 20, "the count the app saved, in the pop-out")
    moka.wait(lambda: out.evaluate("document.body.dataset.result") == "yes", 20, "the result replayed")
    assert view.model_context == {"content": [{"type": "text", "text": "count 3"}]}
    moka.click_in_view(out, "#more")
    moka.wait(lambda: count(out) == "4", 20, "a click in the pop-out")

    # 3. Back inline from the main window: its placeholder said the app starts again; it is torn down first too.
    placeholder = card.locator(".view-placeholder")
    assert "starts the app again here" in placeholder.inner_text()
    placeholder.locator("button:has-text('Bring back inline')").click()
    moka.wait(lambda: popup.is_closed(), 20, "the pop-out window closed")
    back = view_frame(moka, page, view_id)
    moka.wait(lambda: count(back) == "4", 20, "the pop-out's count, inline again")
    assert len(teardowns(moka, view_id)) == 2
    assert (view.model_context or {}).get("content") == [{"type": "text", "text": "count 4"}]

    # 4. "Don't ask again" is kept: the next pop-out opens at once.
    card.locator('.view-controls [data-mode="popout"]').click()
    card.locator(".view-restart [data-action='dont-ask']").check()
    with page.expect_popup(timeout=20000) as again:
        card.locator('.view-restart [data-action="go"]').click()
    again.value.close()
    moka.wait(lambda: view.display_mode == "inline", 20, "back inline when the window closed")
    with page.expect_popup(timeout=20000):
        card.locator('.view-controls [data-mode="popout"]').click()
    assert card.locator(".view-restart").count() == 0
