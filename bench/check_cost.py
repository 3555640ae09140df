"""``moka check``'s cost per view against the settle it waits by design (issue 30, item 5).

``moka check SERVER --json --settle 0.3`` (Chromium through Playwright, the default engine) is
spawned and timed from spawn to exit, beside ``moka tools SERVER`` in the same round: the same CLI,
core, server start and listing, with no view. The figure is each view's share of the difference,
(check − tools) / views; its reference is the settle every view waits by design, so the difference
column is check's own cost per view beyond the settle, which the target is on (≤ 1 s). The two
commands take turns, the order flipped each round. Where the time goes comes from the same runs'
inspector log (bench/cli_start.py reads it): the engine's start (server ready → first view
created); each view from created to its last event, the settle, then the checks after it (the DOM
probe, the pixels) until its teardown, and closed; the engine's close; the exit.
Quick: moka-demo once; full: also two official example apps, five rounds.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Callable
from typing import Any

from bench.cli_start import Run, med_cpu, moka
from bench.context import Context
from bench.env import demo, npm, workspace
from bench.stats import Result, Target

SETTLE = 0.3
SERVERS: dict[str, Callable[[], dict[str, Any]]] = {
    "moka-demo": demo, "basic-vanillajs": lambda: npm("mcp-server-basic-vanillajs"),
    "basic-react": lambda: npm("mcp-server-basic-react")}
TARGET = Target(1000, "check's own cost ≤ 1 s per view beyond the settle (issue 30.5)")


def check(ws: Any, server: str) -> Run:
    """One ``moka check SERVER --json --settle 0.3``."""
    return moka(ws, ["check", server, "--json", "--settle", str(SETTLE)])


def views_of(run: Run) -> list[dict[str, Any]]:
    """The views a check's JSON report reports on."""
    return list(json.loads(run.out)["views"])


def where(check_runs: list[Run], tools_runs: list[Run]) -> dict[str, Any]:
    """Median ms of each part of a check run, and of the listing beside it."""
    def med(values: list[float]) -> float:
        return round(statistics.median(values), 1)

    c = [r.stamps for r in check_runs]
    t = [r.stamps for r in tools_runs]
    views = [v for s in c for v in s["views"]]
    return {
        "check": {"start": med([s["connecting"] for s in c]), "server": med([s["ready"] - s["connecting"] for s in c]),
                  "engine_start": med([s["views"][0]["created"] - s["ready"] for s in c]),
                  "view_created_to_closed": med([v["closed"] - v["created"] for v in views]),
                  "view_created_to_last_event": med([v["last"] - v["created"] for v in views]), "settle": SETTLE * 1000,
                  "view_settled_to_teardown": med([v["teardown"] - v["last"] - SETTLE * 1000 for v in views]),
                  "view_teardown_to_closed": med([v["closed"] - v["teardown"] for v in views]),
                  "engine_close": med([s["stopped"] - s["views"][-1]["closed"] for s in c]),
                  "exit": med([r.wall - r.stamps["stopped"] for r in check_runs]), "wall": med([r.wall for r in check_runs])},
        "view_timings": {k: med(got) for k in ("mounted", "initialized", "result_sent")
                         if (got := [v["timings_ms"][k] for r in check_runs for v in views_of(r) if k in v["timings_ms"]])},
        "tools": {"start": med([s["connecting"] for s in t]), "server": med([s["ready"] - s["connecting"] for s in t]),
                  "after_ready": med([s["stopped"] - s["ready"] for s in t]),
                  "exit": med([r.wall - r.stamps["stopped"] for r in tools_runs]), "wall": med([r.wall for r in tools_runs])},
    }


def run(ctx: Context) -> list[Result]:
    """Rounds of (moka tools, moka check) per server, the order flipped each round."""
    names = ["moka-demo", *ctx.pick([], ["basic-vanillajs", "basic-react"])]
    repeat = ctx.pick(1, 5)
    runs: dict[str, dict[str, list[Run]]] = {n: {"tools": [], "check": []} for n in names}
    loads = []
    with workspace({n: SERVERS[n]() for n in names}) as ws:
        ctx.log(f"check_cost: {repeat} round(s) of moka tools and moka check --settle {SETTLE} on {', '.join(names)}")
        if ctx.full:
            check(ws, "moka-demo")  # warm-up: Playwright and Chromium into the page cache; not counted
        for i in range(repeat):
            loads.append(round(os.getloadavg()[0], 2))
            for name in names:
                for kind in (("tools", "check") if i % 2 == 0 else ("check", "tools")):
                    runs[name][kind].append(check(ws, name) if kind == "check" else moka(ws, ["tools", name]))
    out = []
    for name in names:
        checks, tools = runs[name]["check"], runs[name]["tools"]
        count = len(views_of(checks[0]))
        out.append(Result(
            f"check.per_view.{name}", f"`moka check {name}` per view ({count}), beyond `moka tools {name}`", "ms",
            [(c.wall - t.wall) / count for c, t in zip(checks, tools)],
            reference=[SETTLE * 1000] * len(checks), reference_title=f"the settle each view waits ({SETTLE:g} s)",
            target=TARGET, target_on="difference",
            notes="(check − tools in the same round) / views; Chromium (Playwright), one profile, no screenshots",
            extra={"views": count, "where_ms": where(checks, tools),
                   "cpu_ms": {"check": med_cpu(checks), "tools": med_cpu(tools)}, "load_average": [min(loads), max(loads)]}))
    return out
