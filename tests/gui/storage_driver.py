"""Drives the desktop shell offscreen (Qt): a view keeps its localStorage and sessionStorage when it is
parked and mounted again, popped out into its own native window, and brought back inline.

Run in a fresh process (Qt can start only once per process) by tests/gui/test_desktop_storage.py.
The view (tests/servers/storage_server.py) reports what it read at load as model context.
Prints one JSON line with what it saw.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from moka_shell.paths import Paths
from moka_shell.shells.desktop.run import run_desktop

OUT: dict[str, Any] = {"boots": []}
SERVERS = Path(__file__).resolve().parents[1] / "servers"


def wait(predicate: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    return None


def next_boot(view: Any, loads_before: int) -> Any:
    """The boot report of the view's next load (its `loads` count went up by one)."""
    def seen() -> Any:
        boot = ((view.model_context or {}).get("structuredContent") or {}).get("boot")
        return boot if boot is not None and int(boot["local"].get("loads", "0")) == loads_before else None
    return wait(seen)


def drive(core: Any, window: Any) -> None:
    app, host = core.app, core.app.view_host
    core.submit(app.servers.wait_ready(timeout=30)).result(40)
    _cid, view, _res = core.submit(host.run_tool("keeper", "remember", {"topic": "qt"})).result(40)
    OUT["boots"].append(next_boot(view, 0))
    wait(lambda: host.storage.areas.usage("keeper")["localItems"] == 1)
    # A sessionStorage change as the view's prelude sends it (the browser tests have the app write it;
    # here the run_js of the main page cannot reach into the view's frame).
    core.submit(_session_write(host, view)).result(10)

    core.submit(host.close(view, "scrolled out of view", park=True)).result(20)
    core.submit(_remount(host, view)).result(10)
    OUT["boots"].append(next_boot(view, 1))

    started = time.monotonic()
    core.submit(_mode(host, view, "popout")).result(10)
    OUT["boots"].append(next_boot(view, 2))
    OUT["popout_ms"] = round((time.monotonic() - started) * 1000)
    core.submit(_mode(host, view, "inline")).result(10)
    OUT["boots"].append(next_boot(view, 3))
    OUT["problems"] = list(view.problems)


async def _session_write(host: Any, view: Any) -> None:
    await host.dispatcher.handle(view.id, {"jsonrpc": "2.0", "method": "moka/storage",
                                           "params": {"area": "session", "ops": [{"op": "set", "key": "draft", "value": "qt"}]}})


async def _remount(host: Any, view: Any) -> None:
    host.remount(view)


async def _mode(host: Any, view: Any, mode: str) -> None:
    # As the page's view.setDisplayMode does: the frame that goes is torn down first.
    from moka_shell.core.views.window_moves import change_display_mode

    await change_display_mode(host, view, mode)


if __name__ == "__main__":
    data = Path(sys.argv[1])
    data.mkdir(parents=True, exist_ok=True)
    servers = {"keeper": {"command": sys.executable, "args": [str(SERVERS / "storage_server.py")]}}
    (data / "config.json").write_text(json.dumps({"mcpServers": servers, "theme": {"mode": "light"}}))
    code = run_desktop(Paths(data / "config.json", data), driver=drive)
    print(json.dumps(OUT), flush=True)
    sys.exit(code)
