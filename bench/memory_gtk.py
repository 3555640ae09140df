"""Memory of the GTK build (pywebview's GTK backend, the distribution's WebKitGTK) against Qt.

The same desktop app and the same driving as bench/memory.py (the desktop probe, a chat with
10 dice views), the same tree PSS (app + WebKit's processes + the demo server), runs of GTK and
Qt taking turns. GTK has no offscreen mode, so it runs under a private Xvfb.

PyGObject is Debian's python3-gi, for /usr/bin/python3 only, so GTK runs from its own venv:

    /usr/bin/python3 -m venv --system-site-packages /tmp/venv-gtk
    /tmp/venv-gtk/bin/pip install -c requirements.lock -e . -e plugins/moka-parrot pywebview==6.2.1

(or name another with MOKA_GTK_PYTHON). The suite is skipped, with the reason, when any part is missing.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.context import Context
from bench.env import ROOT, demo, workspace
from bench.harness import run_desktop_probe
from bench.memory import TARGET_10
from bench.stats import Result
from moka_shell.testing.xvfb import have_xvfb, xvfb_display

GTK_PYTHON = os.environ.get("MOKA_GTK_PYTHON", "/tmp/venv-gtk/bin/python")
SETUP = ("/usr/bin/python3 -m venv --system-site-packages /tmp/venv-gtk && "
         "/tmp/venv-gtk/bin/pip install -c requirements.lock -e . -e plugins/moka-parrot pywebview==6.2.1")
CHECK = ("import gi; gi.require_version('Gtk', '3.0'); gi.require_version('WebKit2', '4.1'); "
         "from gi.repository import Gtk, WebKit2; import webview, moka_shell, moka_parrot, mcp")


def unavailable() -> str | None:
    """Why the GTK build cannot be measured here, or None when it can."""
    if not have_xvfb():
        return "Xvfb is not installed (scripts/setup.sh installs it); GTK has no offscreen mode"
    if not Path(GTK_PYTHON).exists():
        return f"no GTK venv at {GTK_PYTHON} (MOKA_GTK_PYTHON); make it with: {SETUP}"
    done = subprocess.run([GTK_PYTHON, "-c", CHECK], capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return f"{GTK_PYTHON} cannot load PyGObject + WebKit2 4.1 + pywebview + Moka + moka-parrot ({last}); " \
               f"apt-get install python3-gi gir1.2-webkit2-4.1, then: {SETUP}"
    return None


def gtk_probe(env: dict[str, str], steps: list[int], timeout: float = 900,
              spec: dict[str, Any] | None = None) -> dict[str, Any]:
    """The desktop app on pywebview's GTK backend under a private Xvfb, driven by bench/desktop_probe.py."""
    bin_dir = str(Path(GTK_PYTHON).parent)
    clean = {k: v for k, v in env.items() if not k.startswith(("QT_", "QTWEBENGINE_"))}
    with tempfile.TemporaryDirectory(prefix="moka-gtk-probe-") as tmp, xvfb_display() as display:
        out = Path(tmp) / "out.json"
        cmd = [GTK_PYTHON, "-m", "bench.desktop_probe", "memory", str(out), json.dumps(spec or {"steps": steps})]
        run_env = {**clean, "DISPLAY": display, "PYWEBVIEW_GUI": "gtk",
                   "PATH": bin_dir + os.pathsep + clean.get("PATH", "")}  # its own `moka demo-server`
        proc = subprocess.Popen(cmd, cwd=ROOT, env=run_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + timeout
            while proc.poll() is None and not out.exists() and time.monotonic() < deadline:
                time.sleep(0.5)
            time.sleep(1)  # the probe writes the whole file at once; let the write end
            # The probe closes the window from its driver thread; on GTK that can hang, so the
            # result file, not the exit, ends the run.
            if not out.exists():
                raise RuntimeError(f"the GTK desktop probe wrote nothing (rc {proc.poll()})")
            report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        finally:
            _stop(proc)
    if "error" in report:
        raise RuntimeError(f"the GTK desktop probe failed: {report['error']}")
    return dict(report["memory"])


def _stop(proc: subprocess.Popen[bytes]) -> None:
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def run(ctx: Context) -> list[Result]:
    """Idle and 10 views, GTK and Qt (offscreen) in turns."""
    reason = unavailable()
    if reason:
        ctx.log(f"memory_gtk: skipped: {reason}")
        return []
    rounds = int(os.environ.get("MOKA_BENCH_ROUNDS", "0")) or ctx.pick(1, 2)
    data: dict[str, list[dict[str, Any]]] = {"gtk": [], "qt": []}
    for r in range(rounds):
        for engine in (["gtk", "qt"] if r % 2 == 0 else ["qt", "gtk"]):
            ctx.log(f"memory_gtk: round {r + 1}/{rounds}: {engine}, idle and 10 views "
                    f"(load {os.getloadavg()[0]:.1f})")
            with workspace({"moka-demo": demo()}, backend="parrot") as ws:
                started = time.monotonic()
                if engine == "gtk":
                    data[engine].append(gtk_probe(ws.env(), [10]))
                else:
                    data[engine].append(run_desktop_probe(ws.env(), "memory", {"steps": [10]}, timeout=900)["memory"])
                ctx.log(f"memory_gtk: {engine} took {time.monotonic() - started:.0f} s")
    out = []
    for key, label in (("idle", "idle"), ("10", "10 views")):
        out.append(Result(f"memory.gtk.{key}", f"GTK build (WebKitGTK, Xvfb): PSS of the whole tree, {label}", "MiB",
                          [m[key]["pss_mib"] for m in data["gtk"]],
                          reference=[m[key]["pss_mib"] for m in data["qt"]], reference_title="Qt desktop (offscreen), in turns",
                          target=TARGET_10 if key == "10" else None,
                          extra={"uss_mib": [m[key]["uss_mib"] for m in data["gtk"]],
                                 "by_role": [m[key]["by_role"] for m in data["gtk"]],
                                 "qt_by_role": [m[key]["by_role"] for m in data["qt"]],
                                 "live_parked": [(m[key].get("live"), m[key].get("parked")) for m in data["gtk"]]}))
    return out
