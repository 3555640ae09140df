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
    page.select_option("#settings-backend", "openrouter")
    page.wait_for_function("() => document.querySelector('#settings-key-source')?.dataset.source === 'none'")
    page.fill("#settings-key", "sk-or")
    page.click("#settings-key-save")
    page.locator("#settings-key-error:not([hidden])").wait_for(timeout=10000)
    assert page.locator("#settings-key-source").get_attribute("data-source") == "none"


PASTE_PNG = """(b64) => {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const dt = new DataTransfer();
  dt.items.add(new File([bytes], "", { type: "image/png" }));
  const box = document.querySelector('#composer');
  box.focus();
  box.dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
}"""


def chat_requests(srv: FakeOpenAIServer) -> list[dict[str, Any]]:
    return [r for r in srv.requests if "messages" in r]


def test_pasted_image_reaches_the_model_then_edit_regenerate_and_copy(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """Paste an image: a chip; Send: the fake gets an image_url part; Edit and resend replaces the answer;
    Regenerate asks again; Copy puts the text on the clipboard."""
    with FakeOpenAIServer() as srv:
        srv.enqueue([Text("A red square.")], [Text("Edited answer.")], [Text("Regenerated answer.")])
        moka: Moka = moka_factory({}, agent={"backend": "ollama", "model": "fake-model", "baseUrls": {"ollama": srv.base_url}})
        moka.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=moka.url)
        page = moka.open("chat")
        page.evaluate(PASTE_PNG, base64.b64encode(PNG).decode())
        chip = page.locator("#composer-chips .attach-chip")
        chip.wait_for(timeout=10000)
        assert chip.locator(".attach-thumb").count() == 1
        page.fill("#composer", "what is this?")
        shot(page, "composer-attachment")
        page.keyboard.press("Enter")
        page.wait_for_selector('.msg[data-role="assistant"]:has-text("A red square.")', timeout=20000)
        user = page.locator('.msg[data-role="user"]').first
        user.locator(".msg-files .attach-chip").wait_for(timeout=5000)
        first = chat_requests(srv)[0]["messages"][-1]
        parts = first["content"]
        assert parts[0]["type"] == "text" and "what is this?" in parts[0]["text"]
        assert parts[1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()}}

        # Edit and resend: the later answer is replaced, the attachment stays with the message.
        user.hover()
        user.locator('[data-action="edit"]').click()
        user.locator(".msg-edit-input").fill("what colour is this?")
        user.locator('[data-action="save-edit"]').click()
        page.locator("dialog[open] .btn-primary").click()  # "1 later message will be replaced"
        page.wait_for_selector('.msg[data-role="assistant"]:has-text("Edited answer.")', timeout=20000)
        assert page.locator('.msg[data-role="assistant"]:has-text("A red square.")').count() == 0
        edited = chat_requests(srv)[1]["messages"]
        assert [m["role"] for m in edited] == ["user"] and "what colour is this?" in edited[0]["content"][0]["text"]
        assert edited[0]["content"][1]["type"] == "image_url"

        # Regenerate the last answer.
        answer = page.locator('.msg[data-role="assistant"]').last
        answer.hover()
        answer.locator('[data-action="regenerate"]').click()
        page.wait_for_selector('.msg[data-role="assistant"]:has-text("Regenerated answer.")', timeout=20000)
        assert page.locator('.msg[data-role="assistant"]:has-text("Edited answer.")').count() == 0
        assert len(chat_requests(srv)) == 3 and [m["role"] for m in chat_requests(srv)[2]["messages"]] == ["user"]
        page.wait_for_function("() => !document.querySelector('#stop') || document.querySelector('#stop').hidden")

        # Copy.
        answer = page.locator('.msg[data-role="assistant"]').last
        answer.hover()
        answer.locator('[data-action="copy"]').click()
        assert page.evaluate("() => navigator.clipboard.readText()") == "Regenerated answer."
        cid = moka.call("conversations.list")[0]["id"]
        stored = moka.call("conversations.get", {"id": cid})["messages"]
        assert [m["role"] for m in stored] == ["user", "assistant"] and stored[0]["content"] == "what colour is this?"


def test_interrupted_reply_shows_a_marker_and_continue(moka_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A reply cut off by kill -9: reopened, it says Interrupted with Continue; Continue answers after it."""
    import json as _json
    import signal
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    with FakeOpenAIServer() as srv:
        srv.enqueue([Text(f"word{i} ", delay=0.02) for i in range(400)], [Text("Picking up where I stopped.")])
        child = subprocess.Popen([sys.executable, str(root / "tests" / "servers" / "chat_crash_child.py"),
                                  str(tmp_path / "data"), srv.base_url], stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout is not None
            seen = 0
            for line in child.stdout:
                seen += _json.loads(line)["event"] == "chat.delta"
                if seen > 15:
                    break
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(10)
        moka: Moka = moka_factory({}, agent={"backend": "ollama", "model": "fake-model", "baseUrls": {"ollama": srv.base_url}})
        page = moka.open("chat")
        page.locator(".conv-item .conv-open").first.click()
        note = page.locator(".interrupted-note")
        note.wait_for(timeout=15000)
        assert "Interrupted" in note.inner_text()
        shot(page, "interrupted")
        note.locator('[data-action="continue"]').click()
        page.wait_for_selector('.msg[data-role="assistant"]:has-text("Picking up where I stopped.")', timeout=20000)
        assert page.locator('.interrupted-note [data-action="continue"]').count() == 0


def test_the_sidebar_pages_past_500_conversations(moka_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """620 stored conversations: scrolling the list to its end loads page after page until all are shown."""
    from moka_shell.core.chat.store import Store
    from moka_shell.paths import Paths

    store = Store(Paths(tmp_path / "config.json", tmp_path / "data").database)
    store.db.execute("BEGIN")
    for i in range(620):
        cid = store.create_conversation(f"talk {i:03d}")
        store.db.execute("UPDATE conversations SET updated_at=? WHERE id=?", (1_700_000_000 + i, cid))
    store.db.execute("COMMIT")
    store.close()
    moka: Moka = moka_factory({})
    page = moka.open("chat")
    items = page.locator("#conv-list .conv-item")
    items.first.wait_for(timeout=10000)
    assert 100 <= items.count() < 620 and items.first.inner_text().startswith("talk 619")  # pages, not all at once
    def scrolled_to_all() -> bool:  # scroll as a person would, to the end each time
        page.locator("#conv-list").evaluate("(el) => { el.scrollTop = el.scrollHeight; }")
        page.wait_for_timeout(100)
        return items.count() >= 620
    moka.wait(scrolled_to_all, 60, "all 620 conversations listed")
    assert items.count() == 620
    assert items.last.inner_text().startswith("talk 000")
    page.fill("#conv-search", "talk 007")
    page.wait_for_function("() => document.querySelectorAll('#conv-list .conv-item').length === 1")


def test_model_picker_in_the_composer_is_remembered_per_conversation(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """Pick a backend, a listed model and a system prompt in the composer: the turn uses them; the
    conversation remembers them after a reload; a new chat starts from Settings again."""
    with FakeOpenAIServer(models=("picked-model", "other-model")) as srv, FakeOpenAIServer() as default:
        srv.enqueue([Text("from the picked model")])
        moka: Moka = moka_factory({}, agent={"backend": "ollama", "model": "fake-model",
                                             "baseUrls": {"ollama": default.base_url, "custom": srv.base_url}})
        page = moka.open("chat")
        picker = page.locator("#composer-model")
        picker.wait_for(timeout=10000)
        assert "fake-model" in picker.inner_text()
        picker.click()
        page.select_option("#composer-backend", "custom")
        page.click("#composer-list-models")
        page.locator("#composer-model-pick option[value='picked-model']").wait_for(state="attached", timeout=10000)
        page.select_option("#composer-model-pick", "picked-model")
        page.fill("#composer-system", "Answer like a pirate.")
        page.locator("#composer-system").dispatch_event("change")
        shot(page, "composer-model-picker-light")
        moka.call("settings.set", {"key": "theme.mode", "value": "dark"})
        page.wait_for_timeout(300)  # the theme's transition, before the picture (not an assertion)
        shot(page, "composer-model-picker-dark")
        moka.call("settings.set", {"key": "theme.mode", "value": "light"})
        page.fill("#composer", "ahoy?")  # clicking the composer closes the popover
        page.keyboard.press("Enter")
        page.wait_for_selector('.msg[data-role="assistant"]:has-text("from the picked model")', timeout=20000)
        assert "picked-model" in picker.inner_text()
        sent = [r for r in srv.requests if "messages" in r][-1]
        assert sent["model"] == "picked-model" and sent["messages"][0] == {"role": "system", "content": "Answer like a pirate."}
        assert not [r for r in default.requests if "messages" in r]
        cid = moka.call("conversations.list")[0]["id"]
        assert moka.call("conversations.get", {"id": cid})["settings"] == {
            "backend": "custom", "model": "picked-model", "systemPrompt": "Answer like a pirate."}
        page.click("#chat-new")
        page.wait_for_function("() => document.querySelector('#composer-model').innerText.includes('fake-model')")
        page.reload()
        page.wait_for_selector('#conn[data-status="online"]', timeout=20000)
        page.locator(".conv-item .conv-open").first.click()
        page.wait_for_function("() => document.querySelector('#composer-model').innerText.includes('picked-model')")


def completions(moka: Moka) -> tuple[int, int]:
    """How many completion requests went to the servers, and how many were answered."""
    events = [e for e in moka.app.inspector.query(limit=100000) if e["channel"] == "mcp.rpc"]
    asked = sum(1 for e in events if e.get("method") == "completion/complete" and e["direction"] == "out")
    return asked, sum(1 for e in events if e.get("request_method") == "completion/complete")


def test_slash_prompt_with_completion_and_an_at_resource_reach_the_model(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """"/" lists the server's prompts; its argument form completes from the server; the prompt's text
    goes into the composer; "@" attaches a resource; both reach the model with the message."""
    import sys

    servers = {"trips": {"command": sys.executable, "args": [str(Path(__file__).resolve().parents[1] / "servers" / "prompts_server.py")]}}
    with FakeOpenAIServer() as srv:
        srv.enqueue([Text("Day one: the Rijksmuseum.")])
        moka: Moka = moka_factory(servers, agent={"backend": "ollama", "model": "fake-model", "baseUrls": {"ollama": srv.base_url}})
        page = moka.open("chat")
        page.locator("#composer").wait_for(state="visible", timeout=20000)  # the app has started
        page.locator("#composer").type("/city")  # only in the description: still found
        page.locator('#slash-menu .slash-item[data-name="plan_trip"]').wait_for(timeout=15000)
        page.fill("#composer", "")
        page.locator("#composer").type("/pla")
        item = page.locator('#slash-menu .slash-item[data-name="plan_trip"]')
        item.wait_for(timeout=15000)
        assert "trips" in item.inner_text() and "Plan a trip" in item.inner_text()
        shot(page, "composer-slash-light")
        moka.call("settings.set", {"key": "theme.mode", "value": "dark"})
        page.wait_for_timeout(300)  # the theme's transition, before the picture (not an assertion)
        shot(page, "composer-slash-dark")
        moka.call("settings.set", {"key": "theme.mode", "value": "light"})
        page.keyboard.press("Enter")
        field = page.locator('#slash-form input[name="city"]')
        field.wait_for(timeout=5000)
        # The field asks for completions as it gets focus (value ""): a slow answer, still on its way
        # when "Am" is typed and answered. Only the answer to "Am" may be shown, whatever comes last.
        moka.wait(lambda: completions(moka)[0] >= 1, what="the first completion request")
        field.type("Am")
        moka.wait(lambda: completions(moka)[0] >= 2 and completions(moka)[0] == completions(moka)[1],
                  what="every completion answered")
        assert page.locator("#slash-arg-city option").count() == 1  # "Am" → Amsterdam only
        field.fill("Amsterdam")
        page.click("#slash-submit")
        page.wait_for_function("() => document.querySelector('#composer').value.includes('trip to Amsterdam')")
        page.locator("#composer").press("End")
        page.locator("#composer").type(" @tod")
        page.locator('#slash-menu .slash-item[data-name="today"]').wait_for(timeout=15000)
        page.keyboard.press("Enter")
        page.locator('#composer-chips .attach-chip[data-name="today"]').wait_for(timeout=10000)
        shot(page, "composer-prompt-and-resource")
        page.locator("#composer").press("Enter")
        page.wait_for_selector('.msg[data-role="assistant"]:has-text("Day one")', timeout=20000)
    sent = [r for r in srv.requests if "messages" in r][-1]["messages"][-1]["content"]
    text = sent if isinstance(sent, str) else sent[0]["text"]
    assert "Plan a three-day trip to Amsterdam, with one museum a day." in text
    assert "Buy oat milk. Call Ana at 5." in text and "[file today (text/plain)]" in text
    assert "@tod" not in text


def test_at_does_not_offer_an_apps_view_as_context(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """With moka-demo beside a notes server, "@" lists the notes and the demo's readme, not the demo's
    ui:// views (picking "dice" attached 34.7 KB of the view's HTML as context, before)."""
    import sys

    from browser_support import DEMO

    servers = {"trips": {"command": sys.executable, "args": [str(Path(__file__).resolve().parents[1] / "servers" / "prompts_server.py")]},
               "moka-demo": DEMO}
    moka: Moka = moka_factory(servers)
    page = moka.open("chat")
    page.locator("#composer").wait_for(state="visible", timeout=20000)
    page.locator("#composer").type("@")
    page.locator('#slash-menu .slash-item[data-name="today"]').wait_for(timeout=15000)
    names = page.locator("#slash-menu .slash-item").evaluate_all("(els) => els.map((e) => e.dataset.name)")
    listed = moka.call("servers.resources", {"server": "moka-demo"})
    assert any(r["uri"].startswith("ui://") for r in listed["resources"]), listed  # the demo does list them
    assert "today" in names and "readme" in names, names  # the demo's own text resource stays
    assert not {"dice", "playground"} & set(names), names


def test_one_listed_model_is_the_model_in_use_and_said_so(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """An endpoint with one model and none chosen: Test connection says "1 model" (never "1 models"), the
    picker shows that model, and the composer's model list names it as the Settings default. Before, both
    pickers read "Choose a model…" and the help "1 models at this endpoint"."""
    with FakeOpenAIServer(models=("fake-model",)) as srv:
        srv.enqueue([Text("one model answered")])
        moka: Moka = moka_factory({}, agent={"backend": "custom"})
        page = moka.open("settings")
        page.fill("#settings-base-url", srv.base_url)
        page.click("#settings-test")
        ok = page.locator("#settings-test-ok")
        ok.wait_for(timeout=15000)
        assert ok.inner_text().strip() == "Connected · 1 model · using fake-model"
        moka.wait(lambda: moka.app.config.agent.model == "fake-model", what="the only model chosen")
        pick = page.locator("#settings-model-pick")
        moka.wait(lambda: pick.count() and pick.input_value() == "fake-model", what="the picker showing it")
        assert "1 model at this endpoint." in page.inner_text("#screen-settings")
        shot(page, "settings-one-model")
        page = moka.open("chat")
        page.click("#composer-model")
        first = page.locator("#composer-model-pick option").first
        first.wait_for(state="attached", timeout=10000)
        assert first.inner_text() == "Settings default (fake-model)"
        assert page.inner_text("#composer-model").strip().endswith("fake-model")
        moka.call("settings.set", {"key": "theme.mode", "value": "dark"})
        page.wait_for_timeout(300)  # the theme's transition, before the picture (not an assertion)
        shot(page, "composer-model-settings-default-dark")
        page.locator("#composer-model-pick").focus()
        page.keyboard.press("Escape")
        page.fill("#composer", "hello")
        page.keyboard.press("Enter")
        page.wait_for_selector('.msg[data-role="assistant"]:has-text("one model answered")', timeout=20000)
    assert [r for r in srv.requests if "messages" in r][-1]["model"] == "fake-model"
