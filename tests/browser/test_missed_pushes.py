"""What the core sends a view while the page's socket is down reaches it after the page reconnects
(reliability finding N2: the tool result and the theme change were lost, and the view waited forever),
and questions to the person asked meanwhile (an approval, a consent question) are shown when it is back.

The real page in Chromium: its WebSocket goes through a Playwright route, so the test can drop it
(the core closes it) and keep it down (the route refuses the page's reconnects) for as long as it
needs, then let it back.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from browser_support import Moka
from moka_shell.core.views import redelivery
from moka_shell.testing.fake_openai import FakeOpenAIServer
from support import SERVERS

SERVER = {"command": sys.executable, "args": [str(Path(__file__).resolve().parents[1] / "servers" / "gated_server.py")]}


class SocketGate:
    """Every page socket through a route: passed to Moka while open, refused while shut."""

    def __init__(self, page: Any) -> None:
        self.shut = False
        self.refused = 0
        page.route_web_socket("**/api/ws**", self._route)

    def _route(self, ws: Any) -> None:
        if self.shut:
            self.refused += 1
            ws.close(code=1012, reason="the test keeps the socket down")
            return
        ws.connect_to_server()


def heard(moka: Moka, view_id: str) -> list[str]:
    return moka.frame(view_id).evaluate("() => window.heard || []")  # type: ignore[no-any-return]


def drop_sockets(moka: Moka) -> None:
    async def close() -> None:
        for ws in list(moka.web.sockets):
            await ws.close(code=1012)

    moka.core.submit(close()).result(30)
    moka.wait(lambda: not moka.web.sockets, 30, "the page's socket to close")


def test_a_result_and_a_theme_change_sent_while_the_socket_is_down_reach_the_view(
        moka_factory: Any, tmp_path: Path) -> None:
    moka: Moka = moka_factory({"gated": SERVER})
    gate = SocketGate(moka.page)
    page = moka.open("runner")
    host = moka.app.view_host
    moka.call("theme.set", {"mode": "light"})
    door = tmp_path / "gate"
    running = moka.core.submit(host.run_tool("gated", "gated", {"gate": str(door)}))
    view = moka.wait(lambda: next((v for v in moka.views() if v.tool.name == "gated" and v.initialized), None),
                     60, "the view's handshake")
    moka.wait(lambda: "tool-input" in heard(moka, view.id), 30, "the view to hear its input")

    gate.shut = True
    drop_sockets(moka)
    door.write_text("released at last", encoding="utf-8")
    running.result(60)  # the result came, and was sent to the view while no page could hear it
    moka.call("theme.set", {"mode": "dark"})
    moka.wait(lambda: page.locator('#conn[data-status="reconnecting"], #conn[data-status="offline"]').count(),
              20, "the page to see it is cut off")
    moka.wait(lambda: gate.refused, 30, "a reconnect to be refused")
    result, dark = "tool-result:released at last", "host-context-changed:dark"
    cut_off = heard(moka, view.id)  # a container change may have come just before the drop
    assert cut_off[0] == "tool-input" and result not in cut_off and dark not in cut_off, cut_off

    gate.shut = False
    moka.wait(lambda: moka.web.sockets, 60, "the page to reconnect")
    got = moka.wait(lambda: h if dark in (h := heard(moka, view.id)) else None, 30,
                    f"the view to get what it missed (it heard {heard(moka, view.id)})")
    assert got[:len(cut_off)] == cut_off and got.count(result) == 1 and got.count(dark) == 1
    assert got.index(result) < got.index(dark)  # in the order they were sent
    assert page.locator(f'.view-frame[data-view-id="{view.id}"]').count() == 1


def test_a_view_that_missed_more_than_is_kept_is_mounted_again_and_fed_afresh(
        moka_factory: Any, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(redelivery, "MAX_KEPT", 1)  # the result and the theme change can't both be given again
    moka: Moka = moka_factory({"gated": SERVER})
    gate = SocketGate(moka.page)
    page = moka.open("runner")
    moka.call("theme.set", {"mode": "light"})
    door = tmp_path / "gate"
    running = moka.core.submit(moka.app.view_host.run_tool("gated", "gated", {"gate": str(door)}))
    view = moka.wait(lambda: next((v for v in moka.views() if v.tool.name == "gated" and v.initialized), None),
                     60, "the view's handshake")
    moka.wait(lambda: "tool-input" in heard(moka, view.id), 30, "the view to hear its input")
    first = moka.frame(view.id)
    first.evaluate("() => { window.firstFrame = true; }")

    gate.shut = True
    drop_sockets(moka)
    door.write_text("released at last", encoding="utf-8")
    running.result(60)
    moka.call("theme.set", {"mode": "dark"})
    moka.wait(lambda: gate.refused, 30, "a reconnect to be refused")
    gate.shut = False
    moka.wait(lambda: moka.web.sockets, 60, "the page to reconnect")

    def fed_again() -> Any:
        try:
            state = moka.frame(view.id).evaluate("() => [!!window.firstFrame, window.startTheme, window.heard || []]")
        except Exception:  # noqa: BLE001 - the old frame, detached while it was read: look again
            return None
        return state if not state[0] and "tool-result:released at last" in state[2] else None

    _, theme, got = moka.wait(fed_again, 60, "a new frame fed input and result")
    assert theme == "dark" and got[:2] == ["tool-input", "tool-result:released at last"]
    assert page.locator(f'.view-frame[data-view-id="{view.id}"]').count() == 1
    assert view.state == "ready" and view.initialized


def test_questions_asked_while_the_socket_is_down_are_shown_when_it_is_back(
        moka_factory: Any, tmp_path: Path) -> None:
    """An approval and a consent question asked during the drop wait, and the page shows both once back."""
    marker = tmp_path / "deleted.txt"
    with FakeOpenAIServer() as srv:
        moka: Moka = moka_factory(
            {"files": {"command": sys.executable, "args": [str(SERVERS / "approval_server.py"), str(marker)]}},
            agent={"backend": "ollama", "model": "fake-model", "baseUrls": {"ollama": srv.base_url}})
        gate = SocketGate(moka.page)
        page = moka.open("chat")
        page.fill("#composer", "hello")
        page.keyboard.press("Enter")
        page.wait_for_selector('.msg[data-role="assistant"]:has-text("ok")', timeout=30000)
        [conv] = moka.call("conversations.list")
        srv.tool_then_reply("delete_all", {"reason": "clean up"}, "All gone.")

        gate.shut = True
        drop_sockets(moka)
        moka.call("chat.send", {"conversationId": conv["id"], "text": "delete everything on files"})
        moka.wait(lambda: moka.app.approvals.pending(), 30, "the call to wait for the person")
        consent = moka.core.submit(moka.app.consent.ask("open_link", "files", {"url": "https://example.com/docs"}))
        moka.wait(lambda: moka.app.consent.pending(), 30, "the consent question to wait for the person")
        moka.wait(lambda: gate.refused, 30, "a reconnect to be refused")
        gate.shut = False

        page.locator("#consent-dialog #consent-allow").click(timeout=30000)
        assert consent.result(30) is True
        card = page.locator('.tool-card[data-status="approval"]')
        card.wait_for(timeout=30000)
        card.locator('[data-decision="once"]').click()
        page.locator('.tool-card[data-status="done"]').wait_for(timeout=30000)
    assert marker.read_text() == "deleted: clean up"


def test_a_question_asked_while_the_page_reloads_is_shown_by_the_new_page(moka_factory: Any) -> None:
    moka: Moka = moka_factory({"gated": SERVER})
    gate = SocketGate(moka.page)
    page = moka.open("runner")
    gate.shut = True  # the reloaded page can't connect until the question was asked
    page.reload()
    moka.wait(lambda: not moka.web.sockets, 30, "the old page's socket to close")
    consent = moka.core.submit(moka.app.consent.ask("open_link", "gated", {"url": "https://example.com/docs"}))
    moka.wait(lambda: moka.app.consent.pending(), 30, "the consent question to wait for the person")
    moka.wait(lambda: gate.refused, 30, "the new page's socket to be refused")
    gate.shut = False
    page.locator("#consent-dialog #consent-deny").click(timeout=30000)
    assert consent.result(30) is False and not moka.app.consent.pending()
