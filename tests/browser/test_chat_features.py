"""The chat people expect, in Chromium against the fake providers: any endpoint from Settings, key
sources told truthfully, pasted image attachments, edit and resend, regenerate, copy, paging."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from browser_support import Moka
from moka_shell.testing.fake_openai import FakeOpenAIServer, Text

SHOTS = Path(os.environ.get("MOKA_SHOTS", "/tmp/moka-chat-features"))
# A 2×2 PNG, red: small enough to read in a request body, real enough for any decoder.
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEUlEQVR4nGP8z8DAwMDAxAAAHwQCAB7dVEMAAAAASUVORK5CYII=")


@pytest.fixture(autouse=True)
def no_keyring(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def test_base_url_in_settings_is_used_and_test_connection_lists_models(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """Custom backend: type the fake's URL, Test connection, pick a listed model, chat: the fake gets it."""
    with FakeOpenAIServer(models=("fake-small", "fake-large")) as srv:
        srv.enqueue([Text("answered by the custom endpoint")])
        moka: Moka = moka_factory({}, agent={"backend": "custom"})
        page = moka.open("settings")
        source = page.locator("#settings-base-url-source")
        source.wait_for(timeout=10000)
        assert source.get_attribute("data-source") == "none"
        page.fill("#settings-base-url", srv.base_url)
        page.click("#settings-test")
        page.locator("#settings-test-ok").wait_for(timeout=15000)
        assert "2 models" in page.inner_text("#settings-test-ok")
        pick = page.locator("#settings-model-pick")
        pick.wait_for(timeout=10000)
        options = pick.locator("option").all_inner_texts()
        assert "fake-small" in options and "fake-large" in options
        page.wait_for_function("() => document.querySelector('#settings-base-url-source').dataset.source === 'config'")
        pick.select_option("fake-large")
        moka.wait(lambda: moka.app.config.agent.model == "fake-large", what="model saved")
        assert moka.app.config.agent.base_urls == {"custom": srv.base_url}
        shot(page, "settings-model")
        page = moka.open("chat")
        page.fill("#composer", "hello custom")
        page.keyboard.press("Enter")
        page.wait_for_selector('.msg[data-role="assistant"]:has-text("answered by the custom endpoint")', timeout=20000)
    chat = [r for r in srv.requests if "messages" in r]
    assert chat[-1]["model"] == "fake-large"


def test_environment_key_is_shown_as_such_and_a_failed_save_never_says_stored(moka_factory, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """OPENAI_API_KEY set: "From OPENAI_API_KEY", no Remove; saving into a missing keyring shows the reason."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    moka: Moka = moka_factory({}, agent={"backend": "openai"})
    page = moka.open("settings")
    badge = page.locator("#settings-key-source")
    badge.wait_for(timeout=10000)
    assert badge.inner_text() == "From OPENAI_API_KEY" and badge.get_attribute("data-source") == "env"
    assert page.locator("#settings-key-delete").count() == 0
    assert page.locator("#settings-base-url").input_value() == "https://api.openai.com/v1"  # the preset's default
    page.fill("#settings-key", "sk-typed")
    page.click("#settings-key-save")
    error = page.locator("#settings-key-error:not([hidden])")
    error.wait_for(timeout=10000)
    assert "keyring" in error.inner_text()
    assert page.locator("#settings-key").input_value() == ""
    assert "Stored in" not in page.inner_text("#settings-key-status")
    # And for a backend with no key anywhere, the badge says so.
    moka.call("settings.set", {"key": "agent.backend", "value": "openrouter"})
    page.wait_for_function("() => document.querySelector('#settings-key-source')?.dataset.source === 'none'")
    page.fill("#settings-key", "sk-or")
    page.click("#settings-key-save")
    page.locator("#settings-key-error:not([hidden])").wait_for(timeout=10000)
    assert page.locator("#settings-key-source").get_attribute("data-source") == "none"
