"""The server card shows a server's instructions for the model, and switches them off and on."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from browser_support import Moka
from support import SERVERS

SHOTS = Path("/tmp/moka-instructions")


def test_instructions_on_the_server_card(moka_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Folded on the card, "Sent" by default; unticking saves "useInstructions": false and says "Off"."""
    moka: Moka = moka_factory({"e": {"command": sys.executable,
                                     "args": [str(SERVERS / "elicit_server.py"), str(tmp_path / "server.log")]}})
    page = moka.open("servers")
    page.set_viewport_size({"width": 1100, "height": 760})
    fold = page.locator('.server-card[data-server="e"] .server-instructions')
    fold.wait_for(timeout=20000)
    assert "Sent" in fold.locator("summary").inner_text()
    fold.locator("summary").click()
    assert "The secret word is PERSIMMON." in fold.locator(".server-instructions-text").inner_text()
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "card-light.png"))
    fold.locator('[data-action="use-instructions"]').uncheck()
    page.locator('.server-card[data-server="e"] .server-instructions-state:has-text("Off")').wait_for(timeout=10000)
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["mcpServers"]["e"]["useInstructions"] is False
    assert moka.app.servers.get("e").status == "ready"
