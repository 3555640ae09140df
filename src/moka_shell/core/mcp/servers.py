"""The ServerManager: every configured MCP server, connected concurrently."""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from moka_shell.config import ServerConfig
from moka_shell.core.mcp.catalog import ToolEntry
from moka_shell.core.mcp.elicitation import Elicitor
from moka_shell.core.mcp.progress import CallTracker
from moka_shell.core.mcp.stderr import StderrPipe, StderrTail
from moka_shell.core.mcp.transport import Transport
from moka_shell.errors import ConfigError, ServerUnavailableError, UnknownServerError
from moka_shell.inspector import Inspector
from moka_shell.registered import Registered

if TYPE_CHECKING:
    from moka_shell.core.mcp.connection import ServerConnection
    from moka_shell.core.mcp.stdio_launch import EarlyStart

log = logging.getLogger(__name__)

CONNECTION_MODULE = "moka_shell.core.mcp.connection"  # it brings the MCP SDK (``import_sdk``)

STOP_ROUNDS = 3  # stop_all's passes: a server added during one pass is stopped by the next


def import_sdk() -> None:
    """Import the connection's modules and the MCP SDK with them (a second or so on a slow machine)."""
    importlib.import_module(CONNECTION_MODULE)


def starting_info(name: str, config: ServerConfig) -> dict[str, Any]:
    """A server whose connection is not made yet, as the UI shows it (the keys of ``ServerConnection.info``)."""
    return {"name": name, "status": "disabled" if config.disabled else "connecting",
            "transport": config.transport_id, "toolCount": 0, "stderr": [], "generation": 0,
            "config": config.to_json(), "logLevel": (config.model_extra or {}).get("logLevel", "info"),
            "logs": [], "roots": [], "listVersion": 0,
            "subscribed": [], "trustsAnnotations": config.annotations_trusted}


class ServerManager:
    """Owns one supervised ServerConnection per configured server."""

    def __init__(self, transports: dict[str, Registered[Transport]], inspector: Inspector,
                 on_change: Callable[[], None] | None = None, *, connect_timeout: float | None = None,
                 calls: CallTracker | None = None, elicitor: Elicitor | None = None,
                 on_resource_updated: Callable[[str, str], None] | None = None,
                 read_ui_ahead: bool = True) -> None:
        self.transports = transports
        self.inspector = inspector
        self.connections: dict[str, ServerConnection] = {}
        self._on_change = on_change or (lambda: None)
        self.connect_timeout = connect_timeout
        self.sampler: Callable[[str, dict[str, Any]], Any] | None = None  # offer_sampling: where a chat can answer
        # Told (server, uri) when a followed resource changed; MokaApp emits resource.updated.
        self.on_resource_updated: Callable[[str, str], None] = on_resource_updated or (lambda _server, _uri: None)
        # Which call each server is serving (progress, elicitation), and who answers servers' questions.
        self.calls = calls or CallTracker(lambda _event, _data: None)
        self.elicitor = elicitor
        self._closing = False  # stop_all has begun: connections made from now on never start
        self._expected: dict[str, ServerConfig] = {}  # configured, their connections not made yet (expect)
        self._early: dict[str, EarlyStart] = {}  # processes started before their connections (launch_early)
        # False in one-shot commands that never show a view (`moka tools`, `moka call`): the UI
        # resources are not read ahead after each listing; a view asking for one still reads it.
        self.read_ui_ahead = read_ui_ahead

    def expect(self, servers: dict[str, ServerConfig]) -> None:
        """List ``servers`` as connecting until ``load`` makes their connections (the page may ask first)."""
        self._expected = dict(servers)

    def offer_sampling(self, sampler: Callable[[str, dict[str, Any]], Any]) -> None:
        """Servers loaded from now on may ask the model (``sampling/createMessage``) through ``sampler``
        (``MokaApp.start``, in a run that keeps conversations, before any server is loaded)."""
        self.sampler = sampler

    async def launch_early(self, servers: dict[str, ServerConfig]) -> None:
        """Start the processes of ``servers`` whose transport can (stdio), before the MCP SDK loads.

        A server's interpreter and imports then run while Moka imports the SDK, instead of after it;
        ``load`` hands each process to its server's connection, whose first attempt adopts it.
        """
        from moka_shell.core.mcp.stdio_launch import EarlyStart

        for name, config in servers.items():
            reg = self.transports.get(config.transport_id)
            launch = getattr(reg.obj, "launch_early", None) if reg is not None else None
            if launch is None or config.disabled or self._closing or name in self.connections or name in self._early:
                continue
            tail = StderrTail()
            try:
                pipe = StderrPipe(name, tail, self._stderr_sink(name), stdio=True)
            except OSError:  # out of file descriptors: the connection tries again, and says why
                continue
            try:
                started = await launch(config, pipe.file)
            except Exception:  # a plugin's transport: its connection starts the usual way, and says what fails
                log.warning("starting server %r early failed; it starts with its connection", name, exc_info=True)
                started = None
            if started is None:
                pipe.close()
            else:
                self._early[name] = EarlyStart(tail, pipe, started)

    def _stderr_sink(self, name: str) -> Callable[[str], object]:
        """Where a server's stderr lines go besides its tail: the Inspector."""
        return lambda line: self.inspector.record("server", {"stderr": line}, server=name, method="stderr")

    def _make(self, name: str, config: ServerConfig) -> ServerConnection:
        # The SDK comes with the first connection made (the desktop imports it on a worker thread
        # first, import_sdk), so Moka's page is answered before it loads (performance.md §13).
        from moka_shell.core.mcp.connection import ServerConnection

        reg = self.transports.get(config.transport_id)
        if reg is None:
            raise ConfigError(
                "config", f"server {name!r} asks for transport {config.transport_id!r}, which no plugin provides "
                f"(available: {', '.join(sorted(self.transports))})", key_path=f"mcpServers.{name}.type",
                hint="install the plugin that provides it, or fix 'type'",
            )
        conn = ServerConnection(name, config, reg.obj, self.inspector, lambda _c: self._on_change(),
                                connect_timeout=self.connect_timeout, calls=self.calls, elicitor=self.elicitor,
                                sampler=self.sampler, early=self._early.pop(name, None),
                                stderr_sink=self._stderr_sink(name),
                                on_resource_updated=lambda server, uri: self.on_resource_updated(server, uri))
        conn.retired = self._closing  # added while Moka stops: kept in the config, started next run
        conn.listing.ui.ahead = self.read_ui_ahead
        return conn

    def load(self, servers: dict[str, ServerConfig]) -> list[ConfigError]:
        """Create connections for the configured servers; returns per-server problems."""
        problems: list[ConfigError] = []
        self._expected = {}
        for name, cfg in servers.items():
            try:
                self.connections[name] = self._make(name, cfg)
            except ConfigError as exc:
                problems.append(exc)
                self.inspector.record("server", {"error": str(exc)}, server=name, method="status/failed")
        return problems

    def start_all(self) -> None:
        """Start every enabled server's supervisor; they connect concurrently."""
        for conn in self.connections.values():
            conn.start()

    async def wait_ready(self, names: list[str] | None = None, timeout: float = 30.0) -> None:
        """Wait until the named (or all enabled) servers are ready or have failed."""
        conns = [self.get(n) for n in names] if names else [c for c in self.connections.values()
                                                            if not c.config.disabled]
        await asyncio.gather(*(c.wait_ready(timeout) for c in conns))

    async def stop_all(self) -> None:
        """Stop every connection for good (children are terminated), also one added while they stop."""
        self._closing = True
        early, self._early = list(self._early.values()), {}  # started, never handed to a connection
        await asyncio.gather(*(e.discard() for e in early), return_exceptions=True)
        for _ in range(STOP_ROUNDS):  # the bridge still answers while Moka stops: servers.add may add one
            going = [c for c in self.connections.values() if not c.retired or c.running]
            if not going:
                return
            await asyncio.gather(*(c.retire() for c in going), return_exceptions=True)

    def get(self, name: str) -> ServerConnection:
        """The connection named ``name`` or UnknownServerError."""
        try:
            return self.connections[name]
        except KeyError:
            raise UnknownServerError(name, sorted(self.connections)) from None

    def apply_settings(self, name: str, config: ServerConfig) -> ServerConnection:
        """A server's entry changed only in what needs no reconnect (instructions, eval): its connection
        reads ``config`` from now on."""
        conn = self.get(name)
        conn.config = config
        return conn

    def ready(self, name: str) -> ServerConnection:
        """The connection, which must be ready."""
        conn = self.get(name)
        if conn.status != "ready":
            raise ServerUnavailableError(name, conn.status, conn.error)
        return conn

    async def add(self, name: str, config: ServerConfig) -> ServerConnection:
        """Add (or replace) a server and start it."""
        if name in self.connections:
            await self.connections[name].stop()
        conn = self._make(name, config)
        self.connections[name] = conn
        conn.start()
        self._on_change()
        return conn

    async def remove(self, name: str) -> None:
        """Stop and forget a server."""
        conn = self.get(name)
        await conn.stop()
        del self.connections[name]
        self._on_change()

    async def set_enabled(self, name: str, enabled: bool) -> ServerConnection:
        """Enable (start) or disable (stop) a server."""
        conn = self.get(name)
        conn.config = conn.config.model_copy(update={"disabled": not enabled})
        if enabled:
            conn.start()
        else:
            await conn.stop()
        self._on_change()
        return conn

    def all_tools(self) -> list[ToolEntry]:
        """Every tool of every ready server."""
        return [t for c in self.connections.values() if c.status == "ready" for t in c.tools.values()]

    def infos(self) -> list[dict[str, Any]]:
        """Every server as the UI shows it."""
        return [c.info() for c in self.connections.values()] + [
            starting_info(name, config) for name, config in self._expected.items() if name not in self.connections]
