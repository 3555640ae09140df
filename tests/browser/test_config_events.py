"""The UI follows the config file: a setting edited by hand shows on the Settings screen; a broken file is said."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

SHOTS = Path(os.environ.get("MOKA_SHOTS", "/tmp/moka-config-events"))


def test_a_hand_edit_shows_and_a_broken_file_is_reported(moka_factory: Any) -> None:
    moka = moka_factory({})
    page = moka.open("settings")
    mode = page.locator("#theme-mode")
    mode.wait_for(timeout=15000)
    assert mode.input_value() != "dark"
    path = moka.app.paths.config_file
    data = json.loads(path.read_text())
    data.setdefault("theme", {})["mode"] = "dark"
    path.write_text(json.dumps(data))
    moka.wait(lambda: mode.input_value() == "dark", what="the Settings screen showing the hand edit")
    moka.wait(lambda: page.locator("html").get_attribute("data-theme") == "dark", what="the page in dark")

    path.write_text('{"theme": {"mode": ')  # an editor half-way through a save
    toast = page.locator(".toast", has_text="Moka keeps the settings it had")
    toast.wait_for(timeout=15000)
    assert str(path.name) in toast.inner_text() or "config" in toast.inner_text().lower()
    assert mode.input_value() == "dark"


def test_a_ui_change_while_the_file_is_broken_is_said_kept_and_saved(moka_factory: Any) -> None:
    """Finding N7: a UI save that met a broken file was refused with the change lost and nothing said."""
    moka = moka_factory({})
    moka.app.config_watch.interval = 0.2  # the 1 s default only makes the test slow
    page = moka.open("settings")
    mode = page.locator("#theme-mode")
    mode.wait_for(timeout=15000)
    path = moka.app.paths.config_file
    path.write_text('{"theme": {"mode": ')  # left so by an editor
    page.locator(".toast", has_text="Moka keeps the settings it had").wait_for(timeout=15000)
    mode.select_option("dark")
    page.locator(".toast", has_text="your change is in use, and Moka saves it").wait_for(timeout=15000)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "config-unsaved-toast.png"))
    moka.wait(lambda: page.locator("html").get_attribute("data-theme") == "dark", what="the change in use")
    path.write_text(json.dumps({"mcpServers": {}, "agent": {"systemPrompt": "by hand"}}))  # repaired
    page.locator(".toast", has_text="saved in the config file").wait_for(timeout=15000)
    page.screenshot(path=str(SHOTS / "config-saved-toast.png"))
    assert page.locator(".toast", has_text="your change is in use").count() == 0  # the problem is over: so its toast
    on_disk = json.loads(path.read_text())
    assert on_disk["theme"]["mode"] == "dark" and on_disk["agent"]["systemPrompt"] == "by hand"
