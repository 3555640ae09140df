"""``python -m bench.soak_debug [SECONDS] [--ring EVENTS]``: the soak with Moka's core in this process,
and what its Python heap grew by after warm-up.

The same load as ``bench/soak.py`` (four looping views, a chat turn every 10 s, a server exiting
every 62 s), but the core runs on a thread here (as the desktop shell runs it) under ``tracemalloc``:
a snapshot at the midpoint and one at the end, after a full collection each, and their difference
by the line that allocated, and by the call path through Moka's own code. Beside it, the Inspector
ring's events and characters at both points, so its share of the growth is read off directly.
``--ring`` lowers the ring's event cap for the run, to see the rest with the ring full.
tracemalloc slows the core down (about 2x), so the rates here are lower than the published soak's.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

from moka_shell.paths import Paths
from moka_shell.testing.fake_openai import FakeOpenAIServer

from bench.context import Context
from bench.env import workspace
from bench.harness import Core
from bench.soak import Probe, drive, soak_config

OURS = ("moka_shell", "mcp", "starlette", "uvicorn", "anyio", "websockets", "wsproto", "httpx", "httpcore", "pydantic")


class InProcess:
    """Moka's core on a thread of this process, its page served as in browser mode."""

    def __init__(self, paths: Paths, ring: int | None = None) -> None:
        self.core = Core.start(paths)
        if ring is not None:
            self.core.app.inspector.capacity = ring
        self.core.wait_servers()
        self.pid = os.getpid()
        self.url = self.core.web.url

    def rpc(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """A bridge method's result, called on the core's loop."""
        reply = self.core.run(self.core.web.bridge.handle({"id": 1, "method": method, "params": params or {}}))
        if reply is None or "error" in reply:
            raise RuntimeError(f"{method}: {reply and reply['error']}")
        return reply["result"]


class Heap(Probe):
    """tracemalloc snapshots at the midpoint and the end, with the ring's size at each."""

    def __init__(self, moka: InProcess, frames: int = 12) -> None:
        self.moka = moka
        self.frames = frames
        self.snaps: list[tracemalloc.Snapshot] = []
        self.rings: list[dict[str, int]] = []

    def start(self) -> None:
        """Trace from here (earlier, the page's first load under tracemalloc took minutes)."""
        tracemalloc.start(self.frames)

    def _take(self) -> None:
        gc.collect()
        ring = self.moka.rpc("inspector.page", {"limit": 1})
        self.rings.append({"events": ring["total"], "chars": ring["size"]})
        self.snaps.append(tracemalloc.take_snapshot())

    def mid(self) -> None:
        """The first snapshot."""
        self._take()

    def end(self) -> None:
        """The second snapshot."""
        self._take()


def _where(frames: tracemalloc.Traceback, count: int = 5) -> str:
    """The innermost frames, innermost first: the first one wherever it is, then those in the server-side packages."""
    inner = list(reversed(frames))
    picked = inner[:1] + [f for f in inner[1:] if any(f"/{p}/" in f.filename for p in OURS)][:count - 1]
    return " ← ".join(_short(f) for f in picked)


def _short(f: tracemalloc.Frame) -> str:
    name = f.filename.split("site-packages/")[-1].split("src/")[-1].split("lib/python3.11/")[-1]
    return f"{name}:{f.lineno}"


def report(heap: Heap, top: int = 20) -> dict[str, Any]:
    """The heap's growth from the midpoint to the end: in all, by line, by call path; and the ring's."""
    before, after = heap.snaps
    by_line = [s for s in after.compare_to(before, "lineno") if s.size_diff > 0][:top]
    by_path = [s for s in after.compare_to(before, "traceback") if s.size_diff > 0][:top]
    grew = sum(s.size_diff for s in after.compare_to(before, "filename"))
    return {"grew_bytes": grew, "ring": heap.rings,
            "by_line": [{"kib": round(s.size_diff / 1024, 1), "blocks": s.count_diff,
                         "at": _short(s.traceback[0])}
                        for s in by_line],
            "by_path": [{"kib": round(s.size_diff / 1024, 1), "blocks": s.count_diff, "path": _where(s.traceback)}
                        for s in by_path]}


def main(argv: list[str] | None = None) -> int:
    """Run, print the report, write it as JSON (in the temp folder unless --out says)."""
    p = argparse.ArgumentParser(prog="python -m bench.soak_debug", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("seconds", nargs="?", type=float, default=120.0)
    p.add_argument("--ring", type=int, help="the Inspector ring's event cap for this run (default Moka's)")
    p.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "moka-soak-debug.json")
    args = p.parse_args(argv)
    ctx = Context(full=True)
    with FakeOpenAIServer() as llm, workspace({}) as ws:
        ws.paths.config_file.write_text(json.dumps(soak_config(llm.base_url, 62.0)), encoding="utf-8")
        moka = InProcess(ws.paths, args.ring)
        heap = Heap(moka)
        try:
            run = drive(ctx, moka, llm, args.seconds, heap)
        finally:
            moka.core.stop()
    out = report(heap)
    out["calls"] = sum(v["calls"] for v in run.views)
    ring = out["ring"]
    print(f"heap grew {out['grew_bytes'] / 2**20:.2f} MiB from the midpoint to the end; the ring went "
          f"{ring[0]['events']} → {ring[1]['events']} events, {ring[0]['chars'] / 2**20:.2f} → "
          f"{ring[1]['chars'] / 2**20:.2f} Mi characters; {out['calls']} view calls")
    for row in out["by_path"]:
        print(f"{row['kib']:>9.1f} KiB {row['blocks']:>7} blocks  {row['path']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
