"""Many servers at once: Moka connecting 20 stdio servers against their floor, in the same run.

The floor is what the bare ``mcp`` SDK needs for the same work: 20 ``mcp.Client``s in this
process connecting concurrently to the same 20 servers (the MCP Apps extension advertised,
as Moka does), each done when its tools (and, where the server has them, its resources) are
listed, the point where Moka calls a connection "ready". All connections stay open until the
last is done, as Moka's do. Moka's and the floor's runs take turns.

Also timed: time to the first server usable (its tools listed), in Moka and in the floor.
Each kind alone is the older reference, kept for comparison with earlier rounds.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client import advertise
from mcp.client.stdio import StdioServerParameters
from moka_shell.config import MokaConfig
from moka_shell.core.app import MokaApp
from moka_shell.paths import Paths

from bench.context import Context
from bench.env import bench_stdio, npm
from bench.stats import Result, Target

KINDS = {"vanillajs": "mcp-server-basic-vanillajs", "react": "mcp-server-basic-react",
         "budget": "mcp-budget-allocator-server", "monitor": "mcp-system-monitor-server"}
UI = advertise("io.modelcontextprotocol/ui", {"mimeTypes": ["text/html;profile=mcp-app"]})
TARGET = Target(1.2, "Moka all ready ≤ 1.2x the bare SDK's floor (median)")


def server_mix(count: int) -> dict[str, dict[str, Any]]:
    """``count`` stdio servers: the four node examples and the (Python) bench server, in turn."""
    kinds = [*KINDS, "bench"]
    out = {}
    for i in range(count):
        kind = kinds[i % len(kinds)]
        out[f"{kind}-{i}"] = bench_stdio() if kind == "bench" else npm(KINDS[kind])
    return out


def moka_connect(servers: dict[str, dict[str, Any]]) -> tuple[float, float]:
    """Moka's core: ms from starting its servers to (every one ready, the first one ready)."""

    async def go() -> tuple[float, float]:
        with tempfile.TemporaryDirectory() as tmp:
            app = MokaApp(Paths(Path(tmp) / "c.json", Path(tmp) / "d"), config=MokaConfig.model_validate(
                {"mcpServers": servers}), mode="headless", connect_timeout=120)
            first: list[float] = []

            async def watch(start: float) -> None:  # 2 ms polls of the statuses the UI shows
                while not any(c.status == "ready" for c in app.servers.connections.values()):
                    await asyncio.sleep(0.002)
                first.append((time.perf_counter() - start) * 1000)

            start = time.perf_counter()
            watcher = asyncio.create_task(watch(start))
            await app.start(store=False)
            await app.servers.wait_ready(timeout=120)
            took = (time.perf_counter() - start) * 1000
            await asyncio.wait_for(watcher, 5)
            bad = [n for n, c in app.servers.connections.items() if c.status != "ready"]
            await app.stop()
            if bad:
                raise RuntimeError(f"not ready: {bad}")
            return took, first[0]

    return asyncio.run(go())


def floor_connect(servers: dict[str, dict[str, Any]]) -> tuple[float, float]:
    """Bare mcp clients, all at once: ms to (every one listed, the first one's tools listed)."""

    async def go() -> tuple[float, float]:
        done: list[float] = []
        all_done = asyncio.Event()
        start = time.perf_counter()

        async def one(spec: dict[str, Any]) -> None:
            params = StdioServerParameters(command=spec["command"], args=spec["args"])
            async with Client(params, extensions=[UI]) as client:
                await client.list_tools()
                caps = client.server_capabilities
                if caps is None or caps.resources is not None:
                    await client.list_resources()
                done.append((time.perf_counter() - start) * 1000)
                if len(done) == len(servers):
                    all_done.set()
                await all_done.wait()  # keep it open, as Moka keeps its connections

        await asyncio.wait_for(asyncio.gather(*(one(s) for s in servers.values())), 120)
        return max(done), min(done)

    return asyncio.run(go())


def servers_at_once(ctx: Context) -> list[Result]:
    """20 at once: against the floor (same run, in turns), and against each kind alone."""
    rounds = ctx.pick(1, 3)
    mix = server_mix(20)
    ctx.log("scale: each server kind alone, then 20 servers at once: Moka and the bare SDK's floor in turns")
    alone: dict[str, list[float]] = {}
    for _ in range(rounds):
        for kind in [*KINDS, "bench"]:
            name = next(n for n in mix if n.startswith(kind + "-"))
            alone.setdefault(kind, []).append(moka_connect({name: mix[name]})[0])
    slowest = max(alone, key=lambda k: sorted(alone[k])[len(alone[k]) // 2])
    moka_all: list[float] = []
    moka_first: list[float] = []
    floor_all: list[float] = []
    floor_first: list[float] = []
    for r in range(rounds):
        for who in (("floor", "moka") if r % 2 == 0 else ("moka", "floor")):
            all_ms, first_ms = floor_connect(mix) if who == "floor" else moka_connect(mix)
            (floor_all if who == "floor" else moka_all).append(all_ms)
            (floor_first if who == "floor" else moka_first).append(first_ms)
    notes = ("4 of each: basic-vanillajs, basic-react, budget-allocator, system-monitor (node), bench (Python); "
             "ready = initialized, tools and resources listed")
    return [
        Result("scale.servers20", "20 stdio servers connecting at once → all ready (vs each kind alone)", "ms",
               moka_all, reference=alone[slowest], reference_title=f"slowest kind alone ({slowest})", notes=notes,
               extra={"alone_ms": {k: round(sorted(v)[len(v) // 2], 1) for k, v in alone.items()}}),
        Result("scale.servers20.floor", "20 stdio servers at once → all ready, against the bare SDK's floor", "ms",
               moka_all, reference=floor_all, reference_title="20 bare mcp.Clients at once, same servers",
               target=TARGET, target_on="ratio", notes=notes),
        Result("scale.servers20.first", "20 stdio servers at once → first server usable (its tools listed)", "ms",
               moka_first, reference=floor_first, reference_title="first of 20 bare mcp.Clients listed",
               notes="Moka: the first connection whose status is ready (2 ms polls)",
               extra={"moka_all_ready_median_ms": round(sorted(moka_all)[len(moka_all) // 2], 1)}),
    ]
