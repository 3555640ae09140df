"""A 10,000-message conversation in the Chat screen (issue 27, item 4): it opens on its newest
messages with only a window of it in the page, the first and the last are reachable by scrolling,
the message being read stays put while pages come and go, and a turn started from far up answers at
the end. Before, the page rendered all 10,000 at once and was busy for hours (2,000 took 132 s)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from browser_support import Moka
from moka_shell.core.chat.store import Store
from moka_shell.paths import Paths
from moka_shell.testing.fake_openai import FakeOpenAIServer, Text

COUNT = 10_000
MAX_SHOWN = 300  # js/chat/history-window.js
PINS = 20  # slack for messages kept hidden for a live view (none here)


@pytest.fixture(autouse=True)
def no_keyring(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")


def fill(tmp_path: Path) -> str:
    """One conversation of COUNT messages, "message <i>:" each, every 20th reply with a finished call."""
    store = Store(Paths(tmp_path / "config.json", tmp_path / "data").database)
    cid = store.create_conversation("a very long talk")
    store.db.execute("BEGIN")
    for i in range(COUNT):
        msg = store.add_message(cid, "user" if i % 2 == 0 else "assistant", f"message {i}: *some* words")
        if i % 20 == 1:
            store.add_call(cid, msg["id"], {"id": f"call{i}", "server": "moka-demo", "tool": "roll_dice",
                                            "modelName": "roll_dice", "arguments": {"sides": 6}, "status": "done"})
    store.db.execute("COMMIT")
    store.close()
    return cid


def in_dom(page: Any) -> int:
    return int(page.evaluate("document.querySelectorAll('.thread:not([hidden]) article.msg').length"))


def texts(page: Any) -> list[str]:
    return page.evaluate("[...document.querySelectorAll('.thread:not([hidden]) article.msg:not(.out-of-window)')]"
                         ".map((m) => m.querySelector('.msg-body').textContent.split(':')[0])")


def visible(page: Any, text: str) -> bool:
    """Is the message beginning with ``text`` on screen inside the thread's scroller?"""
    return bool(page.evaluate("""(t) => {
      const s = document.getElementById("chat-scroll").getBoundingClientRect();
      return [...document.querySelectorAll(".thread:not([hidden]) article.msg")].some((m) => {
        const r = m.getBoundingClientRect();
        return m.textContent.includes(t) && r.bottom > s.top && r.top < s.bottom;
      });
    }""", text))


def scroll_until(moka: Moka, to: str, text: str, budget: float) -> None:
    """Scroll to the top (or bottom) again and again, as a person holding Home (End), until ``text`` shows."""
    js = "el.scrollTop = 0" if to == "top" else "el.scrollTop = el.scrollHeight"
    def there() -> bool:
        moka.page.locator("#chat-scroll").evaluate(f"(el) => {{ {js}; }}")
        moka.page.wait_for_timeout(60)
        assert in_dom(moka.page) <= MAX_SHOWN + PINS, "the thread holds more than its window"
        return visible(moka.page, text)
    moka.wait(there, budget, f"{text!r} scrolled to")


def test_a_10000_message_conversation_opens_and_both_ends_are_reachable(moka_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Opens at its newest message holding a window; scrolled to the top shows message 0, then back to 9999."""
    cid = fill(tmp_path)
    moka: Moka = moka_factory({})
    page = moka.open("chat")
    page.locator(f'.conv-item[data-conv-id="{cid}"] .conv-open').click()
    moka.wait(lambda: visible(page, f"message {COUNT - 1}:"), 30, "the newest message on screen")
    assert in_dom(page) <= 100, f"{in_dom(page)} messages rendered on opening, not a page"
    shown = texts(page)
    assert shown == sorted(shown, key=lambda t: int(t.split()[1])), "messages out of order"
    assert page.locator('.thread:not([hidden]) [data-action="regenerate"]').count() == 1

    scroll_until(moka, "top", "message 0:", 240)
    shown = texts(page)
    assert shown[0] == "message 0" and len(shown) <= MAX_SHOWN
    assert [int(t.split()[1]) for t in shown] == list(range(len(shown))), "a gap or a repeat in the window"
    # Far from the end, nothing offers Regenerate (that is for the newest answer only).
    assert page.locator('.thread:not([hidden]) [data-action="regenerate"]').count() == 0
    assert not page.locator("#jump-latest").is_hidden()

    scroll_until(moka, "bottom", f"message {COUNT - 1}:", 240)
    shown = [int(t.split()[1]) for t in texts(page)]
    assert shown[-1] == COUNT - 1 and shown == list(range(shown[0], COUNT))
    assert page.locator('.thread:not([hidden]) [data-action="regenerate"]').count() == 1
    assert moka.console == [] or not any("pageerror" in c for c in moka.console), moka.console


def test_the_message_being_read_stays_put_while_older_pages_arrive(moka_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Scrolled near the top of what is held, the older page goes in above without moving what is on screen."""
    cid = fill(tmp_path)
    moka: Moka = moka_factory({})
    page = moka.open("chat")
    page.locator(f'.conv-item[data-conv-id="{cid}"] .conv-open').click()
    moka.wait(lambda: visible(page, f"message {COUNT - 1}:"), 30, "the newest message on screen")
    before = in_dom(page)
    # Scroll so one message sits at a known place near the top, close enough to the edge to fetch.
    read = page.evaluate("""() => {
      const s = document.getElementById("chat-scroll");
      const m = [...document.querySelectorAll(".thread:not([hidden]) article.msg")][3];
      s.scrollTop += m.getBoundingClientRect().top - s.getBoundingClientRect().top - 40;
      return { id: m.dataset.messageId, top: m.getBoundingClientRect().top };
    }""")
    moka.wait(lambda: in_dom(page) > before, 20, "the older page")
    # The page puts the older messages in and sets the scroll back in the frames after: wait for the
    # message to be where it was (a loaded machine may take more than a frame or two), never for a time.
    where = "(id) => document.querySelector(`[data-message-id=\"${id}\"]`).getBoundingClientRect().top"
    moka.wait(lambda: abs(page.evaluate(where, read["id"]) - read["top"]) <= 2, 10,
              f"the message being read back at {read['top']} px")


def test_a_turn_sent_from_far_up_answers_at_the_end(moka_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Sending while an older stretch is shown goes back to the newest first; the answer comes after message 9999."""
    cid = fill(tmp_path)
    with FakeOpenAIServer() as srv:
        srv.enqueue([Text("the answer to the long talk")])
        moka: Moka = moka_factory({}, agent={"backend": "ollama", "model": "fake-model",
                                             "baseUrls": {"ollama": srv.base_url}})
        page = moka.open("chat")
        page.locator(f'.conv-item[data-conv-id="{cid}"] .conv-open').click()
        moka.wait(lambda: visible(page, f"message {COUNT - 1}:"), 30, "the newest message on screen")
        for _ in range(12):  # some way up: the newest messages leave the window
            page.locator("#chat-scroll").evaluate("(el) => { el.scrollTop = 0; }")
            page.wait_for_timeout(150)
        moka.wait(lambda: f"message {COUNT - 1}" not in texts(page), 60, "the newest message let go of")
        page.fill("#composer", "one more question")
        page.keyboard.press("Enter")
        answer = page.locator('.thread:not([hidden]) .msg[data-role="assistant"]:has-text("the answer to the long")')
        answer.wait_for(timeout=30000)
        moka.wait(lambda: visible(page, "the answer to the long talk"), 20, "the answer on screen")
        order = texts(page)
        assert order[-3:] == [f"message {COUNT - 1}", "one more question", "the answer to the long talk"], order[-5:]
