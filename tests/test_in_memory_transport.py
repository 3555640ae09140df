"""moka_shell.testing.memory: a real mcp server object reached through Moka's own connection code."""

from __future__ import annotations

from typing import Any

import pytest

from moka_shell.config import MokaConfig, ServerConfig
from moka_shell.core.app import MokaApp
from moka_shell.core.mcp.transport import Transport
from moka_shell.demo import server as demo
from moka_shell.paths import Paths
from moka_shell.plugins import PluginHost
from moka_shell.testing import start_app
from moka_shell.testing.memory import InMemoryTransport, TransportPlugin

pytestmark = pytest.mark.anyio


async def started(paths: Paths, memory: InMemoryTransport, servers: dict[str, ServerConfig]) -> MokaApp:
    app = await start_app(paths, config=MokaConfig(mcpServers=servers),
                          plugins=PluginHost(load_entrypoints=False, extra=[memory.plugin()]), store=False,
                          endpoints=None, ready_within=10)
    return app


def test_it_is_a_transport_and_registers_through_the_hook() -> None:
    """The plugin object goes through register_transports like any installed transport."""
    memory = InMemoryTransport(demo.build_server)
    assert isinstance(memory, Transport)
    host = PluginHost(load_entrypoints=False, extra=[memory.plugin()])
    transports = host.registry("transports")
    assert transports["memory"].obj is memory and transports["memory"].plugin == "testing-transports:memory"
    assert {"stdio", "http"} <= set(transports)
    assert host.infos["testing-transports:memory"].hooks == ["register_transports"] and not host.broken()


def test_a_memory_server_config_needs_no_command() -> None:
    """`type: "memory"` names the transport; the stdio and HTTP requirements do not apply."""
    config = ServerConfig.model_validate({"type": "memory"})
    assert config.transport_id == "memory"


async def test_moka_lists_and_calls_the_demo_server_in_memory(paths: Paths) -> None:
    """Handshake, tool list, UI resource and a tool call, all through ServerConnection."""
    memory = InMemoryTransport(demo.build_server)
    app = await started(paths, memory, {"moka-demo": ServerConfig(type="memory")})
    try:
        conn = app.servers.get("moka-demo")
        assert conn.status == "ready" and conn.server_info and conn.server_info["name"] == demo.NAME
        assert "roll_dice" in conn.tools
        ui = await conn.ui_resource("ui://moka-demo/dice")
        assert "ui/initialize" in ui.html
        result = await conn.call_tool("roll_dice", {"sides": 6, "count": 3})
        assert result["structuredContent"]["count"] == 3
    finally:
        await app.stop()
    assert conn.status == "stopped" and memory.opened == 1


async def test_every_message_reaches_the_inspector(paths: Paths) -> None:
    """The in-memory streams are wrapped like any transport's: the inspector sees both directions."""
    seen: list[dict[str, Any]] = []
    memory = InMemoryTransport(demo.build_server)
    app = await start_app(paths, config=MokaConfig(mcpServers={"moka-demo": ServerConfig(type="memory")}),
                          plugins=PluginHost(load_entrypoints=False, extra=[memory.plugin()]), store=False,
                          endpoints=None, ready_within=10, prepare=lambda app: app.inspector.subscribe(seen.append))
    await app.stop()
    rpc = [(e.get("direction"), e.get("method")) for e in seen if e.get("channel") == "mcp.rpc"]
    assert ("out", "tools/list") in rpc and ("out", "resources/list") in rpc
    assert any(direction == "in" for direction, _ in rpc)


async def test_a_factory_gives_each_connection_a_fresh_server(paths: Paths) -> None:
    """Restarting builds a new server, so its state (the roll history) starts over, as a new child's would."""
    memory = InMemoryTransport(demo.build_server)
    app = await started(paths, memory, {"moka-demo": ServerConfig(type="memory")})
    try:
        conn = app.servers.get("moka-demo")
        await conn.call_tool("roll_dice", {"sides": 6, "count": 1})
        before = await conn.call_tool("dice_history", {})
        await conn.restart()
        assert await conn.wait_ready(timeout=10)
        after = await conn.call_tool("dice_history", {})
    finally:
        await app.stop()
    assert memory.opened == 2
    assert len(before["structuredContent"]["entries"]) == 1 and after["structuredContent"]["entries"] == []


async def test_several_memory_transports_by_id(paths: Paths) -> None:
    """One plugin may register several in-memory transports; each server config picks one by type."""
    one, two = InMemoryTransport(demo.build_server(), "memory-one"), InMemoryTransport(demo.build_server, "memory-two")
    servers = {"a": ServerConfig(type="memory-one"), "b": ServerConfig(type="memory-two")}
    app = await start_app(paths, config=MokaConfig(mcpServers=servers),
                          plugins=PluginHost(load_entrypoints=False, extra=[TransportPlugin(one, two)]), store=False,
                          endpoints=None, ready_within=10)
    try:
        assert {c.status for c in app.servers.connections.values()} == {"ready"}
    finally:
        await app.stop()
    assert (one.opened, two.opened) == (1, 1)
