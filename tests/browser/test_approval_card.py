"""The approval card in Chromium: a destructive call waits in its card until the person allows it."""

from __future__ import annotations

import sys
from pathlib import Path

from browser_support import Moka
from moka_shell.testing.fake_openai import FakeOpenAIServer
from support import SERVERS

SHOTS = Path("/tmp/moka-approval")


def test_approval_card_allow_once_with_edited_arguments(moka_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The card names the tool, says what its annotations mean, and runs it with the edited arguments."""
    marker = tmp_path / "deleted.txt"
    with FakeOpenAIServer() as srv:
        srv.tool_then_reply("delete_all", {"reason": "clean up"}, "All gone.")
        moka: Moka = moka_factory(
            {"files": {"command": sys.executable, "args": [str(SERVERS / "approval_server.py"), str(marker)]}},
            agent={"backend": "ollama", "model": "fake-model", "baseUrls": {"ollama": srv.base_url}})
        page = moka.open("chat")
        page.set_viewport_size({"width": 1100, "height": 760})
        page.fill("#composer", "delete everything on files")
        page.keyboard.press("Enter")
        card = page.locator('.tool-card[data-status="approval"]')
        card.wait_for(timeout=20000)
        text = card.inner_text()
        assert "Allow “Delete everything” to run?" in text and "on files" in text
        assert "May delete or overwrite things" in text and "Waiting for you" in text
        assert not marker.exists()
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / "light.png"))
        moka.call("settings.set", {"key": "theme.mode", "value": "dark"})
        page.wait_for_function("document.documentElement.dataset.mode === 'dark' || "
                               "document.documentElement.classList.contains('dark') || "
                               "getComputedStyle(document.body).backgroundColor !== 'rgb(255, 255, 255)'")
        page.wait_for_timeout(300)  # let the theme transition finish before the picture (not an assertion)
        page.screenshot(path=str(SHOTS / "dark.png"))
        editor = card.locator(".approval-args")
        editor.fill("not json")
        card.locator('[data-decision="once"]').click()
        card.locator(".approval-problem:not([hidden])").wait_for(timeout=5000)  # bad JSON: nothing sent
        assert not marker.exists()
        editor.fill('{"reason": "the person edited this"}')
        card.locator('[data-decision="once"]').click()
        page.locator('.tool-card[data-status="done"]').wait_for(timeout=20000)
        page.wait_for_selector('.msg[data-role="assistant"]:has-text("All gone.")', timeout=15000)
        assert page.locator(".approval").count() == 0
    assert marker.read_text() == "deleted: the person edited this"
    assert moka.app.config.approval.servers == {}  # "once" saves nothing
