"""``python -m bench``: measure Moka, print a table, write bench/results/latest-<mode>.json.

    python -m bench --quick          every suite but memory_parts, few repeats (about 3-4 minutes; the soak 30 s)
    python -m bench --full           every suite, more repeats, 100 views, the 5-minute soak (about 15-17 minutes rested)
    python -m bench --only render    some suites (comma-separated); writes only with --out
    python -m bench --report         regenerate the tables in docs/performance.md from the JSON

Exit status: 0 when every measurement ran (missed targets are reported, not failures),
1 when a suite crashed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import appbridge_ref, bounds, check_cost, cli_start, memory, memory_floor, memory_gtk, memory_parts, reload, render, scale, soak, startup, startup_x11, streaming, view_roundtrip
from bench.context import Context
from bench.env import BENCH, machine
from bench.report import write_report
from bench.stats import Result
from bench.table import errors, table

SUITES: dict[str, Callable[[Context], list[Result]]] = {
    "startup": startup.run, "startup_x11": startup_x11.run, "render": render.run,
    "appbridge": appbridge_ref.run, "streaming": streaming.run, "bridge": view_roundtrip.run, "memory": memory.run,
    "memory_floor": memory_floor.run, "memory_parts": memory_parts.run, "memory_gtk": memory_gtk.run, "scale": scale.run,
    "bounds": bounds.run, "reload": reload.run, "cli_start": cli_start.run, "check_cost": check_cost.run, "soak": soak.run,
}
FULL_ONLY = {"memory_parts", "memory_gtk", "memory_floor"}  # minutes of driving the desktop app: --full or --only


def run(ctx: Context, names: list[str]) -> dict[str, Any]:
    """Run the suites; a crash in one is recorded and the others still run."""
    started = time.monotonic()
    doc: dict[str, Any] = {"mode": "full" if ctx.full else "quick",
                           "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                           "machine": machine(), "suites": names, "results": [], "errors": []}
    for name in names:
        try:
            doc["results"] += [r.to_json() for r in SUITES[name](ctx)]
        except Exception:
            ctx.log(f"{name} crashed")
            doc["errors"].append({"suite": name, "error": traceback.format_exc()})
    doc["seconds"] = round(time.monotonic() - started, 1)
    return doc


def main(argv: list[str] | None = None) -> int:
    """Parse, run, print, write."""
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="the quick run (the default)")
    mode.add_argument("--full", action="store_true", help="the full run")
    mode.add_argument("--report", action="store_true", help="only regenerate docs/performance.md's tables")
    p.add_argument("--only", help=f"comma-separated suites out of {', '.join(SUITES)}")
    p.add_argument("--out", type=Path, help="write the JSON here instead of bench/results/latest-<mode>.json")
    args = p.parse_args(argv)
    if args.report:
        print(f"wrote {write_report()}")
        return 0
    names = args.only.split(",") if args.only else [n for n in SUITES if args.full or n not in FULL_ONLY]
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        p.error(f"unknown suite(s): {', '.join(unknown)}")
    ctx = Context(full=args.full)
    doc = run(ctx, names)
    print(table(doc["results"]))
    if doc["errors"]:
        print(errors(doc["errors"]))
    out = args.out or (None if args.only else BENCH / "results" / f"latest-{doc['mode']}.json")
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {out} ({doc['seconds']} s)")
    return 1 if doc["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
