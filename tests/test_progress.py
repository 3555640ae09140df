"""Progress and Stop against a real server: a token on every tools/call, progress events for the card of
the call, and a runner Stop that the server sees as notifications/cancelled."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from support import until
from moka_shell.bridge import Bridge
from moka_shell.config import MokaConfig, ServerConfig
from moka_shell.core.app import MokaApp
from moka_shell.core.mcp.progress import CallScope, CallTracker
from moka_shell.inspector import EventFilter
from moka_shell.paths import Paths
from moka_shell.testing import EventRecorder, start_app
from moka_shell.testing.fake_openai import FakeOpenAIServer, Text, ToolCall

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "servers" / "elicit_server.py"
ERAS = [pytest.param([], id="2026-07-28"), pytest.param(["--legacy"], id="legacy")]


async def start(paths: Paths, log: Path, flags: list[str], **agent: Any) -> tuple[MokaApp, Bridge, list[tuple[str, Any]]]:
    config = MokaConfig(mcpServers={"e": ServerConfig(command=sys.executable, args=[str(SERVER), str(log), *flags])})
    if agent:
        config.agent.backend, config.agent.model = "ollama", "fake-model"
        config.agent.base_urls = {"ollama": agent["base_url"]}
    events = EventRecorder()
    app = await start_app(paths, config=config, events=events)
    return app, Bridge(app), events


def progress_of(events: list[tuple[str, Any]], call_id: str) -> list[dict[str, Any]]:
    return [d for e, d in events if e == "tool.progress" and d.get("callId") == call_id]


def sent_calls(app: MokaApp) -> list[dict[str, Any]]:
    """The tools/call requests Moka put on the wire (from the inspector)."""
    out = []
    for ev in app.inspector.query(EventFilter(server="e"), limit=5000):
        msg = ev.get("message")
        if ev.get("direction") == "out" and isinstance(msg, dict) and msg.get("method") == "tools/call":
            out.append(msg)
    return out


@pytest.mark.anyio
@pytest.mark.parametrize("flags", ERAS)
async def test_runner_progress_and_stop(paths: Paths, tmp_path: Path, flags: list[str]) -> None:
    """The runner's call gets progress (message and total) for its entry; Stop cancels it on the server."""
    log = tmp_path / "server.log"
    app, bridge, events = await start(paths, log, flags)
    try:
        run = asyncio.ensure_future(bridge.handle({"id": 1, "method": "tools.run", "params": {
            "server": "e", "tool": "long_job", "arguments": {"steps": 200, "delay": 0.2}, "runId": "job-1"}}))
        seen = await until(lambda: len(progress_of(events, "job-1")) >= 2 and progress_of(events, "job-1"),
                           "two progress events")
        first = seen[0]
        assert first["where"] == "runner" and first["server"] == "e" and first["tool"] == "long_job"
        assert first["total"] == 200 and first["message"].startswith("Step ") and first["message"].endswith("of 200")
        assert seen[1]["progress"] > first["progress"]
        stop = await bridge.handle({"id": 2, "method": "tools.stop", "params": {"runId": "job-1"}})
        assert stop == {"id": 2, "result": {"stopped": True}}
        reply = await asyncio.wait_for(run, 30)
        assert reply == {"id": 1, "result": {"runId": "job-1", "stopped": True}}
        # The server notes the notification and the job's end from two tasks, in either order.
        await until(lambda: log.exists() and "job cancelled" in log.read_text()
                    and any(line.startswith("cancelled ") for line in log.read_text().splitlines()),
                    "the server's tool was cancelled and notifications/cancelled arrived")
        assert any(line.startswith("cancelled ") for line in log.read_text().splitlines())  # notifications/cancelled
        assert ("tool.progress.done", {"callId": "job-1", "server": "e", "tool": "long_job", "where": "runner"}) in events
        count = len(progress_of(events, "job-1"))
        await asyncio.sleep(0.5)
        assert len(progress_of(events, "job-1")) == count  # nothing after the call ended
        # The connection is fine after a Stop: the next call runs to the end.
        done = await bridge.handle({"id": 3, "method": "tools.run", "params": {
            "server": "e", "tool": "long_job", "arguments": {"steps": 2, "delay": 0.01}}})
        assert done is not None and done["result"]["result"]["content"][0]["text"] == "finished 2 steps"
    finally:
        await app.stop()
    tokens = [m.get("params", {}).get("_meta", {}).get("progressToken") for m in sent_calls(app)]
    assert len(tokens) == 2 and all(t is not None for t in tokens) and tokens[0] != tokens[1]


@pytest.mark.anyio
async def test_a_call_nobody_shows_still_sends_a_token(paths: Paths, tmp_path: Path) -> None:
    """`moka call` and other calls with no card: the token goes out, the progress goes nowhere."""
    app, _bridge, events = await start(paths, tmp_path / "log", [])
    try:
        result = await app.servers.get("e").call_tool("long_job", {"steps": 3, "delay": 0.01})
        assert result["content"][0]["text"] == "finished 3 steps"
    finally:
        await app.stop()
    assert [m["params"]["_meta"].get("progressToken") is not None for m in sent_calls(app)] == [True]
    assert not [d for e, d in events if e == "tool.progress"]


@pytest.mark.anyio
async def test_chat_tool_call_progress_goes_to_its_card(paths: Paths, tmp_path: Path) -> None:
    """A model's call of a slow tool: progress events name the chat call and its conversation."""
    with FakeOpenAIServer() as srv:
        srv.enqueue([ToolCall("long_job", {"steps": 4, "delay": 0.05})], [Text("All done.")])
        app, _bridge, events = await start(paths, tmp_path / "log", [], base_url=srv.base_url)
        app.config.approval.mode = "all"
        try:
            assert app.chat is not None
            cid = app.chat.start_turn(None, "run the job")
            await asyncio.wait_for(app.chat.wait(cid), 60)
        finally:
            await app.stop()
    calls = [d["call"] for e, d in events if e == "chat.tool"]
    call_id = calls[-1]["id"]
    assert calls[-1]["status"] == "done"
    progress = progress_of(events, call_id)
    assert progress and all(p["where"] == "chat" and p["conversationId"] == cid for p in progress)
    assert progress[-1]["progress"] == 4 and progress[-1]["total"] == 4 and progress[-1]["message"] == "Done"


@pytest.mark.anyio
async def test_progress_is_coalesced_and_bad_numbers_dropped() -> None:
    """A flood of progress reaches the UI as a few events, always ending with the newest one."""
    events: list[tuple[str, Any]] = []
    tracker = CallTracker(lambda e, d: events.append((e, d)))
    with tracker.scope(CallScope("c1", "s", "t", "runner")):
        report = tracker.progress_callback("s")
        assert tracker.progress_callback("other") is not report  # another server's call is not this card's
        for i in range(500):
            await report(i, 499, f"item {i}")
        await report(float("nan"), None, "ignored")
    progress = [d for e, d in events if e == "tool.progress"]
    assert 1 <= len(progress) < 50
    assert progress[-1] == {"callId": "c1", "server": "s", "tool": "t", "where": "runner", "progress": 499,
                            "total": 499, "message": "item 499"}
