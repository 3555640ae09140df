"""kill -9 mid-turn loses nothing that had been shown; reopening replays the view."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from moka_shell.core.views.reopen import reopen_view
from moka_shell.config import MokaConfig, ServerConfig
from moka_shell.core.chat.store import Store
from moka_shell.paths import Paths
from moka_shell.testing import EventRecorder, start_app
from moka_shell.testing.fake_openai import FakeOpenAIServer, Text, ToolCall

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.anyio
async def test_kill_9_mid_turn_keeps_everything_shown(tmp_path: Path) -> None:
    """Every delta and tool result the UI was shown is in SQLite after SIGKILL, and the view reopens."""
    words = [f"word{i} " for i in range(400)]
    with FakeOpenAIServer() as srv:
        srv.enqueue([[Text("Here goes. "), ToolCall("roll_dice", {"sides": 6, "count": 2}, fragments=3)],
                     [Text(w, delay=0.02) for w in words]])
        child = subprocess.Popen([sys.executable, str(ROOT / "tests" / "servers" / "chat_crash_child.py"),
                                  str(tmp_path), srv.base_url], stdout=subprocess.PIPE, text=True)
        shown_text: dict[str, str] = {}
        tool_done = None
        try:
            assert child.stdout is not None
            deadline = time.monotonic() + 60
            for line in child.stdout:
                ev = json.loads(line)
                if ev["event"] == "chat.delta":
                    mid = ev["data"]["messageId"]
                    shown_text[mid] = shown_text.get(mid, "") + ev["data"]["text"]
                if ev["event"] == "chat.tool" and ev["data"]["call"]["status"] == "done":
                    tool_done = ev["data"]["call"]
                if sum(len(t) for t in shown_text.values()) > 600 or time.monotonic() > deadline:
                    break
        finally:
            os.kill(child.pid, signal.SIGKILL)
            child.wait(10)
    assert tool_done is not None and len(shown_text) == 2

    store = Store(Paths(tmp_path / "config.json", tmp_path).database)
    [conv] = store.list_conversations()
    messages = store.messages(conv["id"])
    for mid, text in shown_text.items():
        stored = next(m for m in messages if m["id"] == mid)["content"]
        assert stored.startswith(text)  # everything shown is there (maybe a little more)
    call = messages[1]["toolCalls"][0]
    assert call["status"] == "done" and call["result"]["structuredContent"]["count"] == 2
    record = store.view(call["recordId"])
    assert record and record["arguments"] == {"sides": 6, "count": 2} and record["result"]
    store.close()

    # Reopen: the conversation is listed and its view renders again with input and result replayed.
    config = MokaConfig(mcpServers={"moka-demo": ServerConfig(command="moka", args=["demo-server"])})
    events = EventRecorder()
    app = await start_app(Paths(tmp_path / "config.json", tmp_path), config=config, events=events)
    try:
        assert app.store is not None
        view = await reopen_view(app.view_host, call["recordId"], app.store.view(call["recordId"]) or {})
        assert view is not None
        d = app.view_host.dispatcher
        await d.handle(view.id, {"jsonrpc": "2.0", "id": 0, "method": "ui/initialize", "params": {
            "protocolVersion": "2026-01-26", "appInfo": {"name": "t", "version": "1"}, "appCapabilities": {}}})
        await d.handle(view.id, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
        posts = [x["message"] for e, x in events if e == "view.post"]  # type: ignore[index]
        assert [p["method"] for p in posts[:2]] == ["ui/notifications/tool-input", "ui/notifications/tool-result"]
        assert posts[1]["params"]["structuredContent"] == call["result"]["structuredContent"]
    finally:
        await app.stop()
