"""Streamed text is written to the page when it arrives, not held for the next animation frame.

Issue 19 item 4: each delta used to wait for a `requestAnimationFrame` callback (up to a frame,
16.7 ms at 60 Hz) before it reached the DOM. Here the page's animation frames are held back
entirely; a reply's words must still appear, because a delta that comes after a quiet spell is
written at once. Frames only batch a fast run of deltas.
"""

from __future__ import annotations

from typing import Any

import pytest

from browser_support import Moka
from moka_shell.testing.fake_openai import FakeOpenAIServer, Text

# Every animation-frame callback of the page's own scripts is queued and never run, unless the
# test flushes them: whatever shows up in the DOM meanwhile was written without waiting for one.
HOLD_FRAMES = """(() => {
  const held = [];
  window.__heldFrames = held;
  window.requestAnimationFrame = (cb) => { held.push(cb); return held.length; };
  window.cancelAnimationFrame = () => {};
  window.__flushFrames = () => { const now = performance.now(); for (const cb of held.splice(0)) cb(now); };
})();"""


@pytest.fixture(autouse=True)
def no_keyring(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def assistant_text(page: Any) -> str:
    return str(page.evaluate("() => [...document.querySelectorAll('.msg[data-role=\"assistant\"]')].map((m) => m.textContent).join('|')"))


def test_a_delta_after_a_quiet_spell_is_in_the_dom_without_an_animation_frame(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """Two deltas, each after a second of quiet, frames held: both words are in the DOM as they arrive."""
    with FakeOpenAIServer() as srv:
        srv.enqueue([Text("First", delay=1.0), Text(" second", delay=1.0)])
        moka: Moka = moka_factory({}, agent={"backend": "ollama", "model": "fake-model", "baseUrls": {"ollama": srv.base_url}})
        moka.page.add_init_script(HOLD_FRAMES)
        page = moka.open("chat")
        page.fill("#composer", "say two words")
        page.keyboard.press("Enter")
        moka.wait(lambda: "First" in assistant_text(page), timeout=20, what="the first delta in the DOM with frames held")
        moka.wait(lambda: "First second" in assistant_text(page), timeout=20, what="the second delta in the DOM with frames held")
        # The held frames still do their work once they run (the caret, following the reply).
        page.evaluate("window.__flushFrames()")
        assert "First second" in assistant_text(page)


# Notes, each time the reply's text changes, how many animations the page is running right then.
COUNT_ANIMATIONS = """(() => {
  window.__animsAtWrite = [];
  new MutationObserver(() => {
    const msgs = document.querySelectorAll('.msg[data-role="assistant"]');
    if (msgs.length && msgs[msgs.length - 1].textContent.includes("One"))
      window.__animsAtWrite.push(document.getAnimations().length);
  }).observe(document.body, { childList: true, subtree: true, characterData: true });
})();"""


def test_the_caret_stands_still_while_words_stream_and_blinks_in_a_pause(moka_factory) -> None:  # type: ignore[no-untyped-def]
    """A blinking caret made the page draw on every display tick, so each word waited for one:
    no animation runs when a word is written; the caret blinks once the reply pauses."""
    with FakeOpenAIServer() as srv:
        srv.enqueue([Text("One", delay=0.5), Text(" two", delay=0.05), Text(" three", delay=4.0)])
        moka: Moka = moka_factory({}, agent={"backend": "ollama", "model": "fake-model", "baseUrls": {"ollama": srv.base_url}})
        page = moka.open("chat")
        page.evaluate(COUNT_ANIMATIONS)
        page.fill("#composer", "count")
        page.keyboard.press("Enter")
        moka.wait(lambda: "One two" in assistant_text(page), timeout=20, what="the first words")
        moka.wait(lambda: page.evaluate("document.getAnimations().length") > 0, timeout=10, what="the caret blinking in the pause")
        assert page.evaluate("document.querySelector('.msg.is-paused .caret') !== null")
        moka.wait(lambda: "One two three" in assistant_text(page), timeout=20, what="the last word")
        counts = page.evaluate("window.__animsAtWrite")
        assert counts and all(n == 0 for n in counts), counts
