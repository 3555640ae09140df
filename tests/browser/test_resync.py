"""Views created while the page's socket is down are mounted when it is back (finding S2: they were lost)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from browser_support import Moka

SERVER = {"command": sys.executable, "args": [str(Path(__file__).resolve().parents[1] / "servers" / "hostile_server.py")]}


def test_a_view_created_during_a_drop_is_mounted_after_it(moka_factory: Any) -> None:
    moka: Moka = moka_factory({"hostile": SERVER})
    page = moka.open("runner")
    host = moka.app.view_host

    async def drop_then_run() -> str:
        # The page's socket ends (as when a poison frame killed the handler before), and a view is
        # created before the page is back: its view.created goes to no socket.
        for ws in list(moka.web.sockets):
            await ws.close(code=1012)
        _cid, view, _ = await host.run_tool("hostile", "strict", {})
        assert not moka.web.sockets
        return view.id

    view_id = moka.core.submit(drop_then_run()).result(30)
    moka.wait(lambda: moka.web.sockets, 30, "the page to reconnect")
    ready = moka.wait_view_ready("strict")
    assert ready.id == view_id
    moka.wait(lambda: page.locator(f'.view-frame[data-view-id="{view_id}"]').count() == 1, 20, "the view mounted")
