"""Bridge cost: a view's tools/call round trip through Moka against a direct MCP client call.

The bench view (bench/view.html, served by bench/bench_server.py) times N sequential
``tools/call ping`` requests from inside its sandboxed frame: view → proxy → Moka's page →
core → MCP server and back. The reference is the same N calls from an ``mcp.Client`` in
this process to the same server (stdio: another process of the same script; HTTP: the
same server process).

Browser mode runs in a plain headless Chromium with no automation attached: the view reports
its own timings to the core (ui/update-model-context), and Playwright's per-frame
instrumentation would only add its own traffic to every hop.

The series are interleaved: in each of two rounds the direct calls, Chromium and the Qt shell
take turns, and within an engine stdio and HTTP blocks alternate (each block a fresh view).
Whichever series ran first used to pay for the machine still settling from the suite before
(up to +1.4 ms on the same code), which said more about its position than about Moka.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from bench.context import Context
from bench.env import BENCH, bench_stdio, http_bench_server, workspace
from bench.harness import Core, core_with_page, run_desktop_probe
from bench.stats import Result, Target

TARGET = Target(3.0, "within 3 ms of a direct call (median difference)")
SERVERS = {"stdio": "bench", "http": "bench-http"}


class CoreClock:
    """Times, inside the core, each view tools/call (dispatcher) and its MCP call (connection).

    It wraps the bound methods on their instances, once; samples are kept per server.
    Moka's code is not changed.
    """

    def __init__(self, core: Core, servers: list[str]) -> None:
        self.dispatch: dict[str, list[float]] = {name: [] for name in servers}
        self.mcp: dict[str, list[float]] = {name: [] for name in servers}
        view_host = core.app.view_host
        dispatcher = view_host.dispatcher
        handle = dispatcher.handle

        async def timed_handle(view_id: str, message: Any) -> Any:
            start = time.perf_counter()
            reply = await handle(view_id, message)
            view = view_host.views.get(view_id)
            if view is not None and view.server in self.dispatch and isinstance(message, dict) \
                    and message.get("method") == "tools/call":
                self.dispatch[view.server].append((time.perf_counter() - start) * 1000)
            return reply

        dispatcher.handle = timed_handle  # type: ignore[method-assign]
        for name in servers:
            self._wrap_call(core.app.servers.get(name), self.mcp[name])

    @staticmethod
    def _wrap_call(conn: Any, samples: list[float]) -> None:
        call_tool = conn.call_tool

        async def timed_call(name: str, arguments: Any, **kw: Any) -> Any:
            start = time.perf_counter()
            result = await call_tool(name, arguments, **kw)
            samples.append((time.perf_counter() - start) * 1000)
            return result

        conn.call_tool = timed_call

    def mark(self, server: str) -> tuple[int, int]:
        """How many samples this server has so far, to cut a block's warm-up calls later."""
        return len(self.dispatch[server]), len(self.mcp[server])

    def keep(self, server: str, since: tuple[int, int], count: int) -> None:
        """Of the samples taken since ``since``, keep the last ``count`` (the block's timed calls)."""
        for store, start in ((self.dispatch[server], since[0]), (self.mcp[server], since[1])):
            block = store[start:]
            del store[start:]
            store.extend(block[-count:])

    def samples(self, server: str) -> dict[str, list[float]]:
        """The kept samples of one server: whole dispatcher calls and the MCP calls inside them."""
        return {"dispatch": list(self.dispatch[server]), "mcp": list(self.mcp[server])}


def breakdown(rtt: list[float], core: dict[str, list[float]]) -> dict[str, float]:
    """Median ms: the whole round trip, the core's share, and the MCP call inside it."""
    whole, dispatch, mcp_ms = (statistics.median(x) for x in (rtt, core["dispatch"], core["mcp"]))
    return {"round_trip": round(whole, 2), "in_core_dispatcher": round(dispatch, 2), "of_which_mcp_call": round(mcp_ms, 2),
            "outside_core (browser hops + WebSocket)": round(whole - dispatch, 2)}


def interleaved(core: Core, kinds: list[str], calls: int, warmup: int,
                blocks: int) -> tuple[dict[str, list[float]], dict[str, dict[str, list[float]]]]:
    """``calls`` timed round trips per kind, in ``blocks`` alternating blocks, each a fresh view.

    Returns the round trips and the core's own samples, per kind.
    """
    clock = CoreClock(core, [SERVERS[k] for k in kinds])
    rtt: dict[str, list[float]] = {k: [] for k in kinds}
    per_block = [calls // blocks + (1 if i < calls % blocks else 0) for i in range(blocks)]
    for n in per_block:
        for kind in kinds:
            since = clock.mark(SERVERS[kind])
            rtt[kind] += view_round_trips(core, SERVERS[kind], n, warmup)
            clock.keep(SERVERS[kind], since, n)
    return rtt, {k: clock.samples(SERVERS[k]) for k in kinds}


def view_round_trips(core: Core, server: str, calls: int, warmup: int, *,
                     timeout: float = 180) -> list[float]:
    """Open the bench view, let it time ``calls`` round trips, and return them (ms)."""

    async def open_view() -> Any:
        _cid, view, _result = await core.app.view_host.run_tool(server, "bench_view",
                                                              {"calls": calls, "warmup": warmup})
        return view

    view = core.run(open_view())
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        context = view.model_context or {}
        rtt = (context.get("structuredContent") or {}).get("rtt")
        if rtt:
            break
        if view.state == "failed":
            raise RuntimeError(f"the bench view failed: {view.failure}")
        # Not page.wait_for_timeout: that runs Playwright's event pump on this thread, which
        # takes the GIL for every CDP event the driver forwards and slowed the core thread's
        # share of each call by ~0.35 ms. The result is read from the core, so nothing here
        # needs Playwright until the view is done.
        time.sleep(0.05)
    else:
        raise TimeoutError(f"the bench view did not finish {calls} calls in {timeout:g} s")
    core.run(core.app.view_host.close(view, "benchmark done"), 15)
    return [float(x) for x in rtt]


def direct_round_trips(target: str | StdioServerParameters, calls: int, warmup: int) -> list[float]:
    """The same calls from a plain mcp.Client (ms)."""

    async def go() -> list[float]:
        async with Client(target) as client:
            for _ in range(warmup):
                await client.call_tool("ping", {"i": -1})
            out = []
            for i in range(calls):
                start = time.perf_counter()
                await client.call_tool("ping", {"i": i})
                out.append((time.perf_counter() - start) * 1000)
            return out

    return asyncio.run(go())


def _in_chromium(ws_paths: Any, calls: int, warmup: int,
                 blocks: int) -> tuple[dict[str, list[float]], dict[str, dict[str, list[float]]]]:
    """Browser mode as people run it: a plain Chromium (no automation) on Moka's page."""
    with core_with_page(ws_paths) as (core, _):
        return interleaved(core, ["stdio", "http"], calls, warmup, blocks)


def _direct(stdio: StdioServerParameters, url: str, calls: int, warmup: int) -> dict[str, list[float]]:
    return {"stdio": direct_round_trips(stdio, calls, warmup), "http": direct_round_trips(url, calls, warmup)}


def run(ctx: Context) -> list[Result]:
    """Chromium and the Qt shell, over stdio and streamable HTTP, in alternating rounds."""
    calls, warmup, rounds = 200, 20, 2
    blocks = ctx.pick(1, 2)  # per engine and round: 2 or 4 blocks per series in all
    qt_kinds = ctx.pick(["stdio"], ["stdio", "http"])
    rtt: dict[tuple[str, str], list[float]] = {}
    core: dict[tuple[str, str], dict[str, list[float]]] = {}
    direct: dict[str, list[float]] = {"stdio": [], "http": []}

    def add(engine: str, got: dict[str, list[float]], own: dict[str, dict[str, list[float]]]) -> None:
        for kind, samples in got.items():
            rtt.setdefault((engine, kind), []).extend(samples)
            mine = core.setdefault((engine, kind), {"dispatch": [], "mcp": []})
            for part in mine:
                mine[part].extend(own[kind][part])

    stdio = StdioServerParameters(command=sys.executable, args=[str(BENCH / "bench_server.py")])
    share = calls // rounds
    with http_bench_server() as url, workspace({"bench": bench_stdio(), "bench-http": {"url": url}}) as ws:
        # Chromium and Qt take turns, and the direct calls come before, between and after
        # them: no series gets the machine in a better or worse state than the others.
        for r in range(rounds):
            ctx.log(f"bridge: round {r + 1}/{rounds}: {share // 2} direct mcp.Client calls, stdio and HTTP")
            for kind, samples in _direct(stdio, url, share // 2, warmup).items():
                direct[kind] += samples
            ctx.log(f"bridge: round {r + 1}/{rounds}: {share} view round trips in Chromium, stdio and HTTP")
            add("chromium", *_in_chromium(ws.paths, share, warmup, blocks))
            ctx.log(f"bridge: round {r + 1}/{rounds}: {share} view round trips in the Qt desktop shell, "
                    f"{'/'.join(qt_kinds)}")
            spec = {"kinds": qt_kinds, "calls": share, "warmup": warmup, "blocks": blocks}
            report = run_desktop_probe(ws.env(), "bridge", spec, timeout=240)
            add("qt", report["rtt"], report["core"])
            for kind, samples in _direct(stdio, url, share - share // 2, warmup).items():
                direct[kind] += samples
    return [Result(f"bridge.{engine}.{kind}", f"View tools/call round trip via Moka, {kind} ({engine})", "ms", samples,
                   reference=direct[kind], reference_title=f"direct mcp.Client, {kind}", target=TARGET,
                   target_on="difference",
                   notes=(f"{calls} sequential calls timed inside the view: {rounds} rounds, the engines taking "
                          f"turns, each in {blocks} block(s) per transport after {warmup} warm-up calls"),
                   extra={"median_ms": breakdown(samples, core[(engine, kind)])})
            for (engine, kind), samples in rtt.items()]
