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


def test_tool_descriptions_render_their_inline_markdown(moka_factory: Any, monkeypatch: Any) -> None:
    """roll_dice's "Roll `count` dice …" shows `count` as code, no backticks, on the welcome and in the Runner."""
    from pathlib import Path

    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    moka = moka_factory({"moka-demo": DEMO})
    page = moka.open("chat")
    welcome = page.locator('.welcome-tool[data-tool="roll_dice"] p')
    welcome.wait_for(timeout=15000)
    assert "`" not in welcome.inner_text() and welcome.locator("code").all_inner_texts() == ["count", "sides"]
    page.goto(moka.url + "#runner?server=moka-demo&tool=roll_dice")
    desc = page.locator("#runner-info .runner-desc")
    desc.wait_for(timeout=15000)
    assert desc.inner_text().startswith("Roll count dice with sides faces")
    assert desc.locator("code.md-inline").all_inner_texts() == ["count", "sides"]
    shots = Path("/tmp/moka-first-run")
    shots.mkdir(exist_ok=True)
    for mode in ("light", "dark"):
        moka.call("settings.set", {"key": "theme.mode", "value": mode})
        page.wait_for_function(f"() => document.documentElement.dataset.theme === '{mode}'", timeout=5000)
        page.wait_for_timeout(300)  # the theme's transition, before the picture (not an assertion)
        page.screenshot(path=str(shots / f"runner-desc-{mode}.png"))
