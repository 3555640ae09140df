"""First run without a model: three steps with buttons, no raw help text; each button does its step."""

from __future__ import annotations

from typing import Any

DEMO = {"command": "moka", "args": ["demo-server"]}


def test_first_run_steps_and_their_buttons(moka_factory: Any, monkeypatch: Any) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    moka = moka_factory({"moka-demo": DEMO})
    page = moka.open("chat")
    help_card = page.locator("#no-backend-help")
    help_card.wait_for(timeout=15000)
    text = help_card.inner_text()
    assert "`" not in text and "Choose a model" in text and "Try an app" in text and "Add your own servers" in text
    assert help_card.locator("li").count() == 3

    page.click("#first-try-demo")
    moka.wait(lambda: not page.locator("#screen-runner").is_hidden(), what="the Tool runner")
    moka.wait(lambda: "roll_dice" in page.url, what="the demo tool picked")

    page.goto(moka.url + "#chat")
    page.click("#first-add-openai")
    moka.wait(lambda: not page.locator("#screen-settings").is_hidden(), what="Settings")
    moka.wait(lambda: moka.app.config.agent.backend == "openai", what="the OpenAI backend chosen")
    page.locator("#settings-key").wait_for(timeout=10000)


def test_settings_without_a_backend_says_what_to_do_here(moka_factory: Any) -> None:
    moka = moka_factory({})
    page = moka.open("settings")
    note = page.locator("#settings-no-backend")
    note.wait_for(timeout=15000)
    text = note.inner_text()
    assert "Pick a backend above" in text and "`" not in text and "open Settings" not in text
