"""Memory against a real floor: Moka's desktop with 10 live views against a bare pywebview window
showing the same 10 views through the official ext-apps AppBridge.

The floor is bench/floor_webview.py (pywebview's window on one URL, nothing of Moka's) loading
bench/appbridge/floor.html, which mounts the demo's dice view 10 times, each in its own sandboxed
``srcdoc`` iframe with its own ``AppBridge`` (bench/appbridge/host.js, ``benchMountAll``), and gives
each its tool input and one real result of ``roll_dice`` (read once with a bare mcp client). Moka is
the desktop app driven as bench/memory.py drives it (10 ``/tool roll_dice {}`` turns in one chat),
with its parking limit raised from outside to 10 so all 10 views stay live, as in the floor. Both
are measured the same way (bench/memory.py's ``measure``: the tree's PSS, USS, per role), runs in
turns, floor and Moka alternating ABBA. The GTK build is compared with a GTK floor when
bench/memory_gtk.py's GTK venv is there.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.appbridge_ref import HOST_DIR, app_document, missing_bundle
from bench.context import Context
from bench.env import MOKA, PYTHON, QT_ENV, ROOT, demo, workspace
from bench.harness import run_desktop_probe
from bench.memory import measure
from bench.stats import Result, Target

VIEWS = 10
TARGET = Target(1.15, "Moka's desktop tree with 10 live views ≤ 1.15x the floor (median)")


class _FloorHandler(http.server.SimpleHTTPRequestHandler):
    """The host files, the views to mount (docs.json) and the page's report (POST done)."""

    docs: bytes = b"[]"
    reports: list[str] = []
    arrived = threading.Event()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """No request log on stderr."""

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        """docs.json from memory, the rest from bench/appbridge."""
        if self.path.split("?")[0] == "/docs.json":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(self.docs)))
            self.end_headers()
            self.wfile.write(self.docs)
            return
        super().do_GET()

    def do_POST(self) -> None:  # noqa: N802 - the base class's name
        """The page says it mounted every view (or why not)."""
        type(self).reports.append(self.path.partition("?")[2])
        type(self).arrived.set()
        self.send_response(204)
        self.end_headers()


@contextlib.contextmanager
def floor_server(docs: list[dict[str, Any]]) -> Iterator[tuple[str, type[_FloorHandler]]]:
    """Serve floor.html with these views on 127.0.0.1; yields its URL and the handler class."""
    handler_cls = type("FloorHandler", (_FloorHandler,), {"docs": json.dumps(docs).encode(), "reports": [],
                                                          "arrived": threading.Event()})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler_cls, directory=str(HOST_DIR)))
    thread = threading.Thread(target=server.serve_forever, name="memory-floor", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/floor.html", handler_cls
    finally:
        server.shutdown()
        server.server_close()


def floor_once(url: str, handler: type[_FloorHandler], env: dict[str, str], views: int = VIEWS,
               timeout: float = 180) -> dict[str, Any]:
    """Start the floor window, wait until the page has mounted its views, measure its tree, end it."""
    handler.arrived.clear()
    handler.reports.clear()
    proc = subprocess.Popen([env.get("MOKA_FLOOR_PYTHON", PYTHON), "-m", "bench.floor_webview", f"{url}?views={views}"], cwd=ROOT,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        if not handler.arrived.wait(timeout):
            raise TimeoutError(f"the floor page did not mount its views in {timeout:g} s (rc {proc.poll()})")
        report = handler.reports[-1]
        if report != f"views={views}":
            raise RuntimeError(f"the floor page failed: {report}")
        return measure([proc.pid], settle=2.5)
    finally:
        _end(proc)


def _end(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    time.sleep(1)  # QtWebEngine's helpers leave just after the browser process


def moka_once(engine: str) -> dict[str, Any]:
    """Moka's desktop app (Qt offscreen, or GTK under Xvfb) with 10 live dice views in one chat."""
    spec: dict[str, Any] = {"steps": [VIEWS], "max_live": VIEWS}
    with workspace({"moka-demo": demo()}, backend="parrot") as ws:
        if engine == "gtk":
            from bench.memory_gtk import gtk_probe

            return gtk_probe(ws.env(), [VIEWS], spec=spec)
        return dict(run_desktop_probe(ws.env(), "memory", spec, timeout=900)["memory"])


def gtk_floor(url: str, handler: type[_FloorHandler], views: int = VIEWS) -> dict[str, Any]:
    """The floor on pywebview's GTK backend under a private Xvfb, with the GTK venv's Python."""
    from bench.memory_gtk import GTK_PYTHON
    from moka_shell.testing.xvfb import xvfb_display

    clean = {k: v for k, v in os.environ.items() if not k.startswith(("QT_", "QTWEBENGINE_"))}
    with xvfb_display() as display:
        return floor_once(url, handler, {**clean, "DISPLAY": display, "PYWEBVIEW_GUI": "gtk",
                                         "MOKA_FLOOR_PYTHON": GTK_PYTHON}, views)


def engines(ctx: Context) -> list[str]:
    """Qt always; GTK too when bench/memory_gtk.py can run it here (else the reason is logged)."""
    from bench.memory_gtk import unavailable

    why = unavailable()
    if why:
        ctx.log(f"memory_floor: GTK skipped: {why}")
        return ["qt"]
    return ["qt", "gtk"]


def run(ctx: Context) -> list[Result]:
    """Floor and Moka in turns (ABBA), per engine; the ratio of the 10-live-view trees."""
    why = missing_bundle()
    if why:
        ctx.log(f"memory_floor: skipped: {why}")
        return []
    rounds = int(os.environ.get("MOKA_BENCH_ROUNDS", "0")) or ctx.pick(1, 3)
    dice = app_document({"command": MOKA, "args": ["demo-server"]}, "roll_dice")
    docs = [{"html": dice["html"], "tool": "roll_dice", "args": {}, "result": dice["result"]}] * VIEWS
    out = []
    with floor_server(docs) as (url, handler):
        for engine in engines(ctx):
            data: dict[str, list[dict[str, Any]]] = {"floor": [], "floor_idle": [], "moka": [], "moka_idle": []}
            for r in range(rounds):
                for who in (["floor", "moka"] if r % 2 == 0 else ["moka", "floor"]):
                    ctx.log(f"memory_floor: {engine} round {r + 1}/{rounds}: {who} (load {os.getloadavg()[0]:.1f})")
                    if who == "moka":
                        m = moka_once(engine)
                        data["moka"].append(m[str(VIEWS)])
                        data["moka_idle"].append(m["idle"])
                        continue
                    for views, key in ((VIEWS, "floor"), (0, "floor_idle")):
                        if engine == "gtk":
                            data[key].append(gtk_floor(url, handler, views))
                        else:
                            data[key].append(floor_once(url, handler, {**os.environ, **QT_ENV}, views))
            out.append(result(engine, data))
    return out


def result(engine: str, data: dict[str, list[dict[str, Any]]]) -> Result:
    """One engine's figure: Moka's PSS against the floor's, with USS and the per-role breakdowns."""
    name = "Qt (offscreen)" if engine == "qt" else "GTK (WebKitGTK, Xvfb)"
    moka, floor = data["moka"], data["floor"]
    return Result(f"memory.floor.{engine}", f"PSS of the whole tree, 10 live views, desktop {name}, against the floor",
                  "MiB", [m["pss_mib"] for m in moka], reference=[m["pss_mib"] for m in floor],
                  reference_title=f"bare pywebview {engine} window, the same 10 views through the official AppBridge",
                  target=TARGET, target_on="ratio", notes="runs in turns, floor and Moka ABBA",
                  extra={"uss_mib": [m["uss_mib"] for m in moka], "floor_uss_mib": [m["uss_mib"] for m in floor],
                         "idle_pss_mib": [m["pss_mib"] for m in data["moka_idle"]],
                         "floor_idle_pss_mib": [m["pss_mib"] for m in data["floor_idle"]],
                         "idle_by_role": [m["by_role"] for m in data["moka_idle"]],
                         "floor_idle_by_role": [m["by_role"] for m in data["floor_idle"]],
                         "live_parked": [(m.get("live"), m.get("parked")) for m in moka],
                         "by_role": [m["by_role"] for m in moka], "floor_by_role": [m["by_role"] for m in floor],
                         "others_mapping_webengine": [m.get("others_mapping_webengine") for m in moka],
                         "floor_others_mapping_webengine": [m.get("others_mapping_webengine") for m in floor],
                         "gl": [bool(m.get("gl")) for m in moka], "floor_gl": [bool(m.get("gl")) for m in floor],
                         "app_top": moka[-1].get("app_top"), "floor_app_top": floor[-1].get("app_top"),
                         "renderer_top": moka[-1].get("renderer_top"),
                         "floor_renderer_top": floor[-1].get("renderer_top")})
