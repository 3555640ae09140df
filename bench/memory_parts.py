"""Where the desktop app's megabytes are, and cuts tried against them in the same run.

Per role (bench/procs.py's ``role``): the app's own process (the Python core and Qt's browser
process live in one process), QtWebEngine's renderers and helpers, and the demo server, with
10 views in one chat (bench/memory.py's driving). Then Chromium flags that should trade nothing
visible, each an A/B against the unchanged app, runs taking turns. And what the Python side's
imports cost by themselves (a fresh interpreter importing one thing, its PSS against a bare one).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from typing import Any

from bench.context import Context
from bench.env import PYTHON, demo, workspace
from bench.harness import run_desktop_probe
from bench.stats import Result



@dataclass(frozen=True)
class Variant:
    """One way to run the desktop app: extra Chromium flags, extra environment, the demo server's arguments."""

    flags: str = ""
    env: dict[str, str] = field(default_factory=dict)
    demo_args: tuple[str, ...] = ("demo-server",)


# Last session's flags (--renderer-process-limit=1, --num-raster-threads=1: no change; --disable-gpu:
# -37 MiB but trades WebGL) are not run again; §11 keeps their numbers.
VARIANTS = {
    "unchanged": Variant(),
    # The demo server on the mcp SDK (what every Moka ran before the stdio mode).
    "demo-server on the SDK": Variant(demo_args=("demo-server", "--sdk")),
    # glibc: at most 2 malloc arenas per process (threads otherwise get up to 8 per core).
    "MALLOC_ARENA_MAX=2": Variant(env={"MALLOC_ARENA_MAX": "2"}),
    # malloc_trim(0) in the app process before each reading (bench/memory.py).
    "malloc_trim": Variant(env={"MOKA_BENCH_MALLOC_TRIM": "1"}),
    "enable-low-end-device-mode": Variant(flags="--enable-low-end-device-mode"),
}
IMPORTS = {"bare Python": "", "mcp (client)": "import mcp", "Moka's core (moka_shell.core.app)":
           "import moka_shell.core.app", "pywebview + Qt WebEngine": "import webview, PyQt6.QtWebEngineWidgets"}
PSS = ("import pathlib; print(sum(int(l.split()[1]) for l in pathlib.Path('/proc/self/smaps_rollup')"
       ".read_text().splitlines() if l.startswith('Pss:')))")


def desktop_10(variant: Variant) -> dict[str, Any]:
    """The desktop app, idle and with 10 views, run as ``variant`` says."""
    server = {**demo(), "args": list(variant.demo_args)}
    with workspace({"moka-demo": server}, backend="parrot") as ws:
        report = run_desktop_probe({**ws.env(), **variant.env}, "memory", {"steps": [10]}, timeout=900,
                                   flags=variant.flags)
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


def chosen() -> dict[str, Variant]:
    """VARIANTS, or only those named in MOKA_BENCH_VARIANTS (comma-separated; "unchanged" always runs)."""
    names = [n.strip() for n in os.environ.get("MOKA_BENCH_VARIANTS", "").split(",") if n.strip()]
    if not names:
        return dict(VARIANTS)
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        raise SystemExit(f"MOKA_BENCH_VARIANTS: unknown {unknown}; choose from {sorted(VARIANTS)}")
    return {n: VARIANTS[n] for n in ["unchanged", *names] if n in VARIANTS}


def run(ctx: Context) -> list[Result]:
    """The 10-view breakdown per role, the A/Bs (in turns, ABBA), and the imports."""
    rounds = int(os.environ.get("MOKA_BENCH_ROUNDS", "0")) or ctx.pick(1, 2)
    variants = chosen()
    data: dict[str, list[dict[str, Any]]] = {k: [] for k in variants}
    for r in range(rounds):
        order = list(variants) if r % 2 == 0 else list(reversed(variants))
        for name in order:
            ctx.log(f"memory_parts: round {r + 1}/{rounds}: desktop, 10 views, {name} (load {os.getloadavg()[0]:.1f})")
            data[name].append(desktop_10(variants[name]))
    base = data["unchanged"]
    out = []
    roles = sorted({role for m in base for role in m["10"]["by_role"]})
    for role in roles:
        out.append(Result(f"memory.parts.{role.split()[0]}", f"Desktop, 10 views: PSS of {role}", "MiB",
                          [m["10"]["by_role"].get(role, {}).get("pss_mib", 0.0) for m in base],
                          extra={"processes": [m["10"]["by_role"].get(role, {}).get("processes", 0) for m in base],
                                 "idle_pss_mib": [m["idle"]["by_role"].get(role, {}).get("pss_mib", 0.0) for m in base],
                                 "gl": [bool(m["10"].get("gl")) for m in base],
                                 "app_top": [m["10"].get("app_top") for m in base],
                                 "renderer_top": [m["10"].get("renderer_top") for m in base]}))
    for name, runs in data.items():
        if name == "unchanged":
            continue
        out.append(Result(f"memory.cut.{name}", f"Desktop, 10 views, whole tree with {name}", "MiB",
                          [m["10"]["pss_mib"] for m in runs], reference=[m["10"]["pss_mib"] for m in base],
                          reference_title="the same app unchanged, runs in turns",
                          extra={"uss_mib": [m["10"]["uss_mib"] for m in runs],
                                 "reference_uss_mib": [m["10"]["uss_mib"] for m in base],
                                 "idle_pss_mib": [m["idle"]["pss_mib"] for m in runs],
                                 "reference_idle_pss_mib": [m["idle"]["pss_mib"] for m in base],
                                 "reference_by_role": base[-1]["10"]["by_role"],
                                 "gl": [bool(m["10"].get("gl")) for m in runs],
                                 "others_mapping_webengine": [m["10"].get("others_mapping_webengine") for m in runs],
                                 "reference_others_mapping_webengine": [
                                     m["10"].get("others_mapping_webengine") for m in base],
                                 "reference_gl": [bool(m["10"].get("gl")) for m in base],
                                 "by_role": runs[-1]["10"]["by_role"], "live_parked": [
                                     (m["10"].get("live"), m["10"].get("parked")) for m in runs]}))
    return out + imports(ctx)
