"""The server card's Prompts, Resources and Log sections, and the server's own icon, in real Chromium."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import Error as PlaywrightError

from browser_support import Moka
from support import SERVERS

SHOTS = Path("/tmp/moka-server-extras")


def picture(locator: Any, path: Path) -> None:
    """A screenshot of an element that may be drawn again meanwhile (a card re-renders on each status change)."""
    deadline = time.monotonic() + 20
    while True:
        try:
            locator.screenshot(path=str(path), timeout=5000)
            return
        except PlaywrightError as exc:
            if "not attached" not in str(exc) or time.monotonic() > deadline:
                raise


def test_prompts_resources_and_log_on_the_card(moka_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Preview a prompt with a completed argument, read a resource and a template, set the log level."""
    moka: Moka = moka_factory({"raw": {"command": sys.executable, "args": [str(SERVERS / "raw_server.py")]}})
    page = moka.open("servers")
    page.set_viewport_size({"width": 1100, "height": 900})
    card = page.locator('.server-card[data-server="raw"]')
    card.wait_for(timeout=20000)
    assert card.locator(".server-icon img.server-own-icon").get_attribute("src", timeout=10000).startswith("data:image/svg")
    assert "Raw server 1.0" in card.locator(".server-facts").inner_text()

    prompts = card.locator('.server-extra[data-extra="prompts"]')
    prompts.locator("summary").click()
    prompts.locator(".extras-item").nth(2).wait_for(timeout=10000)
    assert prompts.locator(".extras-item").count() == 3  # all pages
    prompts.locator('[data-prompt="prompt_1"] [data-action="preview-prompt"]').click()
    dialog = page.locator("#prompt-dialog")
    topic = dialog.locator('input[name="topic"]')
    topic.fill("ap")
    page.wait_for_function("""() => { const i = document.querySelector('#prompt-dialog input[name=topic]');
        const dl = i && document.getElementById(i.getAttribute('list'));
        return dl && [...dl.options].map(o => o.value).join(',') === 'apple,apricot'; }""", timeout=10000)
    topic.fill("tea")
    dialog.locator('[data-action="get-prompt"]').click()
    dialog.locator(".extras-msg pre:has-text('Tell me about tea (prompt_1)')").wait_for(timeout=10000)
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "prompt-dialog.png"))
    page.keyboard.press("Escape")

    resources = card.locator('.server-extra[data-extra="resources"]')
    resources.locator("summary").click()
    resources.locator('[data-uri="raw://item/1"] [data-action="read-resource"]').click()
    page.locator("#resource-dialog pre:has-text('the text of raw://item/1')").wait_for(timeout=10000)
    page.keyboard.press("Escape")
    resources.locator('[data-template="raw://item/{id}"] [data-action="fill-template"]').click()
    page.locator('#template-dialog input[name="id"]').fill("5")
    page.locator('#template-dialog [data-action="read-template"]').click()
    page.locator("#resource-dialog pre:has-text('the text of raw://item/5')").wait_for(timeout=10000)
    page.keyboard.press("Escape")

    log = card.locator('.server-extra[data-extra="log"]')
    log.locator("summary").click()
    log.locator('[data-action="log-level"]').select_option("debug")
    # The card is rebuilt on servers.changed; the Log and Resources folds stay open with their lines.
    page.locator('.server-card[data-server="raw"] .server-log[open] .log-line[data-level="notice"]'
                 ':has-text("level is now debug")').wait_for(timeout=15000)
    assert page.locator('.server-card[data-server="raw"] .server-extra[data-extra="resources"][open]').count() == 1
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["mcpServers"]["raw"]["logLevel"] == "debug"
    folder = tmp_path / "project"
    folder.mkdir()
    roots = card.locator('.server-extra[data-extra="roots"]')
    roots.locator("summary").click()
    roots.locator("input").fill(str(folder))
    roots.locator('[data-action="add-root"]').click()
    page.locator(f'.server-card[data-server="raw"] .server-extra[data-extra="roots"][open] [data-root="{folder}"]').wait_for(timeout=20000)
    assert json.loads((tmp_path / "config.json").read_text())["mcpServers"]["raw"]["roots"] == [str(folder)]
    conn = moka.app.servers.get("raw")
    deadline = time.monotonic() + 30
    while not (conn.generation >= 2 and conn.status == "ready") and time.monotonic() < deadline:
        time.sleep(0.05)  # turning roots on reconnects (the capability is declared when connecting)
    assert conn.generation >= 2 and conn.status == "ready", conn.error
    page.locator('.server-card[data-server="raw"][data-status="ready"] .server-extra[data-extra="roots"][open]').wait_for(timeout=20000)
    picture(page.locator('.server-card[data-server="raw"] .server-extra[data-extra="roots"]'), SHOTS / "folders.png")
    page.screenshot(path=str(SHOTS / "card-light.png"))
    page.goto(moka.url + "#runner?server=raw&tool=echo")
    page.locator("#runner-info .tool-own-icon").wait_for(timeout=10000)
    page.goto(moka.url + "#runner?server=raw&tool=huge")
    page.locator('#runner-info .badge:has-text("Needs tasks")').wait_for(timeout=10000)
    page.goto(moka.url + "#runner?server=raw&tool=alpha")
    page.locator('#runner-info:has-text("Alpha, by its annotations")').wait_for(timeout=10000)
    page.screenshot(path=str(SHOTS / "runner-info.png"))
    page.goto(moka.url + "#servers")
    moka.call("theme.set", {"mode": "dark"})
    page.wait_for_timeout(300)
    page.screenshot(path=str(SHOTS / "card-dark.png"))
    assert not [line for line in moka.console if "pageerror" in line], moka.console
