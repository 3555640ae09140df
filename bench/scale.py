"""Scale: many servers connecting at once, a 10,000-message conversation, 100,000 inspector events."""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from moka_shell.bridge import Bridge
from moka_shell.config import MokaConfig
from moka_shell.core.app import MokaApp
from moka_shell.inspector import EventFilter, Inspector
from moka_shell.paths import Paths

from bench.context import Context
from bench.env import bench_stdio, npm
from bench.stats import Result

KINDS = {"vanillajs": "mcp-server-basic-vanillajs", "react": "mcp-server-basic-react",
         "budget": "mcp-budget-allocator-server", "monitor": "mcp-system-monitor-server"}


def server_mix(count: int) -> dict[str, dict[str, Any]]:
    """``count`` stdio servers: the four node examples and the (Python) bench server, in turn."""
    kinds = [*KINDS, "bench"]
    out = {}
    for i in range(count):
        kind = kinds[i % len(kinds)]
        out[f"{kind}-{i}"] = bench_stdio() if kind == "bench" else npm(KINDS[kind])
    return out


def connect_all(servers: dict[str, dict[str, Any]]) -> float:
    """ms from starting the core's servers to every one ready (tools and UI resources read)."""

    async def go() -> float:
        with tempfile.TemporaryDirectory() as tmp:
            app = MokaApp(Paths(Path(tmp) / "c.json", Path(tmp) / "d"), config=MokaConfig.model_validate(
                {"mcpServers": servers}), mode="headless", connect_timeout=120)
            start = time.perf_counter()
            await app.start(store=False)
            await app.servers.wait_ready(timeout=120)
            took = (time.perf_counter() - start) * 1000
            bad = [n for n, c in app.servers.connections.items() if c.status != "ready"]
            await app.stop()
            if bad:
                raise RuntimeError(f"not ready: {bad}")
            return took

    return asyncio.run(go())


def servers_at_once(ctx: Context) -> list[Result]:
    """20 at once against each kind alone (the reference is the slowest kind's median)."""
    alone_runs, together_runs = ctx.pick(1, 3), ctx.pick(1, 3)
    mix = server_mix(20)
    alone: dict[str, list[float]] = {}
    ctx.log("scale: each server kind alone, then 20 servers at once")
    for _ in range(alone_runs):
        for kind in [*KINDS, "bench"]:
            name = next(n for n in mix if n.startswith(kind + "-"))
            alone.setdefault(kind, []).append(connect_all({name: mix[name]}))
    slowest = max(alone, key=lambda k: sorted(alone[k])[len(alone[k]) // 2])
    together = [connect_all(mix) for _ in range(together_runs)]
    return [Result("scale.servers20", "20 stdio servers connecting at once → all ready", "ms", together,
                   reference=alone[slowest], reference_title=f"slowest kind alone ({slowest})",
                   notes="4 of each: basic-vanillajs, basic-react, budget-allocator, system-monitor (node), "
                         "bench (Python); ready = initialized, tools listed, UI resources read",
                   extra={"alone_ms": {k: round(sorted(v)[len(v) // 2], 1) for k, v in alone.items()}})]


def _fill(app: MokaApp, messages: int) -> str:
    """A conversation of ``messages`` messages; every 10th assistant message has a tool call."""
    store = app.store
    cid = store.create_conversation("10k messages")
    store.db.execute("BEGIN")
    for i in range(messages):
        role = "user" if i % 2 == 0 else "assistant"
        msg = store.add_message(cid, role, f"message {i}: " + "lorem ipsum dolor sit amet " * 6)
        if role == "assistant" and i % 20 == 1:
            call = {"id": f"t{i}", "server": "moka-demo", "tool": "roll_dice", "modelName": "roll_dice",
                    "arguments": {"sides": 6}, "status": "running"}
            store.add_call(cid, msg["id"], call)
            store.update_call(call["id"], status="done", result={"content": [{"type": "text", "text": "4"}],
                                                                   "structuredContent": {"values": [4]}})
    store.db.execute("COMMIT")
    return cid


def conversation(ctx: Context) -> list[Result]:
    """Opening a 10,000-message conversation: the store, and the bridge method plus JSON."""
    repeat = ctx.pick(5, 15)
    ctx.log("scale: a 10,000-message conversation")

    async def go() -> tuple[list[float], list[float], list[float], int]:
        with tempfile.TemporaryDirectory() as tmp:
            app = MokaApp(Paths(Path(tmp) / "c.json", Path(tmp) / "d"), config=MokaConfig(), mode="headless")
            await app.start(store=True)
            cid = _fill(app, 10_000)
            bridge = Bridge(app)
            store_ms, get_ms, wire_ms, size = [], [], [], 0
            for _ in range(repeat):
                start = time.perf_counter()
                app.store.messages(cid)
                store_ms.append((time.perf_counter() - start) * 1000)
                start = time.perf_counter()
                reply = await bridge.handle({"id": 1, "method": "conversations.get", "params": {"id": cid}})
                get_ms.append((time.perf_counter() - start) * 1000)
                size = len(json.dumps(reply, default=str))
                wire_ms.append((time.perf_counter() - start) * 1000)
            await app.stop()
            return store_ms, get_ms, wire_ms, size

    store_ms, get_ms, wire_ms, size = asyncio.run(go())
    note = f"10,000 messages, 500 with a tool call; reply {size / 1e6:.1f} MB of JSON"
    return [Result("scale.conversation.store", "10,000-message conversation: Store.messages()", "ms", store_ms, notes=note),
            Result("scale.conversation.get", "10,000-message conversation: conversations.get (bridge)", "ms", get_ms),
            Result("scale.conversation.wire", "10,000-message conversation: conversations.get + JSON encode", "ms",
                   wire_ms)]


def event(i: int) -> tuple[str, dict[str, Any], str, str]:
    """A realistic ui.rpc event: channel, message, direction, view."""
    message = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
               "params": {"name": "ping", "arguments": {"i": i, "note": "x" * 120}}}
    return "ui.rpc", message, "in" if i % 2 else "out", f"v{i % 50:011x}"


def inspector(ctx: Context) -> list[Result]:
    """Recording 100,000 events (to the ring and the JSONL file), then querying with them all kept."""
    repeat = ctx.pick(5, 15)
    ctx.log("scale: the inspector with 100,000 events")
    with tempfile.TemporaryDirectory() as tmp:
        insp = Inspector(Path(tmp))
        batches = []
        for b in range(10):
            start = time.perf_counter()
            for i in range(b * 10_000, (b + 1) * 10_000):
                channel, message, direction, view = event(i)
                insp.record(channel, message, direction=direction, server="bench", view=view)
            batches.append((time.perf_counter() - start) * 1e6 / 10_000)
        queries = {"newest 2,000": (EventFilter(), 2000), "one view": (EventFilter(view="v" + "0" * 10 + "7"), 2000),
                   "text search": (EventFilter(text="needle"), 2000), "all 100,000 (the UI)": (EventFilter(), 100_000)}
        timings: dict[str, list[float]] = {}
        for name, (flt, limit) in queries.items():
            for _ in range(repeat):
                start = time.perf_counter()
                insp.query(flt, limit=limit)
                timings.setdefault(name, []).append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        payload = json.dumps({"id": 1, "result": insp.query(EventFilter(), limit=100_000)}, default=str)
        encode_ms = (time.perf_counter() - start) * 1000
        insp.close()
    results = [Result("scale.inspector.record", "Inspector.record (ring + JSONL file), per event", "µs", batches,
                      notes=f"10 batches of 10,000; {1e6 / sorted(batches)[5]:,.0f} events/s at the median")]
    for name, samples in timings.items():
        results.append(Result(f"scale.inspector.query.{name.split()[0].lower()}",
                              f"Inspector.query with 100,000 events: {name}", "ms", samples))
    results[-1].notes = f"query + JSON for the UI's first load: {encode_ms:.0f} ms, {len(payload) / 1e6:.1f} MB"
    return results


def run(ctx: Context) -> list[Result]:
    """All three."""
    return servers_at_once(ctx) + conversation(ctx) + inspector(ctx)
