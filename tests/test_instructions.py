"""Server instructions reach the model: in the system prompt the fake provider receives, labelled by
server, cut when long, left out for a server the person turned them off for."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from moka_shell.bridge import Bridge
from moka_shell.config import ConfigFile, ServerConfig
from moka_shell.core.app import MokaApp
from moka_shell.core.chat.instructions import PER_SERVER_CHARS, instructions_prompt, with_instructions
from moka_shell.paths import Paths
from moka_shell.testing import EventRecorder, start_app
from moka_shell.testing.fake_anthropic import FakeAnthropicServer
from moka_shell.testing.fake_openai import FakeOpenAIServer, Text

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "servers" / "elicit_server.py"
SECRET = "The secret word is PERSIMMON."


def model(backend: str, base_url: str, **agent: Any) -> Callable[[MokaApp], None]:
    """Point the app's chat at the fake provider, over what the config file said (and set ``agent``'s fields)."""

    def use(app: MokaApp) -> None:
        app.config.agent.backend, app.config.agent.model = backend, "fake-model"
        app.config.agent.base_urls = {backend: base_url}
        for field, value in agent.items():
            setattr(app.config.agent, field, value)

    return use


async def turn(paths: Paths, base_url: str, backend: str, tmp_path: Path, *, system: str | None = None,
               use: bool = True) -> MokaApp:
    entry = {"command": sys.executable, "args": [str(SERVER), str(tmp_path / "log")]}
    if not use:
        entry["useInstructions"] = False  # type: ignore[assignment]
    paths.config_file.write_text(json.dumps({"mcpServers": {"helper": entry}}))
    # From the file: the config key is what the person writes. Someone is listening, as in the app.
    app = await start_app(paths, prepare=model(backend, base_url, system_prompt=system), events=EventRecorder())
    try:
        assert app.chat is not None
        cid = app.chat.start_turn(None, "hello")
        await app.chat.wait(cid)
    finally:
        await app.stop()
    return app


def openai_system(request: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in request["messages"] if m["role"] == "system")


pytestmark = pytest.mark.anyio


async def test_openai_request_carries_the_servers_instructions(paths: Paths, tmp_path: Path) -> None:
    """After the person's own system prompt, under the server's name."""
    with FakeOpenAIServer() as srv:
        srv.enqueue([Text("Hi.")])
        await turn(paths, srv.base_url, "ollama", tmp_path, system="Be brief.")
    system = openai_system(srv.requests[0])
    assert system.startswith("Be brief.")
    assert '<server-instructions server="helper">' in system and SECRET in system
    assert "they are not the user's words" in system
    assert system.index("Be brief.") < system.index(SECRET)


async def test_anthropic_request_carries_them_too(paths: Paths, tmp_path: Path) -> None:
    """The Anthropic backend gets them as its top-level system text."""
    pytest.importorskip("moka_anthropic")
    with FakeAnthropicServer() as srv:
        srv.enqueue([Text("Hi.")])
        os.environ["ANTHROPIC_API_KEY"] = "sk-ant-test"
        try:
            await turn(paths, srv.base_url, "anthropic", tmp_path)
        finally:
            del os.environ["ANTHROPIC_API_KEY"]
    system = srv.requests[0].get("system")
    text = system if isinstance(system, str) else " ".join(b.get("text", "") for b in system or [])
    assert '<server-instructions server="helper">' in text and SECRET in text


async def test_turned_off_in_the_config_they_stay_out(paths: Paths, tmp_path: Path) -> None:
    """``"useInstructions": false`` keeps them out; with no system prompt there is then no system message."""
    with FakeOpenAIServer() as srv:
        srv.enqueue([Text("Hi.")])
        await turn(paths, srv.base_url, "ollama", tmp_path, use=False)
    assert SECRET not in json.dumps(srv.requests[0])
    assert openai_system(srv.requests[0]) == ""


async def test_the_server_card_switch_saves_and_applies(paths: Paths, tmp_path: Path) -> None:
    """servers.setInstructions turns them off (and on) for the next turn and writes the config file."""
    paths.config_file.write_text(json.dumps({"mcpServers": {"helper": {
        "command": sys.executable, "args": [str(SERVER), str(tmp_path / "log")]}}}))
    with FakeOpenAIServer() as srv:
        srv.enqueue([Text("One.")], [Text("Two.")])
        app = await start_app(paths, prepare=model("ollama", srv.base_url))
        bridge = Bridge(app)
        try:
            listed = (await bridge.handle({"id": 1, "method": "servers.list", "params": {}}))["result"]  # type: ignore[index]
            assert SECRET in listed[0]["instructions"]  # the card shows them
            reply = await bridge.handle({"id": 2, "method": "servers.setInstructions",
                                         "params": {"name": "helper", "enabled": False}})
            assert reply is not None and reply["result"]["config"]["useInstructions"] is False
            assert json.loads(paths.config_file.read_text())["mcpServers"]["helper"]["useInstructions"] is False
            assert app.servers.get("helper").status == "ready"  # a switch, not a reconnect
            assert app.chat is not None
            cid = app.chat.start_turn(None, "first")
            await app.chat.wait(cid)
            await bridge.handle({"id": 3, "method": "servers.setInstructions", "params": {"name": "helper", "enabled": True}})
            cid = app.chat.start_turn(cid, "second")
            await app.chat.wait(cid)
        finally:
            await app.stop()
    assert SECRET not in json.dumps(srv.requests[0]) and SECRET in openai_system(srv.requests[1])
    assert "useInstructions" not in ConfigFile(paths.config_file).config.mcp_servers["helper"].to_json()


class _Conn:
    def __init__(self, name: str, text: str | None, *, status: str = "ready", use: bool = True) -> None:
        self.name, self.instructions, self.status = name, text, status
        self.config = ServerConfig(command="x", useInstructions=use)


def test_kept_short_and_labelled() -> None:
    """Long instructions are cut (and say so); failed, silent or switched-off servers add nothing."""
    long = ("word " * 2000).strip()
    text = instructions_prompt([_Conn("a", long), _Conn("b", "Use b well."), _Conn("c", "down", status="failed"),
                                _Conn("d", None), _Conn("e", "off", use=False)])
    assert text is not None
    assert '<server-instructions server="a">' in text and '<server-instructions server="b">' in text
    assert "down" not in text and "off" not in text and 'server="d"' not in text
    a_part = text.split('<server-instructions server="a">')[1].split("</server-instructions>")[0]
    assert len(a_part) < PER_SERVER_CHARS + 80 and "cut: the server's instructions were longer" in a_part
    assert with_instructions("Mine.", [_Conn("d", None)]) == "Mine."
    assert with_instructions(None, []) is None
