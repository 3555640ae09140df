"""The server card's Tool approvals fold: the standing choices are shown and changed in place (issue 13, item 1)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from browser_support import Moka

SERVER = {"command": sys.executable, "args": [str(Path(__file__).resolve().parents[1] / "servers" / "hostile_server.py")]}


def test_choices_are_edited_on_the_card(moka_factory: Any, tmp_path: Path) -> None:
    moka: Moka = moka_factory({"hostile": SERVER}, approval={"servers": {"hostile": {"tools": {"strict": "deny"}}}})
    page = moka.open("servers")
    fold = page.locator('.server-approvals[data-server="hostile"]')
    moka.wait(lambda: "1 tool choice" in fold.locator("summary").inner_text(), what="the saved choice in the summary")
    fold.locator("summary").click()
    row = fold.locator('[data-tool="big"]')
    row.wait_for(timeout=20000)
    assert fold.locator('[data-tool="strict"] select').input_value() == "deny"
    row.locator("select").select_option("allow")
    moka.wait(lambda: moka.app.config.approval.servers["hostile"].tools.get("big") == "allow", what="the choice saved")
    fold.locator(".server-approvals-row").first.locator("select").select_option("ask")
    moka.wait(lambda: moka.app.config.approval.servers["hostile"].default == "ask", what="the server default saved")
    moka.wait(lambda: "every tool: ask" in fold.locator("summary").inner_text(), what="the summary")
    fold.locator('[data-tool="strict"] select').select_option("")
    moka.wait(lambda: "strict" not in moka.app.config.approval.servers["hostile"].tools, what="the choice cleared")
    for mode in ("light", "dark"):
        moka.call("theme.set", {"mode": mode})
        page.wait_for_timeout(300)
        page.locator('.server-card[data-server="hostile"]').screenshot(path=str(tmp_path / f"approvals-{mode}.png"))
    print("screenshots in", tmp_path)
