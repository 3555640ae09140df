"""Where the desktop app's megabytes are, and cuts tried against them in the same run.

Per role (bench/procs.py's ``role``): the app's own process (the Python core and Qt's browser
process live in one process), QtWebEngine's renderers and helpers, and the demo server, with
10 views in one chat (bench/memory.py's driving). Then Chromium flags that should trade nothing
visible, each an A/B against the unchanged app, runs taking turns. And what the Python side's
imports cost by themselves (a fresh interpreter importing one thing, its PSS against a bare one).
"""

from __future__ import annotations

import subprocess
from typing import Any

from bench.context import Context
from bench.env import PYTHON, demo, workspace
from bench.harness import run_desktop_probe
from bench.stats import Result

VARIANTS = {"unchanged": "", "renderer-process-limit=1": "--renderer-process-limit=1",
            "disable-gpu": "--disable-gpu", "num-raster-threads=1": "--num-raster-threads=1"}
IMPORTS = {"bare Python": "", "mcp (client)": "import mcp", "Moka's core (moka_shell.core.app)":
           "import moka_shell.core.app", "pywebview + Qt WebEngine": "import webview, PyQt6.QtWebEngineWidgets"}
PSS = ("import pathlib; print(sum(int(l.split()[1]) for l in pathlib.Path('/proc/self/smaps_rollup')"
       ".read_text().splitlines() if l.startswith('Pss:')))")


def desktop_10(flags: str) -> dict[str, Any]:
    """The desktop app, idle and with 10 views, with these extra Chromium flags."""
    with workspace({"moka-demo": demo()}, backend="parrot") as ws:
        report = run_desktop_probe(ws.env(), "memory", {"steps": [10]}, timeout=900, flags=flags)
    return dict(report["memory"])


def import_pss(code: str) -> float:
    """PSS (MiB) of a fresh interpreter after running ``code``."""
    out = subprocess.run([PYTHON, "-c", f"{code}\n{PSS}"], capture_output=True, text=True, timeout=120, check=True)
    return int(out.stdout.split()[-1]) / 1024


def imports(ctx: Context) -> list[Result]:
    """Each import's PSS in a fresh interpreter, in turns, against a bare one."""
    runs: dict[str, list[float]] = {k: [] for k in IMPORTS}
    for _ in range(ctx.pick(2, 5)):
        for name, code in IMPORTS.items():
            runs[name].append(import_pss(code))
    bare = runs.pop("bare Python")
    return [Result(f"memory.imports.{i}", f"PSS of a fresh Python after importing {name}", "MiB", v,
                   reference=bare, reference_title="bare Python", notes="the difference is the import's cost")
            for i, (name, v) in enumerate(runs.items())]


def run(ctx: Context) -> list[Result]:
    """The 10-view breakdown per role, the flag A/Bs (in turns), and the imports."""
    rounds = ctx.pick(1, 2)
    data: dict[str, list[dict[str, Any]]] = {k: [] for k in VARIANTS}
    for r in range(rounds):
        order = list(VARIANTS) if r % 2 == 0 else list(reversed(VARIANTS))
        for name in order:
            ctx.log(f"memory_parts: round {r + 1}/{rounds}: desktop, 10 views, {name}")
            data[name].append(desktop_10(VARIANTS[name]))
    base = data["unchanged"]
    out = []
    roles = sorted({role for m in base for role in m["10"]["by_role"]})
    for role in roles:
        out.append(Result(f"memory.parts.{role.split()[0]}", f"Desktop, 10 views: PSS of {role}", "MiB",
                          [m["10"]["by_role"].get(role, {}).get("pss_mib", 0.0) for m in base],
                          extra={"processes": [m["10"]["by_role"].get(role, {}).get("processes", 0) for m in base],
                                 "idle_pss_mib": [m["idle"]["by_role"].get(role, {}).get("pss_mib", 0.0) for m in base]}))
    for name, runs in data.items():
        if name == "unchanged":
            continue
        out.append(Result(f"memory.cut.{name}", f"Desktop, 10 views, whole tree with --{name}", "MiB",
                          [m["10"]["pss_mib"] for m in runs], reference=[m["10"]["pss_mib"] for m in base],
                          reference_title="the same app unchanged, runs in turns",
                          extra={"uss_mib": [m["10"]["uss_mib"] for m in runs],
                                 "reference_uss_mib": [m["10"]["uss_mib"] for m in base],
                                 "by_role": runs[-1]["10"]["by_role"], "live_parked": [
                                     (m["10"].get("live"), m["10"].get("parked")) for m in runs]}))
    return out + imports(ctx)
