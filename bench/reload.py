"""Live reload (``moka dev``): an edit of the server's script → its open view re-rendered with its result.

A real server script (tests/servers/dev_app_server.py) is copied into a folder of its own and
edited there while the reloader ``moka dev`` starts watches it; the page is a plain Chromium on
Moka's Tool runner (no automation attached; times come from the core). Each edit changes the
view's headline text. The figure the issue sets a target on (≤ 1 s) starts when the restarted
server is ready (its start-up is the author's code and Python's, not Moka's) and ends when the
view's new frame has been sent its result again. The reference, measured in the same run and
interleaved with the edits, is a fresh view of the same tool: tool call → result in the view.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from moka_shell.core.dev.reload import DevReload

from bench.context import Context
from bench.env import ROOT, workspace
from bench.harness import Core, core_with_page, render_once
from bench.stats import Result, Target

SCRIPT = ROOT / "tests" / "servers" / "dev_app_server.py"
HEADLINE = "Hello from version one"
TARGET = Target(1000, "under 1 s after the server is ready (issue 30.5)")


def _reload_once(core: Core, dev: DevReload, script: Path, view_id: str, text: str, timeout: float = 60) -> dict[str, float]:
    """Edit the script's headline to ``text``; milliseconds of each step, from the edit."""
    view = core.app.view_host.views[view_id]
    old_key, count = view.key, dev.reloads
    source = script.read_text()
    edited = time.perf_counter()
    script.write_text(source.replace(HEADLINE, text, 1) if HEADLINE in source else _swap(source, text))
    deadline = time.monotonic() + timeout
    while not (dev.reloads > count and view.key != old_key and "result_sent" in view.timings):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the view was not re-rendered within {timeout:g} s: {dev.last}")
        time.sleep(0.002)
    s, t = dev.stamps, view.timings
    ms = {"detected": s["started"] - edited, "ready": s["ready"] - edited, "announced": s["announced"] - edited,
          "initialized": t["initialized"] - edited, "rendered": t["result_sent"] - edited}
    out = {k: v * 1000 for k, v in ms.items()}
    out["after_ready"] = out["rendered"] - out["ready"]
    return out


def _swap(source: str, text: str) -> str:
    """The headline line with ``text`` in it (the edit before replaced the original one)."""
    head, _, rest = source.partition('HEADLINE = "')
    return head + 'HEADLINE = "' + text + '"' + rest.split('"', 1)[1]


def run(ctx: Context) -> list[Result]:
    """One warm-up edit, then ``repeat`` rounds of (a fresh view of the tool, an edit of the script)."""
    repeat = ctx.pick(2, 8)
    folder = Path(tempfile.mkdtemp(prefix="moka-bench-dev-"))
    try:
        script = folder / "server.py"
        shutil.copy(SCRIPT, script)
        with workspace({"dev": {"command": sys.executable, "args": [str(script)]}}) as ws, \
                core_with_page(ws.paths) as (core, _):
            dev = DevReload(core.app, "dev", [folder])
            core.run(dev.start())
            try:
                view_id = render_once(core, "dev", "greet", {}, keep=True)["view"]
                ctx.log(f"reload: 1 warm-up + {repeat} edits of a server script, each against a fresh view")
                _reload_once(core, dev, script, view_id, "warm-up")
                fresh, edits = [], []
                for i in range(repeat):
                    fresh.append(render_once(core, "dev", "greet", {})["result_sent"])
                    edits.append(_reload_once(core, dev, script, view_id, f"edit {i}"))
            finally:
                core.run(dev.stop())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    steps = {k: round(statistics.median(e[k] for e in edits), 1) for k in edits[0]}
    return [
        Result("reload.after_ready", "Live reload: server ready → view re-rendered with its result (moka dev)", "ms",
               [e["after_ready"] for e in edits], reference=fresh,
               reference_title="a fresh view of the same tool: tool call → result in the view", target=TARGET,
               notes="the same view card; resource read again, new frame, handshake, input and result replayed",
               extra={"median_ms_from_edit": steps}),
        Result("reload.edit", "Live reload: edit saved → view re-rendered (moka dev; includes the server's restart)",
               "ms", [e["rendered"] for e in edits],
               notes=f"polling watcher; the server (Python + mcp) restarts in about {steps['ready'] - steps['detected']:.0f} ms "
                     "of this"),
    ]
