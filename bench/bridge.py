"""Bridge cost: a view's tools/call round trip through Moka against a direct MCP client call.

The bench view (bench/view.html, served by bench/bench_server.py) times N sequential
``tools/call ping`` requests from inside its sandboxed frame: view → proxy → Moka's page →
core → MCP server and back. The reference is the same N calls from an ``mcp.Client`` in
this process to the same server (stdio: another process of the same script; HTTP: the
same server process).
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
NO_PUSH = "stdio, inspector push detached"


class CoreClock:
    """Times, inside the core, each view tools/call (dispatcher) and its MCP call (connection).

    It wraps the two bound methods on their instances; Moka's code is not changed.
    """

    def __init__(self, core: Core, server: str) -> None:
        self.dispatch: list[float] = []
        self.mcp: list[float] = []
        dispatcher = core.app.apphost.dispatcher
        conn = core.app.servers.get(server)
        handle, call_tool = dispatcher.handle, conn.call_tool

        async def timed_handle(view_id: str, message: Any) -> Any:
            start = time.perf_counter()
            reply = await handle(view_id, message)
            if isinstance(message, dict) and message.get("method") == "tools/call":
                self.dispatch.append((time.perf_counter() - start) * 1000)
            return reply

        async def timed_call(name: str, arguments: Any, **kw: Any) -> Any:
            start = time.perf_counter()
            result = await call_tool(name, arguments, **kw)
            self.mcp.append((time.perf_counter() - start) * 1000)
            return result

        dispatcher.handle = timed_handle  # type: ignore[method-assign]
        conn.call_tool = timed_call  # type: ignore[method-assign]

    def breakdown(self, rtt: list[float]) -> dict[str, float]:
        """Median ms: the whole round trip, the core's share, and the MCP call inside it."""
        n = len(rtt)
        dispatch, mcp_ms = statistics.median(self.dispatch[-n:]), statistics.median(self.mcp[-n:])
        return {"round_trip": round(statistics.median(rtt), 2), "in_core_dispatcher": round(dispatch, 2),
                "of_which_mcp_call": round(mcp_ms, 2),
                "outside_core (browser hops + WebSocket)": round(statistics.median(rtt) - dispatch, 2)}


def view_round_trips(core: Core, server: str, calls: int, warmup: int, *, browser: Chromium | None,
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
        if browser is not None:
            browser.page.wait_for_timeout(50)
        else:
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
                 diagnose: bool) -> tuple[dict[str, list[float]], dict[str, Any]]:
    core = Core.start(ws_paths)
    browser = Chromium()
    measured, breakdown = {}, {}
    try:
        core.wait_servers()
        browser.open(core.web.url + "#runner")
        core.wait_hello()
        for server, kind in (("bench", "stdio"), ("bench-http", "http")):
            clock = CoreClock(core, server)
            measured[kind] = view_round_trips(core, server, calls, warmup, browser=browser)
            breakdown[kind] = clock.breakdown(measured[kind])
        if diagnose:
            # What-if, not a supported setup: the inspector's live push to the UI detached.
            listeners = list(core.app.inspector._listeners)
            core.app.inspector._listeners.clear()
            clock = CoreClock(core, "bench")
            measured[NO_PUSH] = view_round_trips(core, "bench", calls, warmup, browser=browser)
            breakdown[NO_PUSH] = clock.breakdown(measured[NO_PUSH])
            core.app.inspector._listeners.extend(listeners)
    finally:
        browser.close()
        core.stop()
    return measured, breakdown


def run(ctx: Context) -> list[Result]:
    """Chromium and the Qt shell, over stdio and streamable HTTP."""
    calls, warmup = 200, 20
    qt_kinds = ctx.pick(["stdio"], ["stdio", "http"])
    measured: dict[tuple[str, str], list[float]] = {}
    qt_breakdown: dict[str, Any] = {}
    with http_bench_server() as url, workspace({"bench": bench_stdio(), "bench-http": {"url": url}}) as ws:
        ctx.log(f"bridge: {calls} view round trips in Chromium, stdio and HTTP")
        chromium, breakdown = _in_chromium(ws.paths, calls, warmup, diagnose=ctx.full)
        measured.update({("chromium", kind): rtt for kind, rtt in chromium.items()})
        for server, kind in (("bench", "stdio"), ("bench-http", "http")):
            if kind in qt_kinds:
                ctx.log(f"bridge: {calls} view round trips in the Qt desktop shell, {kind}")
                spec = {"server": server, "calls": calls, "warmup": warmup}
                report = run_desktop_probe(ws.env(), "bridge", spec, timeout=120)
                measured[("qt", kind)], qt_breakdown[kind] = report["rtt"], report["breakdown"]
        ctx.log(f"bridge: {calls} direct mcp.Client calls, stdio and HTTP")
        stdio = StdioServerParameters(command=sys.executable, args=[str(BENCH / "bench_server.py")])
        direct = {"stdio": direct_round_trips(stdio, calls, warmup), "http": direct_round_trips(url, calls, warmup)}
    results = []
    for (engine, kind), rtt in measured.items():
        base = "stdio" if kind == NO_PUSH else kind
        diagnostic = kind == NO_PUSH
        results.append(Result(
            f"bridge.{engine}.{'diagnostic.no-inspector-push' if diagnostic else kind}",
            f"View tools/call round trip via Moka, {kind} ({engine}){' [diagnostic]' if diagnostic else ''}", "ms", rtt,
            reference=direct[base], reference_title=f"direct mcp.Client, {base}", target=None if diagnostic else TARGET,
            target_on="difference",
            notes=("what-if: the inspector's live push to the UI detached for this series; not a supported setup"
                   if diagnostic else f"{calls} sequential calls timed inside the view after {warmup} warm-up calls"),
            extra={"median_ms": (breakdown if engine == "chromium" else qt_breakdown)[kind]}))
    return results
