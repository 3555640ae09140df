"""Keys and menu commands: screens, new chat, settings, search; the title follows screen and conversation."""

from __future__ import annotations

from typing import Any


def test_keys_and_menu_commands_route_and_titles_follow(moka_factory: Any) -> None:
    moka = moka_factory({})
    page = moka.open("chat")
    moka.wait(lambda: page.title() == "Chat — Moka", what="the chat screen's title")
    page.locator("body").press("Control+2")
    moka.wait(lambda: page.title() == "Tool runner — Moka" and not page.locator("#screen-runner").is_hidden(),
              what="Ctrl+2 opens the Tool runner")
    page.locator("body").press("Control+,")
    moka.wait(lambda: not page.locator("#screen-settings").is_hidden(), what="Ctrl+, opens Settings")
    assert page.title() == "Settings — Moka"

    # The desktop menu's commands arrive as shell.command events from the core.
    moka.core.submit(_emit(moka, "screen", screen="servers")).result(10)
    moka.wait(lambda: not page.locator("#screen-servers").is_hidden(), what="a menu command opens Servers")
    moka.core.submit(_emit(moka, "about")).result(10)
    dialog = page.locator("#about-dialog")
    dialog.wait_for(timeout=5000)
    assert "Version" in dialog.inner_text()
    dialog.locator(".btn-primary").click()
    moka.core.submit(_emit(moka, "report")).result(10)
    page.locator("#report-dialog").wait_for(timeout=5000)
    assert "Inspector" in page.locator("#report-dialog").inner_text()
    page.keyboard.press("Escape")

    page.locator("body").press("Control+n")
    moka.wait(lambda: not page.locator("#screen-chat").is_hidden(), what="Ctrl+N opens a new chat")
    moka.wait(lambda: page.title() == "Chat — Moka", what="a new chat is titled by the screen")
    cid = moka.app.store.create_conversation("Roll three dice")
    page.reload()
    page.wait_for_selector('#conn[data-status="online"]', timeout=20000)
    page.get_by_text("Roll three dice").first.click()
    moka.wait(lambda: page.title() == "Roll three dice — Moka", what="a conversation's title")
    assert cid


async def _emit(moka: Any, command: str, **params: Any) -> None:
    moka.app.emit("shell.command", {"command": command, **params})
