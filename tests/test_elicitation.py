"""Elicitation against a real server, in both eras: the question reaches the UI as an event, the answer
goes back through the bridge, and nothing waits where nobody can answer."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support import until
from moka_shell.bridge import Bridge
from moka_shell.config import MokaConfig, ServerConfig
from moka_shell.core.app import MokaApp
from moka_shell.core.mcp.elicitation import check_url
from moka_shell.core.mcp.forms import check_content
from moka_shell.errors import ElicitationRefusedError, InvalidParamsError
from moka_shell.paths import Paths
from moka_shell.testing import EventRecorder, start_app

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "servers" / "elicit_server.py"
ERAS = [pytest.param([], "2026-07-28", id="2026-07-28"), pytest.param(["--legacy"], "2025-11-25", id="legacy")]


def server_config(log: Path, extra: list[str]) -> ServerConfig:
    return ServerConfig(command=sys.executable, args=[str(SERVER), str(log), *extra])


async def start(paths: Paths, servers: dict[str, ServerConfig]) -> tuple[MokaApp, Bridge, list[tuple[str, Any]]]:
    events = EventRecorder()  # subscribed: someone is there to answer
    app = await start_app(paths, config=MokaConfig(mcpServers=servers), events=events)
    return app, Bridge(app), events


async def call(bridge: Bridge, method: str, params: dict[str, Any]) -> Any:
    reply = await bridge.handle({"id": 1, "method": method, "params": params})
    assert reply is not None
    if "error" in reply:
        raise AssertionError(reply["error"])
    return reply["result"]


def advertised(app: MokaApp) -> Any:
    """The elicitation capability Moka sent: in ``initialize`` (legacy) or in a request's ``_meta`` (2026-07-28)."""
    for ev in app.inspector.query(limit=5000):
        msg = ev.get("message")
        if ev.get("direction") != "out" or not isinstance(msg, dict):
            continue
        params = msg.get("params") or {}
        if msg.get("method") == "initialize":
            return params["capabilities"].get("elicitation")
        caps = (params.get("_meta") or {}).get("io.modelcontextprotocol/clientCapabilities")
        if msg.get("method") == "tools/call" and caps is not None:
            return caps.get("elicitation")
    raise AssertionError("no initialize or tools/call on the wire")


def requests_of(events: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    return [d for e, d in events if e == "elicitation.request"]


@pytest.mark.anyio
@pytest.mark.parametrize(("flags", "era"), ERAS)
async def test_form_answered_in_the_runner(paths: Paths, tmp_path: Path, flags: list[str], era: str) -> None:
    """The form's schema and the run it belongs to reach the UI; a wrong answer is refused, a right one sent."""
    app, bridge, events = await start(paths, {"e": server_config(tmp_path / "log", flags)})
    try:
        assert app.servers.get("e").protocol_version == era
        run = asyncio.ensure_future(call(bridge, "tools.run", {"server": "e", "tool": "ask_person", "runId": "run-1"}))
        req = (await until(lambda: requests_of(events), "an elicitation.request"))[0]
        assert req["mode"] == "form" and req["server"] == "e" and req["where"] == "runner"
        assert req["callId"] == "run-1" and req["tool"] == "ask_person"
        assert "name and age" in req["message"]
        props = req["requestedSchema"]["properties"]
        assert set(props) == {"name", "age", "color", "subscribe"} and props["color"]["enum"] == ["red", "green", "blue"]
        assert await call(bridge, "elicitation.pending", {}) == [req]
        reply = await bridge.handle({"id": 2, "method": "elicitation.answer",
                                     "params": {"requestId": req["requestId"], "action": "accept",
                                                "content": {"name": "Ada", "age": "old"}}})
        assert reply is not None and "age" in reply["error"]["message"]  # the form is checked against the schema
        await call(bridge, "elicitation.answer", {"requestId": req["requestId"], "action": "accept",
                                                  "content": {"name": "Ada", "age": 36, "color": "blue",
                                                              "subscribe": True}})
        result = await asyncio.wait_for(run, 30)
        assert result["runId"] == "run-1"
        assert result["result"]["content"][0]["text"] == "accepted: name=Ada age=36 color=blue subscribe=True"
        assert ("elicitation.done", {"requestId": req["requestId"], "action": "accept", "callId": "run-1"}) in events
        assert await call(bridge, "elicitation.pending", {}) == []
        assert advertised(app) == {"form": {}, "url": {}}  # what is implemented, and only that
    finally:
        await app.stop()


@pytest.mark.anyio
@pytest.mark.parametrize(("flags", "era"), ERAS)
@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_form_declined_or_cancelled(paths: Paths, tmp_path: Path, flags: list[str], era: str,
                                          action: str) -> None:
    """Decline and Cancel reach the server as such (its tool says which it got)."""
    app, bridge, events = await start(paths, {"e": server_config(tmp_path / "log", flags)})
    try:
        run = asyncio.ensure_future(call(bridge, "tools.run", {"server": "e", "tool": "ask_person"}))
        req = (await until(lambda: requests_of(events), "an elicitation.request"))[0]
        await call(bridge, "elicitation.answer", {"requestId": req["requestId"], "action": action,
                                                  "content": {"ignored": True}})
        result = await asyncio.wait_for(run, 30)
        assert result["result"]["content"][0]["text"] == ("declined" if action == "decline" else "cancelled")
    finally:
        await app.stop()


@pytest.mark.anyio
@pytest.mark.parametrize(("flags", "era"), ERAS)
async def test_url_opens_only_after_consent(paths: Paths, tmp_path: Path, flags: list[str], era: str) -> None:
    """URL mode shows the message, the address and its host; only Accept opens it (through link.open)."""
    app, bridge, events = await start(paths, {"e": server_config(tmp_path / "log", flags)})
    try:
        for action in ("decline", "accept"):
            seen = len(requests_of(events))
            run = asyncio.ensure_future(call(bridge, "tools.run", {"server": "e", "tool": "connect_account"}))
            req = (await until(lambda: requests_of(events)[seen:], "a URL elicitation"))[0]
            assert req["mode"] == "url" and req["url"] == "https://example.com/connect?account=42"
            assert req["domain"] == "example.com" and "Sign in at example.com" in req["message"]
            assert not [d for e, d in events if e == "link.open"]  # nothing opens before the answer
            await call(bridge, "elicitation.answer", {"requestId": req["requestId"], "action": action})
            result = await asyncio.wait_for(run, 30)
            assert result["result"]["content"][0]["text"] == f"url {action}"
        assert [d for e, d in events if e == "link.open"] == [{"url": "https://example.com/connect?account=42"}]
    finally:
        await app.stop()


@pytest.mark.anyio
@pytest.mark.parametrize(("flags", "era"), ERAS)
async def test_stopping_the_run_ends_the_open_question(paths: Paths, tmp_path: Path, flags: list[str], era: str) -> None:
    """Stop while the form is open: the run ends as stopped and the card is told to go (elicitation.done)."""
    app, bridge, events = await start(paths, {"e": server_config(tmp_path / "log", flags)})
    try:
        run = asyncio.ensure_future(call(bridge, "tools.run", {"server": "e", "tool": "ask_person", "runId": "r9"}))
        req = (await until(lambda: requests_of(events), "an elicitation.request"))[0]
        assert await call(bridge, "tools.stop", {"runId": "r9"}) == {"stopped": True}
        assert await asyncio.wait_for(run, 30) == {"runId": "r9", "stopped": True}
        await until(lambda: ("elicitation.done", {"requestId": req["requestId"], "action": "cancel", "callId": "r9"})
                    in events, "elicitation.done after Stop")
        assert app.elicitations.pending() == []
    finally:
        await app.stop()


@pytest.mark.anyio
@pytest.mark.parametrize(("flags", "era"), ERAS)
async def test_nobody_to_ask_refuses_at_once(paths: Paths, tmp_path: Path, flags: list[str], era: str) -> None:
    """With no UI listening the question is refused with a reason, not left waiting."""
    app = await start_app(paths, config=MokaConfig(mcpServers={"e": server_config(tmp_path / "log", flags)}),
                          store=False)
    try:
        conn = app.servers.get("e")
        try:
            result = await asyncio.wait_for(conn.call_tool("ask_person", {}), 30)
        except Exception as exc:  # 2026-07-28: the refusal fails the call itself
            text = str(exc)
        else:  # legacy: the server got the refusal as the error of its elicitation/create
            assert result.get("isError") is True
            text = json.dumps(result)
        assert "nobody can answer it here" in text and "reconnecting" not in text
        assert conn.status == "ready"  # a refusal is not a dead connection
        assert len(app.elicitations.unanswered) == 1 and "'e' asked you a question" in app.elicitations.unanswered[0]
    finally:
        await app.stop()


def test_moka_call_refuses_with_a_clear_message(tmp_path: Path) -> None:
    """`moka call` cannot show a form: it says so and exits 1 instead of hanging."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"mcpServers": {"e": {"command": sys.executable,
                                                       "args": [str(SERVER), str(tmp_path / "log")]}}}))
    env = {**os.environ, "MOKA_CONFIG": str(config), "MOKA_DATA_DIR": str(tmp_path / "data")}
    proc = subprocess.run([sys.executable, "-m", "moka_shell", "--config", str(config), "--data-dir",
                           str(tmp_path / "data"), "call", "e", "ask_person"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    assert "'e' asked you a question (form elicitation" in out and "nobody can answer it here" in out
    assert "connection closed" not in out


def test_answers_are_checked() -> None:
    """Only what the schema allows is sent; URL mode opens only http(s) addresses."""
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]}
    assert check_content(schema, {"n": 2}) == {"n": 2}
    for bad in ({}, {"n": 0}, {"n": {"deep": 1}}, ["n"]):
        with pytest.raises(InvalidParamsError):
            check_content(schema, bad)
    assert check_url("https://a.example/x?y=1").host == "a.example"
    # Read as browsers read it (finding G2): a backslash is a slash, so this is a page of evil.example.
    link = check_url("https://evil.example\\@accounts.google.com/login")
    assert (link.host, link.url) == ("evil.example", "https://evil.example/@accounts.google.com/login")
    assert check_url("https://\u0430ccounts.google.com:8443/").host == "xn--ccounts-1fg.google.com:8443"
    for bad_url in ("javascript:alert(1)", "file:///etc/passwd", "https://", "https://a.example/x y",
                    "https://accounts.google.com@evil.example/", "http://acc\tounts.google.com/", "https://a!b.example/"):
        with pytest.raises(ElicitationRefusedError):
            check_url(bad_url)


def test_moka_chat_refuses_and_reports_it(tmp_path: Path) -> None:
    """`moka chat`: the model's call asks the person; the turn goes on at once and the refusal is reported."""
    from moka_shell.testing.fake_openai import FakeOpenAIServer

    config = tmp_path / "config.json"
    with FakeOpenAIServer() as srv:
        srv.tool_then_reply("ask_person", {}, "I could not ask you.")
        config.write_text(json.dumps({
            "mcpServers": {"e": {"command": sys.executable, "args": [str(SERVER), str(tmp_path / "log")]}},
            "agent": {"backend": "ollama", "model": "m", "baseUrls": {"ollama": srv.base_url}}}))
        env = {**os.environ, "MOKA_CONFIG": str(config), "MOKA_DATA_DIR": str(tmp_path / "data")}
        proc = subprocess.run([sys.executable, "-m", "moka_shell", "chat", "--approve", "all", "greet me"],
                              capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "tool call: e/ask_person {} [error]" in proc.stdout and "assistant: I could not ask you." in proc.stdout
    assert "not allowed: 'e' asked you a question (form elicitation" in proc.stdout


@pytest.mark.anyio
async def test_a_check_run_refuses_even_with_a_page_listening(paths: Paths, tmp_path: Path) -> None:
    """`moka check` has a page (its headless one) but no person: the question is refused, not shown."""
    events = EventRecorder()
    app = await start_app(paths, config=MokaConfig(mcpServers={"e": server_config(tmp_path / "log", [])}),
                          mode="check", events=events, store=False)
    try:
        with pytest.raises(Exception, match="nobody can answer it here"):
            await asyncio.wait_for(app.servers.get("e").call_tool("ask_person", {}), 30)
    finally:
        await app.stop()
    assert not requests_of(events)
