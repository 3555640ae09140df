"""An MCP transport to a server object in this process: the real protocol, no child process.

The idea is httpx's ``MockTransport``: the client side is Moka's real connection code, the other
end is a real ``mcp`` server (``moka_shell.demo.server.build_server()``, say), and between them
are the SDK's in-memory streams instead of a pipe. Register it with a plugin object::

    memory = InMemoryTransport(demo.build_server)
    host = PluginHost(extra=[memory.plugin()])
    config = MokaConfig(mcpServers={"demo": ServerConfig(type="memory")})
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, TextIO

# The SDK's own in-memory transport (what ``mcp.Client(server)`` uses). Its module is private,
# but it runs the server and shuts it down on EOF with care we should not copy.
from mcp.client._memory import InMemoryTransport as _SdkInMemoryTransport
from mcp.server import Server
from mcp.server.mcpserver import MCPServer

from moka_shell.config import ServerConfig
from moka_shell.hookspecs import RegisterTransport, hookimpl

AnyServer = Server[Any] | MCPServer

__all__ = ["InMemoryTransport", "TransportPlugin"]


class InMemoryTransport:
    """A ``Transport`` whose servers run in this process, on the core's own event loop.

    Give it a server, or a factory that builds one: with a factory every connection (and every
    reconnect) gets a fresh server, as a restarted child process would.
    """

    def __init__(self, server: AnyServer | Callable[[], AnyServer], transport_id: str = "memory") -> None:
        self.transport_id = transport_id
        self._server = server
        self.opened = 0  # connections opened so far: lets a test see a reconnect

    def open(self, config: ServerConfig, errlog: TextIO) -> AbstractAsyncContextManager[tuple[Any, Any]]:
        """The SDK's in-memory streams to a running server (``errlog`` is unused: no child, no stderr)."""
        server = self._server if isinstance(self._server, (Server, MCPServer)) else self._server()
        self.opened += 1
        return _SdkInMemoryTransport(server)

    def plugin(self) -> TransportPlugin:
        """A plugin object that registers this transport (pass it in ``PluginHost(extra=[...])``)."""
        return TransportPlugin(self)


class TransportPlugin:
    """A plugin registering the given transports through ``register_transports``."""

    def __init__(self, *transports: InMemoryTransport) -> None:
        self.transports = transports
        # PluginHost names an extra plugin by its __name__; one per set of transport ids.
        self.__name__ = "testing-transports:" + ",".join(t.transport_id for t in transports)

    @hookimpl
    def register_transports(self, register: RegisterTransport) -> None:
        """Register each transport."""
        for transport in self.transports:
            register(transport)
