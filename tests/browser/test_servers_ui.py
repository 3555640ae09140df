"""The Servers screen keeps its promises: a taken name asks first, Edit works, other writers' changes stay."""

from __future__ import annotations

import json
from typing import Any

import pytest

from browser_support import DEMO, Moka


def config_on_disk(moka: Moka) -> dict[str, Any]:
    return json.loads(moka.app.paths.config_file.read_text())


def fill_add_dialog(page: Any, name: str, command: str) -> None:
    page.click("#servers-add")
    page.fill("#server-name", name)
    page.fill("#server-command", command)
    page.click("#server-add-save")


def test_adding_a_taken_name_asks_before_replacing(moka_factory: Any) -> None:
    """Cancel keeps the working server; Replace replaces it; the bridge alone refuses without replace."""
    moka: Moka = moka_factory({"moka-demo": DEMO})
    page = moka.open("servers")
    fill_add_dialog(page, "moka-demo", "node x.js")
    confirm = page.locator("dialog[open]", has_text="Replace moka-demo?")
    confirm.wait_for(timeout=5000)
    confirm.get_by_role("button", name="Cancel").click()
    assert config_on_disk(moka)["mcpServers"]["moka-demo"] == DEMO
    assert moka.app.servers.get("moka-demo").status == "ready"
    with pytest.raises(AssertionError, match="a server named 'moka-demo' already exists"):
        moka.call("servers.add", {"name": "moka-demo", "config": {"command": "node", "args": ["x.js"]}})
    page.click("#server-add-save")  # the Add dialog is still open with what was typed
    page.locator("dialog[open]", has_text="Replace moka-demo?").get_by_role("button", name="Replace").click()
    page.locator("#server-add-dialog").wait_for(state="detached", timeout=5000)
    moka.wait(lambda: config_on_disk(moka)["mcpServers"]["moka-demo"] == {"command": "node", "args": ["x.js"]},
              what="the replacement in the file")


def test_edit_dialog_changes_a_server_and_the_card_shows_its_command(moka_factory: Any) -> None:
    """The card shows what it runs; Edit opens with the current settings and saves env and cwd."""
    moka: Moka = moka_factory({"moka-demo": DEMO})
    page = moka.open("servers")
    card = page.locator('.server-card[data-server="moka-demo"]')
    assert card.locator(".server-target").inner_text() == "moka demo-server"
    card.locator('[data-action="edit"]').click()
    assert page.input_value("#server-command") == "moka demo-server"
    assert page.locator("#server-name").get_attribute("readonly") is not None
    page.fill("#server-env", "DICE_SEED=7")
    page.fill("#server-cwd", str(moka.app.paths.config_file.parent))
    page.click("#server-add-save")
    page.locator("#server-add-dialog").wait_for(state="detached", timeout=5000)
    entry = config_on_disk(moka)["mcpServers"]["moka-demo"]
    assert entry == {**DEMO, "env": {"DICE_SEED": "7"}, "cwd": str(moka.app.paths.config_file.parent)}
    moka.wait(lambda: moka.app.servers.get("moka-demo").status == "ready", 30, "the edited server ready")


def test_an_external_config_edit_survives_a_ui_settings_change(moka_factory: Any) -> None:
    """A server added by hand while Moka runs shows up on the Servers screen and stays in the file."""
    moka: Moka = moka_factory({"moka-demo": DEMO})
    page = moka.open("servers")
    edited = config_on_disk(moka)
    edited["mcpServers"]["hand-added"] = DEMO
    moka.app.paths.config_file.write_text(json.dumps(edited))
    page.locator('.server-card[data-server="hand-added"][data-status="ready"]').wait_for(timeout=30000)
    moka.call("settings.set", {"key": "theme.mode", "value": "dark"})  # the bridge call Settings makes
    on_disk = config_on_disk(moka)
    assert on_disk["mcpServers"]["hand-added"] == DEMO and on_disk["theme"]["mode"] == "dark"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_servers_screen_screenshots(moka_factory: Any, scheme: str) -> None:
    """Pictures of the cards and the Edit dialog, light and dark, for a person to look at."""
    moka: Moka = moka_factory({"moka-demo": DEMO})
    moka.call("servers.add", {"name": "remote", "config": {"url": "http://127.0.0.1:9/mcp"}})  # never answers
    moka.page.emulate_media(color_scheme=scheme)
    page = moka.open("servers")
    page.locator('.server-card[data-server="remote"]').wait_for()
    page.screenshot(path=f"/tmp/shots/servers-{scheme}.png")
    page.locator('.server-card[data-server="moka-demo"] [data-action="edit"]').click()
    page.locator("#server-add-dialog").wait_for()
    page.wait_for_timeout(400)  # let the dialog's fade-in finish, for the picture only
    page.screenshot(path=f"/tmp/shots/server-edit-{scheme}.png")
