"""Scale: many servers connecting at once, a 10,000-message conversation (core and screen), 100,000 inspector events."""

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

from bench import chat_history, inspector_ui
from bench.context import Context
from bench.harness import Core
from bench.scale_servers import servers_at_once
from bench.stats import Result, Target


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
                reply = await bridge.handle({"id": 1, "method": "conversations.get",
                                             "params": {"id": cid, "limit": 60}})  # the UI's first page
                get_ms.append((time.perf_counter() - start) * 1000)
                size = len(json.dumps(reply, default=str))
                wire_ms.append((time.perf_counter() - start) * 1000)
            await app.stop()
            return store_ms, get_ms, wire_ms, size

    store_ms, get_ms, wire_ms, size = asyncio.run(go())
    note = f"10,000 messages, 500 with a tool call; all of them (what the page asked for before issue 27)"
    return [Result("scale.conversation.store", "10,000-message conversation: Store.messages(), all", "ms", store_ms,
                   notes=note),
            Result("scale.conversation.get", "10,000-message conversation: conversations.get, newest 60 (bridge)", "ms",
                   get_ms, notes=f"the page's first load; reply {size / 1e3:.0f} kB of JSON"),
            Result("scale.conversation.wire", "10,000-message conversation: conversations.get, newest 60 + JSON", "ms",
                   wire_ms)]


def conversation_ui(ctx: Context) -> list[Result]:
    """The Chat screen opening a 10,000-message conversation, and scrolling back through it (Chromium)."""
    ctx.log("scale: the Chat screen with a 10,000-message conversation")
    with chat_history.filled_core() as (core, cid):
        data = chat_history.timings(core, cid, ctx.pick(3, 10))
    held = f"the thread held {max(data['shown'] or [0])} messages at most" if data["shown"] else ""
    return [
        Result("scale.conversation.ui.first", "Chat, 10,000 messages: click → newest messages painted", "ms",
               data["painted"], target=Target(1000, "≤ 1 s"), notes="Chromium; timed in the page, fresh load each time"),
        Result("scale.conversation.ui.block", "Chat, 10,000 messages: longest main-thread block while opening", "ms",
               data["worst"], reference=data["idle_worst"], reference_title="the idle page, 3 s",
               target=Target(100, "≤ 100 ms"), notes="largest gap of a setTimeout(0) chain, click to 1 s after paint"),
        Result("scale.conversation.ui.scroll", "Chat, 10,000 messages: longest block while scrolling back 3 s", "ms",
               data["scroll_worst"], reference=data["idle_worst"], reference_title="the idle page, 3 s",
               target=Target(100, "≤ 100 ms"),
               notes=f"0.8 of a screen up per frame; pages of 50 fetched and let go of; {held}")]


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
        queries = {"newest 2,000": (EventFilter(), None), "one view": (EventFilter(view="v" + "0" * 10 + "7"), None),
                   "text search": (EventFilter(text="needle"), None), "older page (cursor 50,000 back)": (
                       EventFilter(), insp.seq - 50_000)}
        timings: dict[str, list[float]] = {}
        for name, (flt, before) in queries.items():
            for _ in range(repeat):
                start = time.perf_counter()
                insp.page(flt, limit=2000, before=before)
                timings.setdefault(name, []).append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        payload = json.dumps({"id": 1, "result": insp.page(EventFilter(), limit=2000).to_json()}, default=str)
        encode_ms = (time.perf_counter() - start) * 1000
        insp.close()
    results = [Result("scale.inspector.record", "Inspector.record (ring + JSONL file), per event", "µs", batches,
                      notes=f"10 batches of 10,000; {1e6 / sorted(batches)[5]:,.0f} events/s at the median")]
    for name, samples in timings.items():
        results.append(Result(f"scale.inspector.query.{name.split()[0].lower()}",
                              f"Inspector.page with 100,000 events: {name}", "ms", samples))
    results[1].notes = (f"the UI's first load (a page of 2,000 + JSON): {encode_ms:.0f} ms, "
                         f"{len(payload) / 1e6:.1f} MB")
    return results


async def _while_loop_ticks(work: Any) -> tuple[float, float]:
    """Run ``work()`` on this loop beside a 1 ms ticker: (ms it took, the ticker's worst lateness in ms)."""
    running, worst = True, 0.0

    async def ticker() -> None:
        nonlocal worst
        while running:
            start = time.perf_counter()
            await asyncio.sleep(0.001)
            worst = max(worst, (time.perf_counter() - start) * 1000 - 1)

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)
    start = time.perf_counter()
    await work()
    took = (time.perf_counter() - start) * 1000
    running = False
    await task
    return took, worst


async def _reply(bridge: Bridge, method: str, params: dict[str, Any]) -> Any:
    """A bridge call plus the JSON encoding the web server does on the loop; returns the result."""
    reply = await bridge.handle({"id": 1, "method": method, "params": params})
    assert reply is not None and "result" in reply, reply
    json.dumps(reply, default=str)
    return reply["result"]


async def _export_all(bridge: Bridge) -> None:
    """inspector.export of everything, following its chunks (if it has any) to the end."""
    params: dict[str, Any] = {}
    while True:
        result = await _reply(bridge, "inspector.export", params)
        if not result.get("next"):
            return
        params = {"after": result["next"]}


def inspector_loop(core: Core, repeat: int) -> list[Result]:
    """The core loop while the bridge answers inspector calls over 100,000 events."""
    bridge = core.web.bridge
    needle = inspector_ui.NEEDLE
    calls: dict[str, tuple[str, Any]] = {  # id: (title, work)
        "query.text": ("inspector.query, text search",
                       lambda: _reply(bridge, "inspector.query", {"text": needle, "limit": 2000})),
        "export.all": ("inspector.export, all 100,000", lambda: _export_all(bridge)),
        "page.newest": ("inspector.page, newest 2,000 (the UI's first load)",
                        lambda: _reply(bridge, "inspector.page", {"limit": 2000})),
        "page.text": ("inspector.page, text search (the UI)",
                      lambda: _reply(bridge, "inspector.page", {"text": needle, "limit": 2000}))}

    async def go() -> dict[str, tuple[str, list[float], list[float]]]:
        out: dict[str, tuple[str, list[float], list[float]]] = {}
        for _ in range(repeat):
            for key, (title, work) in calls.items():
                took, worst = await _while_loop_ticks(work)
                out.setdefault(key, (title, [], []))[1].append(took)
                out[key][2].append(worst)
        return out

    results = []
    for key, (title, took, worst) in core.run(go(), 300).items():
        results.append(Result(f"scale.inspector.bridge.{key}", f"Bridge {title} with 100,000 events (+ JSON)", "ms",
                              took, notes="the call plus the reply's JSON encoding, as the web server does it"))
        results.append(Result(f"scale.inspector.stall.{key}", f"Core loop's worst delay during {title}", "ms", worst,
                              notes="worst lateness of a 1 ms asyncio.sleep ticker on the core loop"))
    return results


def inspector_app(ctx: Context) -> list[Result]:
    """A core holding 100,000 events: its loop while the bridge searches and exports, then the screen."""
    ctx.log("scale: the core loop during inspector calls, and the Inspector screen, with 100,000 events")
    with inspector_ui.filled_core(100_000) as core:
        results = inspector_loop(core, ctx.pick(2, 10))
        data = inspector_ui.screen_timings(core, ctx.pick(2, 5))
    return results + [
        Result("scale.inspector.screen.first", "Inspector screen, 100,000 events: #inspector → newest rows painted",
               "ms", data["first_rows"], notes="Chromium; timed in the page, fresh page load each time"),
        Result("scale.inspector.screen.search", "Inspector screen, 100,000 events: search typed → its rows painted",
               "ms", data["search"], notes="includes the search box's 180 ms debounce; 100 events match")]


def run(ctx: Context) -> list[Result]:
    """Servers at once, a long conversation, the inspector (core, bridge, screen)."""
    return servers_at_once(ctx) + conversation(ctx) + conversation_ui(ctx) + inspector(ctx) + inspector_app(ctx)
