"""Start-up under a real X server (Xvfb), against a bare pywebview window in the same run.

Two moments per start: *mapped* — the first time a top-level window with the app's title is
viewable on the X server (polled with ``xdotool search --onlyvisible``); *interactive* — the page
has booted and reached its back end (Moka: ``app.hello`` reached the core; the bare window: its
page's js_api call). Needs Xvfb and xdotool (scripts/setup.sh installs both); skipped without.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import cli_start
from bench.context import Context
from bench.env import ROOT, demo, workspace
from bench.stats import Result, Target
from moka_shell.testing.xvfb import have_xvfb, xvfb_display

INTERACTIVE = Target(1.5, "≤ 1.5× the bare window's page calling its bridge (issue 31.2)")
MAPPED_RATIO = Target(1.2, "≤ 1.2× the bare window")
X_ENV = {"QT_QPA_PLATFORM": "xcb", "QTWEBENGINE_CHROMIUM_FLAGS": "--no-sandbox"}


def mapped_at(display: str, title: str, proc: subprocess.Popen[bytes], timeout: float = 30) -> float | None:
    """time.time() when a visible window named ``title`` first appears (None: it never did)."""
    env = {**os.environ, "DISPLAY": display}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        found = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", f"^{title}$"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if found.stdout.strip():
            return time.time()
        time.sleep(0.005)
    return None


def one_start(display: str, env: dict[str, str], cmd: list[str], title: str, out: Path,
              cwd: Path | str = ROOT) -> dict[str, float] | None:
    """Spawn (from ``cwd``), note mapped and interactive (ms after spawn), stop."""
    spawned = time.time()
    proc = subprocess.Popen(cmd, cwd=cwd, env={**env, **X_ENV, "DISPLAY": display},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        mapped = mapped_at(display, title, proc)
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
        return None
    if mapped is None or not out.exists():
        return None
    report = json.loads(out.read_text(encoding="utf-8"))
    out.unlink()
    hello = report.get("hello")
    if not isinstance(hello, (int, float)):
        return None
    sample = {"mapped": (mapped - spawned) * 1000, "interactive": (hello - spawned) * 1000}
    if isinstance(report.get("server"), (int, float)):
        sample["server"] = (report["server"] - spawned) * 1000
    return sample


def run(ctx: Context) -> list[Result]:
    """Moka and the bare window started in turn, ``repeat`` times each."""
    if not have_xvfb() or shutil.which("xdotool") is None:
        ctx.log("startup_x11: skipped (needs Xvfb and xdotool; scripts/setup.sh installs them)")
        return []
    repeat = ctx.pick(2, 7)
    moka: list[dict[str, float]] = []
    bare: list[dict[str, float]] = []
    clients: list[float] = []
    with workspace({"moka-demo": demo()}) as ws, xvfb_display() as display, tempfile.TemporaryDirectory() as tmp:
        env = ws.env()
        out = Path(tmp) / "out.json"
        ctx.log(f"startup_x11: {repeat} starts of Moka and of a bare pywebview window under Xvfb")
        moka_cmd = [sys.executable, "-m", "bench.desktop_probe", "start", str(out)]
        bare_cmd = [sys.executable, "-m", "bench.bare_webview", str(out)]
        one_start(display, env, moka_cmd, "Moka", out)  # the first start warms the caches: not counted
        for _ in range(repeat):
            for cmd, title, into in ((moka_cmd, "Moka", moka), (bare_cmd, "bare", bare)):
                sample = one_start(display, env, cmd, title, out)
                if sample is not None:
                    into.append(sample)
            # The floor for a server usable: the SDK's own client listing the same server's tools.
            clients.append(cli_start.bare(env, ["tools"]).stamps["answered"])
    if not moka or not bare:
        raise RuntimeError(f"startup_x11: too few starts were measured (Moka {len(moka)}, bare {len(bare)})")
    return [
        Result("startup.x11.mapped", "Desktop under Xvfb: spawn → window mapped", "ms",
               [s["mapped"] for s in moka], reference=[s["mapped"] for s in bare],
               reference_title="bare pywebview window, same run", target=MAPPED_RATIO, target_on="ratio",
               notes="mapped = first viewable top-level window with the app's title (xdotool --onlyvisible)"),
        Result("startup.x11.interactive", "Desktop under Xvfb: spawn → UI interactive", "ms",
               [s["interactive"] for s in moka], reference=[s["interactive"] for s in bare],
               reference_title="bare pywebview window's page calling js_api", target=INTERACTIVE, target_on="ratio",
               notes="interactive = the page booted and its app.hello reached the core"),
        Result("startup.x11.server", "Desktop under Xvfb: spawn → first server usable", "ms",
               [s["server"] for s in moka if "server" in s], reference=clients,
               reference_title="a bare mcp Client spawned, the same server's tools listed",
               notes="usable = the core reports the demo server ready (connected, its tools listed); "
                     "the page is interactive before this (issue 31.2)"),
    ]
