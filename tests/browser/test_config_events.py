"""The UI follows the config file: a setting edited by hand shows on the Settings screen; a broken file is said."""

from __future__ import annotations

import json
from typing import Any


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
