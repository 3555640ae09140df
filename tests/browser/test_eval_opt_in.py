"""A view that fails for needing eval() offers the server's opt-in on its error card; allowing it works."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SERVERS = Path(__file__).resolve().parent.parent / "servers"
EVAL_APP = {"command": sys.executable, "args": [str(SERVERS / "eval_server.py")]}


def test_the_eval_strip_allows_eval_for_that_server(moka_factory: Any) -> None:
    moka = moka_factory({"eval-app": EVAL_APP})
    moka.app.view_host.handshake_timeout = 4  # the failure comes when the handshake deadline passes
    page = moka.open("runner?server=eval-app&tool=needs_eval")
    page.wait_for_selector("#runner-run:not([disabled])", timeout=15000)
    page.click("#runner-run")
    strip = page.locator(".view-eval")
    strip.wait_for(timeout=20000)
    assert "eval-app" in strip.inner_text()
    strip.locator('[data-action="allow-eval"]').click()
    moka.wait(lambda: "Run the tool again" in strip.inner_text(), what="the strip saying it is allowed")
    saved = json.loads(moka.app.paths.config_file.read_text())
    assert saved["mcpServers"]["eval-app"]["allowUnsafeEval"] is True

    page.click("#runner-run")
    moka.wait(lambda: any(v.state == "ready" for v in moka.app.view_host.views.values()), timeout=20,
              what="the app running once eval is allowed")
