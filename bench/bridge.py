"""Bridge cost: a view's tools/call round trip through Moka against a direct MCP client call.

The bench view (bench/view.html, served by bench/bench_server.py) times N sequential
``tools/call ping`` requests from inside its sandboxed frame: view → proxy → Moka's page →
core → MCP server and back. The reference is the same N calls from an ``mcp.Client`` in
this process to the same server (stdio: another process of the same script; HTTP: the
same server process).

Every series is taken in blocks, interleaved (stdio, HTTP, stdio, HTTP, … each block a fresh
view), and the direct calls half before and half after the views: whichever series ran first
used to pay for the machine still settling from the suite before (up to +1.4 ms on the same
code), which said more about its position than about Moka.
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
from bench.harness import Chromium, Core, run_desktop_probe
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
        apphost = core.app.apphost
        dispatcher = apphost.dispatcher
        handle = dispatcher.handle

        async def timed_handle(view_id: str, message: Any) -> Any:
            start = time.perf_counter()
            reply = await handle(view_id, message)
            view = apphost.views.get(view_id)
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

    def breakdown(self, server: str, rtt: list[float]) -> dict[str, float]:
        """Median ms: the whole round trip, the core's share, and the MCP call inside it."""
        dispatch, mcp_ms = statistics.median(self.dispatch[server]), statistics.median(self.mcp[server])
        return {"round_trip": round(statistics.median(rtt), 2), "in_core_dispatcher": round(dispatch, 2),
                "of_which_mcp_call": round(mcp_ms, 2),
                "outside_core (browser hops + WebSocket)": round(statistics.median(rtt) - dispatch, 2)}


def interleaved(core: Core, kinds: list[str], calls: int, warmup: int,
                blocks: int) -> tuple[dict[str, list[float]], dict[str, dict[str, float]]]:
    """``calls`` timed round trips per kind, in ``blocks`` alternating blocks, each a fresh view."""
    clock = CoreClock(core, [SERVERS[k] for k in kinds])
    rtt: dict[str, list[float]] = {k: [] for k in kinds}
    per_block = [calls // blocks + (1 if i < calls % blocks else 0) for i in range(blocks)]
    for n in per_block:
        for kind in kinds:
            since = clock.mark(SERVERS[kind])
            rtt[kind] += view_round_trips(core, SERVERS[kind], n, warmup)
            clock.keep(SERVERS[kind], since, n)
    return rtt, {k: clock.breakdown(SERVERS[k], rtt[k]) for k in kinds}


def view_round_trips(core: Core, server: str, calls: int, warmup: int, *,
                     timeout: float = 180) -> list[float]:
    """Open the bench view, let it time ``calls`` round trips, and return them (ms)."""

    async def open_view() -> Any:
        _cid, view, _result = await core.app.apphost.run_tool(server, "bench_view",
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
    core.run(core.app.apphost.close(view, "benchmark done"), 15)
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
                 blocks: int) -> tuple[dict[str, list[float]], dict[str, dict[str, float]]]:
    core = Core.start(ws_paths)
    browser = Chromium()
    try:
        core.wait_servers()
        browser.open(core.web.url + "#runner")
        core.wait_hello()
        return interleaved(core, ["stdio", "http"], calls, warmup, blocks)
    finally:
        browser.close()
        core.stop()


def _direct(stdio: StdioServerParameters, url: str, calls: int, warmup: int) -> dict[str, list[float]]:
    return {"stdio": direct_round_trips(stdio, calls, warmup), "http": direct_round_trips(url, calls, warmup)}


def run(ctx: Context) -> list[Result]:
    """Chromium and the Qt shell, over stdio and streamable HTTP."""
    calls, warmup = 200, 20
    blocks = ctx.pick(2, 4)
    qt_kinds = ctx.pick(["stdio"], ["stdio", "http"])
    measured: dict[tuple[str, str], list[float]] = {}
    breakdown: dict[tuple[str, str], dict[str, float]] = {}
    stdio = StdioServerParameters(command=sys.executable, args=[str(BENCH / "bench_server.py")])
    with http_bench_server() as url, workspace({"bench": bench_stdio(), "bench-http": {"url": url}}) as ws:
        ctx.log(f"bridge: {calls // 2} direct mcp.Client calls, stdio and HTTP (first half)")
        direct = _direct(stdio, url, calls // 2, warmup)
        ctx.log(f"bridge: {calls} view round trips in Chromium, stdio and HTTP, in {blocks} interleaved blocks")
        rtt, parts = _in_chromium(ws.paths, calls, warmup, blocks)
        for kind in rtt:
            measured[("chromium", kind)], breakdown[("chromium", kind)] = rtt[kind], parts[kind]
        ctx.log(f"bridge: {calls} view round trips in the Qt desktop shell, {'/'.join(qt_kinds)}, in {blocks} blocks")
        spec = {"kinds": qt_kinds, "calls": calls, "warmup": warmup, "blocks": blocks}
        report = run_desktop_probe(ws.env(), "bridge", spec, timeout=240)
        for kind in qt_kinds:
            measured[("qt", kind)], breakdown[("qt", kind)] = report["rtt"][kind], report["breakdown"][kind]
        ctx.log(f"bridge: {calls - calls // 2} direct mcp.Client calls, stdio and HTTP (second half)")
        for kind, samples in _direct(stdio, url, calls - calls // 2, warmup).items():
            direct[kind] += samples
    return [Result(f"bridge.{engine}.{kind}", f"View tools/call round trip via Moka, {kind} ({engine})", "ms", rtt,
                   reference=direct[kind], reference_title=f"direct mcp.Client, {kind}", target=TARGET,
                   target_on="difference",
                   notes=(f"{calls} sequential calls timed inside the view, in {blocks} blocks interleaved with "
                          f"the other transport, each after {warmup} warm-up calls"),
                   extra={"median_ms": breakdown[(engine, kind)]})
            for (engine, kind), rtt in measured.items()]
