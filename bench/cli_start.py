"""Command-line start-up (issue 31, target 4): ``moka tools``, ``moka call`` and ``moka check`` against a bare client.

Each command is spawned and timed from spawn to exit against the demo server. Moka starts its
``moka demo-server`` entry as this interpreter's ``-m moka_shell demo-server``
(builtins/transports.resolve_command), and the reference, bench/bare_client.py, starts exactly
that: the ``mcp`` SDK's ``Client`` over stdio, listing the tools or making the same call and
printing about what Moka prints. Moka and the bare client take turns, the order flipped each
round. ``moka check`` is timed on a tool with no UI (CLI, core, server and listing, no engine; in
the full run), against the bare listing.

Where the time goes comes from the same runs: their CPU time, Moka's inspector log (the server
connecting and stopped) and the bare client's own stamps, which split each run into the start
(spawn → the client begins to connect), the session (server start, handshake, answer, server
stopped) and the exit. The full run adds ``python -X importtime`` of both listings: what only
Moka imports, by self time.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.context import Context
from bench.env import BENCH, MOKA, PYTHON, Workspace, demo, workspace
from bench.stats import Result, Target

BARE = str(BENCH / "bare_client.py")
DEMO = [PYTHON, "-m", "moka_shell", "demo-server"]  # what the config's "moka demo-server" starts
ROLL = json.dumps({"count": 2, "sides": 6})
TARGET = Target(1.15, "≤ 1.15x a bare mcp client (issue 31.4)")
BARE_TITLE = "a bare mcp Client, same server, same {}"


@dataclass
class Run:
    """One command: ms from spawn to exit, stamps in ms after spawn, what it printed, and its CPU ms."""

    wall: float
    stamps: dict[str, Any] = field(default_factory=dict)
    out: str = ""
    cpu: float = 0.0


def timed(cmd: list[str], env: dict[str, str], ok: tuple[int, ...] = (0,)) -> tuple[float, Run]:
    """(epoch seconds at spawn, the run) of one command; raises on an unexpected exit code.

    The CPU time is user + system of the command and the children it waited for (the server among
    them): the work done, which the machine's load stretches far less than the wall time.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    spawned = time.time()
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    wall = (time.perf_counter() - t0) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in ok:
        raise RuntimeError(f"{' '.join(cmd[1:4])} exited with {p.returncode}: {p.stderr.strip()[-400:]}")
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return spawned, Run(wall, out=p.stdout, cpu=round(cpu, 1))


def stamps_of(events: list[dict[str, Any]], spawned: float) -> dict[str, Any]:
    """ms after spawn of the server connecting, ready (first) and stopped (last), and per view (in order): created,
    its last event before Moka tore it down (the settle runs from there), the teardown sent, and closed."""
    out: dict[str, Any] = {}
    views: dict[str, dict[str, float]] = {}
    for e in events:
        at = round((e["time"] - spawned) * 1000, 1)
        method = e.get("method")
        if method in ("status/connecting", "status/ready"):
            out.setdefault(method.split("/")[1], at)
        elif method == "status/stopped":
            out["stopped"] = at
        if e.get("view"):
            v = views.setdefault(e["view"], {})
            if method in ("view/created", "view/closed"):
                v[method.split("/")[1]] = at
            elif method == "ui/resource-teardown":
                v.setdefault("teardown", at)
            if "teardown" not in v:
                v["last"] = at
    out["views"] = list(views.values())
    return out


def moka(ws: Workspace, args: list[str], ok: tuple[int, ...] = (0,)) -> Run:
    """``moka ARGS`` in the workspace, with its inspector log read afterwards (it starts empty)."""
    folder = ws.paths.inspector_dir
    shutil.rmtree(folder, ignore_errors=True)
    spawned, run = timed([MOKA, *args], ws.env(), ok)
    events = [json.loads(line) for f in sorted(folder.glob("events-*.jsonl"))
              for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]
    run.stamps = stamps_of(events, spawned)
    return run


def forget_hints(ws: Workspace) -> Workspace:
    """Remove what ``moka check`` remembers of the servers it checked; returns the workspace."""
    (ws.paths.data_dir / "check-hints.json").unlink(missing_ok=True)
    return ws


def bare(env: dict[str, str], args: list[str]) -> Run:
    """bench/bare_client.py ARGS against the demo server, with its own stamps."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "stamps.json"
        spawned, run = timed([PYTHON, BARE, *args, *DEMO], {**env, "BENCH_STAMPS": str(path)})
        run.stamps = {k: round((v - spawned) * 1000, 1) for k, v in json.loads(path.read_text()).items()}
    return run


def phases(run: Run) -> dict[str, float]:
    """start (spawn → connecting), session (→ server stopped, connection closed) and exit, in ms."""
    s = run.stamps
    begin, end = (s["connecting"], s["stopped"]) if "connecting" in s else (s["imported"], s["closed"])
    return {"start": begin, "session": end - begin, "exit": run.wall - end}


def median_phases(runs: list[Run]) -> dict[str, float]:
    """Each phase's median over the runs."""
    each = [phases(r) for r in runs]
    return {k: round(statistics.median(p[k] for p in each), 1) for k in each[0]}


def paired(mine: list[Run], bare_runs: list[Run]) -> float:
    """The median over the rounds of Moka's time over the bare client's in the same round (steadier under drifting load)."""
    return round(statistics.median(m.wall / b.wall for m, b in zip(mine, bare_runs)), 2)


def med_cpu(runs: list[Run]) -> float:
    """The median CPU ms of the runs."""
    return round(statistics.median(r.cpu for r in runs), 1)


def import_times(cmd: list[str], env: dict[str, str]) -> dict[str, float]:
    """Self time (ms) of every module one run of ``cmd`` imports (``python -X importtime``)."""
    p = subprocess.run([PYTHON, "-X", "importtime", *cmd], env=env, capture_output=True, text=True, timeout=180)
    return self_times(p.stderr)


def self_times(stderr: str) -> dict[str, float]:
    """Module → self time in ms, from ``-X importtime`` lines (other lines are passed over)."""
    out: dict[str, float] = {}
    for line in stderr.splitlines():
        head, _, rest = line.partition("|")
        name = rest.partition("|")[2].strip()
        if head.startswith("import time:") and head.split(":")[1].strip().isdigit():
            out[name] = int(head.split(":")[1]) / 1000
    return out


def import_summary(mine: list[dict[str, float]], bare_runs: list[dict[str, float]]) -> dict[str, Any]:
    """Median self time of all imports, and of those only Moka's run makes, grouped by package."""
    def med(runs: list[dict[str, float]]) -> dict[str, float]:
        return {k: statistics.median(r.get(k, 0.0) for r in runs) for k in set().union(*runs)}

    m, b = med(mine), med(bare_runs)
    only = {k: v for k, v in m.items() if k not in b}
    groups: dict[str, float] = {}
    for name, ms in only.items():
        parts = name.split(".")
        key = ".".join(parts[:3]) if parts[0] == "moka_shell" else parts[0]
        groups[key] = groups.get(key, 0.0) + ms
    top = sorted(groups.items(), key=lambda kv: -kv[1])[:12]
    return {"moka_ms": round(sum(m.values())), "bare_ms": round(sum(b.values())),
            "only_moka_ms": round(sum(only.values())), "only_moka_modules": len(only),
            "only_moka_by_package_ms": {k: round(v, 1) for k, v in top}}


def run(ctx: Context) -> list[Result]:
    """Rounds of every command and its bare reference in turns (quick: one round, no check)."""
    repeat = ctx.pick(1, 11)
    with workspace({"moka-demo": demo()}) as ws:
        env = ws.env()
        arms = {"moka tools": lambda: moka(ws, ["tools", "moka-demo"]), "bare tools": lambda: bare(env, ["tools"]),
                "moka call": lambda: moka(ws, ["call", "moka-demo", "roll_dice", ROLL]),
                "bare call": lambda: bare(env, ["call", "roll_dice", ROLL])}
        if ctx.full:
            check = ["check", "moka-demo", "--tool", "summarize_rolls", "--json"]
            # A tool with no UI: nothing to render. The check remembers which tools have a UI
            # (shells/check/launch_hint.py); "first" forgets that each time, as a first check of a server.
            arms["moka check"] = lambda: moka(ws, check, ok=(5,))
            arms["moka check first"] = lambda: moka(forget_hints(ws), check, ok=(5,))
        ctx.log(f"cli_start: {repeat} round(s) of {', '.join(arms)}")
        if ctx.full:
            for arm in arms.values():  # warm-up, not counted
                arm()
        runs: dict[str, list[Run]] = {k: [] for k in arms}
        loads = []
        for i in range(repeat):
            loads.append(round(os.getloadavg()[0], 2))
            for name in (list(arms) if i % 2 == 0 else list(arms)[::-1]):
                runs[name].append(arms[name]())
        imports: dict[str, Any] = {}
        if ctx.full:
            tools_cmd = [MOKA, "tools", "moka-demo"]
            mine = [import_times(tools_cmd, env) for _ in range(3)]
            imports = import_summary(mine, [import_times([BARE, "tools", *DEMO], env) for _ in range(3)])
    common: dict[str, Any] = {"load_average": [min(loads), max(loads)]}
    if imports:
        common["imports_of_tools_ms"] = imports
    out = []
    for key, title, ref in (("tools", "CLI start-up: `moka tools moka-demo`, spawn → exit", "listing"),
                            ("call", "CLI start-up: `moka call moka-demo roll_dice`, spawn → exit", "call"),
                            ("check", "CLI start-up: `moka check moka-demo` on a tool with no UI, spawn → exit",
                             "listing"),
                            ("check first", "CLI start-up: the same check, the server never checked before "
                             "(the browser launched early, for nothing), spawn → exit", "listing")):
        if f"moka {key}" not in runs:
            continue
        reference = runs["bare tools" if ref == "listing" else "bare call"]
        out.append(Result(f"cli.{key.replace(' ', '_')}", title, "ms", [r.wall for r in runs[f"moka {key}"]],
                          reference=[r.wall for r in reference], reference_title=BARE_TITLE.format(ref),
                          target=TARGET, target_on="ratio",
                          notes="interleaved, order flipped each round; phases from Moka's inspector log and the "
                                "bare client's stamps",
                          extra={"paired_ratio_median": paired(runs[f"moka {key}"], reference),
                                 "cpu_ms": {"moka": med_cpu(runs[f"moka {key}"]), "bare": med_cpu(reference)},
                                 "phases_ms": {"moka": median_phases(runs[f"moka {key}"]),
                                               "bare": median_phases(reference)}, **common}))
    return out
