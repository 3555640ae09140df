"""A server's questions in Chromium: the form in the chat's tool card and in the Tool runner's entry,
Decline and Cancel, and URL mode opening the page only after the person says so."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from browser_support import Moka
from moka_shell.testing.fake_openai import FakeOpenAIServer
from support import SERVERS

SHOTS = Path("/tmp/moka-elicitation")
PAGE = "https://example.com/connect?account=42"


def elicit_server(tmp_path: Path, *flags: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVERS / "elicit_server.py"), str(tmp_path / "server.log"), *flags]}


def shoot(moka: Moka, page: Any, name: str) -> None:
    """A picture in light and in dark (looked at by the person who changes the UI)."""
    SHOTS.mkdir(exist_ok=True)
    for mode in ("light", "dark"):
        moka.call("settings.set", {"key": "theme.mode", "value": mode})
        page.wait_for_function(f"() => document.documentElement.dataset.theme === '{mode}'", timeout=5000)
        page.wait_for_timeout(300)  # let the theme transition finish before the picture (not an assertion)
        page.screenshot(path=str(SHOTS / f"{name}-{mode}.png"))


def run_in_runner(page: Any, tool: str) -> Any:
    page.select_option("#runner-server", "e")
    page.select_option("#runner-tool", tool)
    page.click("#runner-run")
    return page.locator(f'.runner-result[data-tool="{tool}"]').first


def test_form_in_the_chat_card(moka_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The model's call asks; the form is in its card; what the person types is what the server gets."""
    with FakeOpenAIServer() as srv:
        srv.tool_then_reply("ask_person", {}, "Nice to meet you.")
        moka: Moka = moka_factory({"e": elicit_server(tmp_path)}, approval={"mode": "all"},
                                  agent={"backend": "ollama", "model": "fake-model", "baseUrls": {"ollama": srv.base_url}})
        page = moka.open("chat")
        page.set_viewport_size({"width": 1100, "height": 820})
        page.fill("#composer", "greet me")
        page.keyboard.press("Enter")
        card = page.locator(".tool-card.is-asking")
        form = card.locator(".elicit[data-mode=form]")
        form.wait_for(timeout=20000)
        text = form.inner_text()
        assert "e asks you" in text and "Who are you? The greeting needs your name and age." in text
        assert "Never enter passwords" in text
        form.get_by_label("Name").fill("Ada")
        form.locator('[data-action="accept"]').click()  # age is missing: nothing is sent
        form.locator(".elicit-problem:not([hidden])").wait_for(timeout=5000)
        assert moka.app.elicitations.pending()
        form.get_by_label("Age").fill("36")
        form.get_by_label("Color").select_option("blue")
        shoot(moka, page, "chat-form")
        form.locator('[data-action="accept"]').click()
        page.locator('.tool-card[data-status="done"]').wait_for(timeout=20000)
        page.wait_for_selector('.msg[data-role="assistant"]:has-text("Nice to meet you.")', timeout=15000)
        assert page.locator(".elicit").count() == 0 and page.locator(".is-asking").count() == 0
    tool_msg = [m for m in srv.requests[1]["messages"] if m["role"] == "tool"][0]
    assert "accepted: name=Ada age=36 color=blue subscribe=False" in str(tool_msg["content"])


def test_form_in_the_runner_declined_then_cancelled_then_sent(moka_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The runner's run shows the question in its entry; each answer reaches the server (legacy era here)."""
    moka: Moka = moka_factory({"e": elicit_server(tmp_path, "--legacy")})
    assert moka.app.servers.get("e").protocol_version == "2025-11-25"
    page = moka.open("runner")
    for action, expected in (("decline", "declined"), ("cancel", "cancelled"), ("accept", "accepted: name=Grace")):
        before = page.locator(".runner-result").count()
        page.select_option("#runner-server", "e")
        page.select_option("#runner-tool", "ask_person")
        page.click("#runner-run")
        page.wait_for_function(f"() => document.querySelectorAll('.runner-result').length > {before}", timeout=10000)
        entry = page.locator(".runner-result").first
        elicit = entry.locator(".elicit")
        elicit.wait_for(timeout=20000)
        assert entry.get_attribute("class") and "is-asking" in (entry.get_attribute("class") or "")
        if action == "accept":
            elicit.get_by_label("Name").fill("Grace")
            elicit.get_by_label("Age").fill("85")
            elicit.get_by_label("Subscribe").check()
        elicit.locator(f'[data-action="{action}"]').click()
        entry.locator(".tool-text").wait_for(timeout=20000)
        assert expected in entry.locator(".tool-text").first.inner_text()
        assert entry.locator(".elicit").count() == 0
    assert "subscribe=True" in page.locator(".runner-result").first.locator(".tool-text").first.inner_text()


def test_url_mode_opens_the_page_only_after_consent(moka_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The card shows the server's message, the host and the address; Decline opens nothing, Open opens it."""
    moka: Moka = moka_factory({"e": elicit_server(tmp_path)})
    page = moka.open("runner")
    page.set_viewport_size({"width": 1100, "height": 760})
    opened: list[str] = []
    moka.context.on("page", lambda p: opened.append(p.url))
    # No network here: the page the server names is answered locally, so the popup's address is real.
    moka.context.route("https://example.com/**", lambda route: route.fulfill(body="connected", content_type="text/plain"))
    entry = run_in_runner(page, "connect_account")
    card = entry.locator(".elicit[data-mode=url]")
    card.wait_for(timeout=20000)
    text = card.inner_text()
    assert "e wants to send you to a web page" in text and "Sign in at example.com to connect your account." in text
    assert "Opens example.com in your browser" in text and PAGE in text
    shoot(moka, page, "runner-url")
    card.locator('[data-action="decline"]').click()
    entry.locator(".tool-text").wait_for(timeout=20000)
    assert entry.locator(".tool-text").first.inner_text() == "url decline"
    page.wait_for_timeout(300)  # a popup would have opened by now (not a timing assertion: none may open at all)
    assert opened == []
    before = page.locator(".runner-result").count()
    run_in_runner(page, "connect_account")
    page.wait_for_function(f"() => document.querySelectorAll('.runner-result').length > {before}", timeout=10000)
    entry = page.locator(".runner-result").first
    with moka.context.expect_page(timeout=15000) as popup:
        entry.locator('.elicit [data-action="accept"]').click()
    popup.value.wait_for_load_state()
    assert popup.value.url == PAGE
    entry.locator(".tool-text").wait_for(timeout=20000)
    assert entry.locator(".tool-text").first.inner_text() == "url accept"
    events = [e for e in moka.app.inspector.query(limit=100000) if e.get("method") == "view/open-link"]
    assert [e["message"]["url"] for e in events] == [PAGE]


def test_titled_single_and_multiple_selects_are_a_select_and_checkboxes(moka_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """oneOf/anyOf of titled consts (and legacy enumNames) show their titles as a select and checkboxes, never
    JSON to type; what the server gets is the consts chosen. Before, both were raw JSON textareas."""
    moka: Moka = moka_factory({"e": elicit_server(tmp_path)})
    page = moka.open("runner")
    page.set_viewport_size({"width": 1100, "height": 900})
    entry = run_in_runner(page, "pick_things")
    form = entry.locator(".elicit[data-mode=form]")
    form.wait_for(timeout=20000)
    assert form.locator("textarea").count() == 0, "a choice was offered as JSON to type"
    hero = form.locator('[data-field="hero"] select')
    assert hero.locator("option").all_inner_texts() == ["Superman", "Green Lantern", "Wonder Woman"]
    assert hero.locator("option:checked").inner_text() == "Superman"  # the default
    pet = form.locator('[data-field="pet"] select')
    assert pet.locator("option").all_inner_texts() == ["— not set —", "Cats", "Dogs", "Birds"]
    fish = form.locator('fieldset:has-text("Titled Multiple Select Enum")')
    assert [t.strip() for t in fish.locator(".check-row").all_inner_texts()] == ["Tuna", "Salmon", "Trout"]
    assert form.get_by_label("Tuna").is_checked()  # the default
    hero.select_option(label="Wonder Woman")
    form.get_by_label("Trout").check()
    pet.select_option(label="Birds")
    shoot(moka, page, "runner-choices")
    form.locator('[data-action="accept"]').click()
    entry.locator(".tool-text").wait_for(timeout=20000)
    assert entry.locator(".tool-text").first.inner_text() == (
        'picked: {"fish": ["fish-1", "fish-3"], "hero": "hero-3", "pet": "pet-3"}')
