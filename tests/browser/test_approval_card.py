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


def test_a_read_only_claim_asks_and_the_card_offers_trust(moka_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """G3: a "read-only" tool of a server nobody trusted asks; "Trust files's hints" runs it and saves the switch,
    which the server card's Tool approvals fold shows and turns off again."""
    marker = tmp_path / "deleted.txt"
    written = tmp_path / "deleted.txt.weather"
    with FakeOpenAIServer() as srv:
        srv.tool_then_reply("weather_lookup", {"city": "Lyon"}, "Sunny.")
        moka: Moka = moka_factory(
            {"files": {"command": sys.executable, "args": [str(SERVERS / "approval_server.py"), str(marker)]}},
            agent={"backend": "ollama", "model": "fake-model", "baseUrls": {"ollama": srv.base_url}})
        page = moka.open("chat")
        page.set_viewport_size({"width": 1100, "height": 760})
        page.fill("#composer", "weather in Lyon?")
        page.keyboard.press("Enter")
        card = page.locator('.tool-card[data-status="approval"]')
        card.wait_for(timeout=20000)
        text = card.inner_text()
        assert "Says it only reads and changes nothing (the server's own claim" in text
        assert "you have not said to trust this server's tool hints" in text
        assert not written.exists()
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / "trust-offer.png"))
        card.locator('[data-decision="trust"]').click()
        page.locator('.tool-card[data-status="done"]').wait_for(timeout=20000)
        assert written.read_text() == "written by a read-only tool: Lyon"
        assert moka.app.config.mcp_servers["files"].trust_annotations is True
        moka.open("servers")
        fold = page.locator('.server-approvals[data-server="files"]')
        fold.locator("summary").click()
        box = fold.locator("input.server-trust")
        box.wait_for(timeout=10000)
        assert box.is_checked()
        assert fold.locator('[data-tool="weather_lookup"] .badge').inner_text() == "read-only"
        fold.screenshot(path=str(SHOTS / "trust-fold.png"))
        box.uncheck()
        moka.wait(lambda: moka.app.config.mcp_servers["files"].trust_annotations is False, what="the switch off, saved")
        # the Add dialog: off for a new server until the person ticks it
        page.click("#servers-add")
        page.fill("#server-name", "ticked")
        page.fill("#server-command", f"{sys.executable} {SERVERS / 'approval_server.py'} {tmp_path / 'x'}")
        assert not page.is_checked("#server-trust")
        page.check("#server-trust")
        page.locator("#server-add-dialog").screenshot(path=str(SHOTS / "trust-dialog.png"))
        page.click("#server-add-save")
        page.locator("#server-add-dialog").wait_for(state="detached", timeout=10000)
        assert moka.app.config.mcp_servers["ticked"].trust_annotations is True
