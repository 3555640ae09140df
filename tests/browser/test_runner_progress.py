"""Progress in Chromium: the bar and the server's message in the Tool runner's entry and on the chat's
tool card, and the runner's Stop, which the server sees as notifications/cancelled."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from browser_support import Moka
from moka_shell.testing.fake_openai import FakeOpenAIServer
from support import SERVERS

SHOTS = Path("/tmp/moka-progress")


def elicit_server(log: Path) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVERS / "elicit_server.py"), str(log)]}


def test_runner_shows_progress_and_stop_cancels(moka_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A long job: its entry shows "Step n of 40" and a bar that moves; Stop ends it on the server."""
    log = tmp_path / "server.log"
    moka: Moka = moka_factory({"e": elicit_server(log)})
    page = moka.open("runner")
    page.set_viewport_size({"width": 1100, "height": 700})
    page.select_option("#runner-server", "e")
    page.select_option("#runner-tool", "long_job")
    page.get_by_label("delay").fill("0.4")
    page.click("#runner-run")
    entry = page.locator('.runner-result[data-tool="long_job"]').first
    bar = entry.locator(".runner-progress .progress-bar")
    bar.wait_for(timeout=20000)
    page.wait_for_function("() => Number(document.querySelector('.runner-progress .progress-bar')"
                           "?.getAttribute('aria-valuenow')) >= 5", timeout=30000)
    assert entry.locator(".progress-message").inner_text().startswith("Step ")
    assert entry.locator(".progress-message").inner_text().endswith(" of 40")
    assert entry.locator(".progress-percent").inner_text().endswith("%")
    SHOTS.mkdir(exist_ok=True)
    for mode in ("light", "dark"):
        moka.call("settings.set", {"key": "theme.mode", "value": mode})
        page.wait_for_function(f"() => document.documentElement.dataset.theme === '{mode}'", timeout=5000)
        page.wait_for_timeout(300)  # let the theme transition finish before the picture (not an assertion)
        page.screenshot(path=str(SHOTS / f"runner-{mode}.png"))
    entry.locator(".runner-stop").click()
    entry.locator(".badge:has-text('Stopped')").wait_for(timeout=20000)
    assert "The server was told to cancel" in entry.inner_text()
    assert entry.locator(".runner-stop").count() == 0 and entry.locator(".progress-bar").count() == 0
    moka.wait(lambda: log.exists() and "job cancelled" in log.read_text(), 20, "the server's job cancelled")
    assert any(line.startswith("cancelled ") for line in log.read_text().splitlines())  # notifications/cancelled


def test_chat_card_shows_progress_until_the_call_ends(moka_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A model's long call: its card shows the bar while it runs, and the result when it is done."""
    with FakeOpenAIServer() as srv:
        srv.tool_then_reply("long_job", {"steps": 12, "delay": 0.3}, "The job is done.")
        moka: Moka = moka_factory({"e": elicit_server(tmp_path / "server.log")}, approval={"mode": "all"},
                                  agent={"backend": "ollama", "model": "fake-model", "baseUrls": {"ollama": srv.base_url}})
        page = moka.open("chat")
        page.set_viewport_size({"width": 1100, "height": 700})
        page.fill("#composer", "run the long job")
        page.keyboard.press("Enter")
        card = page.locator(".tool-card")
        card.locator(".tool-progress .progress-bar").wait_for(timeout=20000)
        assert "of 12" in card.locator(".progress-message").inner_text()
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / "chat-light.png"))
        page.locator('.tool-card[data-status="done"]').wait_for(timeout=30000)
        page.wait_for_selector('.msg[data-role="assistant"]:has-text("The job is done.")', timeout=15000)
        assert card.locator(".progress-bar").count() == 0
