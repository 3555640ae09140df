"""Drives the real desktop shell offscreen: Tool runner → roll_dice → the view initialises → screenshot,
then a probe view (probe_server.py) calls a tool through the page and looks for the page's token.

Run in a fresh process (Qt can start only once per process) by tests/gui/test_desktop.py.
Prints one JSON line with what it saw.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

from moka_shell.paths import Paths
from moka_shell.shells.desktop.run import run_desktop

OUT: dict[str, Any] = {}
HERE = Path(__file__).resolve().parent


def grab(window: Any, path: str) -> None:
    """Screenshot the window on the GUI thread (Qt widgets may only be touched there)."""
    from qtpy.QtCore import QObject, QCoreApplication, Signal

    class Grabber(QObject):
        request = Signal()

        def __init__(self) -> None:
            super().__init__()
            self.done = threading.Event()
            self.request.connect(self.run)

        def run(self) -> None:
            window.native.grab().save(path)
            self.done.set()

    grabber = Grabber()
    grabber.moveToThread(QCoreApplication.instance().thread())
    grabber.request.emit()
    grabber.done.wait(10)


def drive(core: Any, window: Any) -> None:
    app = core.app
    start = time.monotonic()
    hello = threading.Event()
    bridge = core.web.bridge
    original = bridge.methods["app.hello"]

    async def hello_seen(p: Any) -> Any:
        hello.set()
        return await original(p)

    bridge.methods["app.hello"] = hello_seen
    # The page booted and spoke to the core through js_api (it may have done so already).
    OUT["ui_online"] = hello.wait(30) or bool(app.view_host.client)
    # The UI page's CSP forbids eval, so drive it with run_js (evaluate_js wraps scripts in eval).
    # Count the page's full collections: after a fresh view is ready it collects once (js/views/host.js).
    window.run_js("(function(){var g=window.gc; window.__gcCalls=0; if (typeof g === 'function')"
                  " window.gc=function(){window.__gcCalls++; return g();};})()")
    window.run_js("location.hash = '#runner?server=moka-demo&tool=roll_dice'")
    time.sleep(1.5)
    window.run_js("(function(){var c=document.querySelector('[name=count]'); c.value='3';"
                  "c.dispatchEvent(new Event('input',{bubbles:true})); document.querySelector('#runner-run').click();})()")
    deadline = time.monotonic() + 30
    view = None
    while time.monotonic() < deadline:
        ready = [v for v in app.view_host.views.values() if v.state == "ready" and "result_sent" in v.timings]
        if ready:
            view = ready[0]
            break
        time.sleep(0.1)
    OUT["view_ready"] = view is not None
    if view is not None:
        OUT["arguments"] = view.arguments
        OUT["app_info"] = view.app_info
        OUT["rolls"] = (view.result or {}).get("structuredContent", {}).get("rolls")
        gc_deadline = time.monotonic() + 20
        while time.monotonic() < gc_deadline and not window.run_js("window.__gcCalls"):
            time.sleep(0.1)
        OUT["gc_after_ready"] = window.run_js("window.__gcCalls")
        window.run_js("document.querySelector('.view-card').scrollIntoView({block: 'center'})")
        time.sleep(1.0)  # let the dice paint
    grab(window, sys.argv[2])
    OUT["screenshot"] = Path(sys.argv[2]).exists()
    # How the page reaches the core: no js_api function, the connection badge online.
    OUT["page_has_js_api"] = window.run_js("String(Boolean(window.pywebview && window.pywebview.api && window.pywebview.api.rpc))")
    OUT["page_gc"] = window.run_js("typeof window.gc")  # js/views/host.js collects after parking (shells/desktop/run.py)
    OUT["keepalive_frames"] = window.run_js("document.querySelectorAll('.sandbox-keepalive').length")
    OUT["conn_status"] = window.run_js("document.querySelector('#conn') && document.querySelector('#conn').dataset.status")
    probe_view(core)


def probe_view(core: Any) -> None:
    """Open the probe view; note the tools/call results and what it could see of the page's URL."""
    app = core.app
    core.submit(app.servers.wait_ready(timeout=30)).result(40)
    _cid, view, _result = core.submit(app.view_host.run_tool("probe", "probe_view", {})).result(40)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (view.model_context or {}).get("structuredContent"):
        time.sleep(0.1)
    OUT["probe"] = (view.model_context or {}).get("structuredContent")
    OUT["token"] = app.endpoints.token


if __name__ == "__main__":
    data = Path(sys.argv[1])
    data.mkdir(parents=True, exist_ok=True)
    servers = {"moka-demo": {"command": "moka", "args": ["demo-server"]},
               "probe": {"command": sys.executable, "args": [str(HERE / "probe_server.py")]}}
    (data / "config.json").write_text(json.dumps({"mcpServers": servers, "theme": {"mode": "light"}}))
    code = run_desktop(Paths(data / "config.json", data), driver=drive)
    print(json.dumps(OUT), flush=True)
    sys.exit(code)
