"""Desktop start-up A/B in turns: two or more source trees (and the bare window), one Xvfb.

    python -m bench.startup_ab ROUNDS NAME@TREE [NAME@TREE ...]

Each TREE is a checkout of Moka (for example ``git worktree add --detach /tmp/old HEAD~3``); its
``src`` goes first on PYTHONPATH, so every tree runs with this venv. The order of the trees flips
each round, a bare pywebview window closes each round, and the demo server runs the FIRST tree's
code in every arm, so a change to the demo server is not mistaken for one to the start-up. Prints
each round (mapped / interactive ms after spawn, ``x`` for a start that failed) with the load
average, then the medians. Used for docs/performance.md §13.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from pathlib import Path

from bench.env import PYTHON, workspace
from bench import startup_x11
from moka_shell.testing.xvfb import xvfb_display

Sample = tuple[float, float, float | None]  # mapped, interactive, first server usable (Moka only)


def one_start(display: str, env: dict[str, str], tree: str, cmd: list[str], title: str, out: Path) -> Sample | None:
    """Spawn ``cmd`` from ``tree`` (its ``src`` first on PYTHONPATH); (mapped, interactive, server) ms, None if it failed."""
    got = startup_x11.one_start(display, {**env, "PYTHONPATH": f"{tree}/src:{tree}"}, cmd, title, out, cwd=tree)
    return (got["mapped"], got["interactive"], got.get("server")) if got else None


def main() -> int:
    """Run the rounds and print them."""
    rounds = int(sys.argv[1])
    trees = dict(arg.split("@", 1) for arg in sys.argv[2:])
    first = next(iter(trees.values()))
    demo = {"command": PYTHON, "args": ["-m", "moka_shell", "demo-server"], "env": {"PYTHONPATH": f"{first}/src"}}
    results: dict[str, list[Sample]] = {name: [] for name in [*trees, "bare"]}
    loads: list[float] = []
    with workspace({"moka-demo": demo}) as ws, xvfb_display() as display, tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        env = ws.env()
        probe = [PYTHON, "-m", "bench.desktop_probe", "start", str(out)]
        for tree in trees.values():  # the first start of each tree warms the caches: not counted
            one_start(display, env, tree, probe, "Moka", out)
        root = str(Path(__file__).resolve().parent.parent)
        for n in range(rounds):
            loads.append(os.getloadavg()[0])
            order = list(trees) if n % 2 == 0 else list(trees)[::-1]
            row: dict[str, Sample | None] = {name: one_start(display, env, trees[name], probe, "Moka", out) for name in order}
            row["bare"] = one_start(display, env, root, [PYTHON, "-m", "bench.bare_webview", str(out)], "bare", out)
            for name, sample in row.items():
                if sample is not None:
                    results[name].append(sample)
            cells = " ".join(f"{k}=" + (f"{v[0]:.0f}/{v[1]:.0f}" if v else "x") for k, v in row.items())
            print(f"round {n}: load {loads[-1]:.2f} {cells}", flush=True)
    print(f"load average over the rounds: {min(loads):.2f}-{max(loads):.2f}")
    for name, samples in results.items():
        if samples:
            servers = [s[2] for s in samples if s[2] is not None]
            usable = f", first server usable median {statistics.median(servers):.0f} ms" if servers else ""
            print(f"{name:12s} n={len(samples)} mapped median {statistics.median(s[0] for s in samples):.0f} ms, "
                  f"interactive median {statistics.median(s[1] for s in samples):.0f} ms{usable}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
