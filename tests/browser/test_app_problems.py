"""The app's problems are shown where the person looks (issue 14): a damaged conversation database
shown from a read-only copy, and an inspector log that can't be written, in a strip under the top bar
that names each, until dismissed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from browser_support import DEMO
from moka_shell.core.chat.store import Store


def damage(path: Path) -> None:
    """A real conversation database with its middle pages overwritten (the header stays)."""
    store = Store(path)
    for k in range(20):
        cid = store.create_conversation(f"chat {k}")
        for i in range(40):
            store.add_message(cid, "user", f"message {k}.{i} " * 20)
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    data = bytearray(path.read_bytes())
    data[4096 * 20: 4096 * 24] = b"\x5a" * 4096 * 4
    path.write_bytes(bytes(data))


def test_problems_strip_names_a_damaged_database_and_a_blocked_log(moka_factory: Any, tmp_path: Path) -> None:
    """Both problems listed with their paths; Dismiss hides the strip; the chat screen still works."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "inspector").write_text("a file where the inspector's folder should be")
    damage(data / "moka.sqlite3")
    moka = moka_factory({"moka-demo": DEMO})
    moka.app.inspector.record("server", {"line": "so the log has tried"})
    page = moka.open("chat")
    strip = page.locator("#app-problems")
    strip.wait_for(state="visible", timeout=20000)
    text = strip.inner_text()
    assert "Moka found 2 problems" in text
    assert "is damaged" in text and "showing a read-only copy" in text
    assert "the inspector's log can't be written" in text and "is a file, not a folder" in text
    moka.wait(lambda: page.locator("#screen-chat").is_visible(), 30, "the chat screen")
    page.screenshot(path=str(tmp_path / "problems-light.png"))
    moka.call("settings.set", {"key": "theme.mode", "value": "dark"})
    page.wait_for_timeout(300)
    page.screenshot(path=str(tmp_path / "problems-dark.png"))
    strip.locator(".problems-dismiss").click()
    assert strip.is_hidden()
    moka.wait(lambda: page.locator("#screen-chat").is_visible(), 20, "the chat screen")
    assert not [c for c in moka.console if c.startswith("pageerror")], moka.console
