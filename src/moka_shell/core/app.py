"""MokaApp: the core object. Owns plugins, config, servers, views, chat, store and the event bus.

Everything stateful lives on one asyncio loop. Front ends (the pywebview shell, the
browser-mode WebSocket, headless checks) talk to it only through ``moka_shell.bridge``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from moka_shell.config import ConfigFile, MokaConfig
from moka_shell.core.servers import ServerManager
from moka_shell.errors import ConfigError
from moka_shell.inspector import Inspector
from moka_shell.paths import Paths
from moka_shell.plugins import PluginHost, Registered

log = logging.getLogger("moka")
Listener = Callable[[str, dict[str, Any]], None]


class MokaApp:
    """The running application core (create it, then ``await app.start()`` on its loop)."""

    def __init__(self, paths: Paths, *, plugins: PluginHost | None = None, config: MokaConfig | None = None,
                 mode: str = "headless", connect_timeout: float | None = None) -> None:
        self.paths = paths
        self.mode = mode
        self.plugins = plugins or PluginHost()
        self.config_file: ConfigFile | None = None
        if config is None:
            self.config_file = ConfigFile(paths.config_file)
            config = self.config_file.config
        self.config = config
        self.inspector = Inspector(paths.inspector_dir)
        self.transports = self.plugins.collect("register_transports", "transport_id")
        self.backends = self.plugins.collect("register_agent_backends", "backend_id")
        self.themes = self.plugins.collect("register_themes", "theme_id")
        self.display_modes = self.plugins.collect("register_display_modes", "mode_id")
        self.servers = ServerManager(self.transports, self.inspector, self._servers_changed,
                                     connect_timeout=connect_timeout)
        self.problems: list[ConfigError] = []
        self._listeners: list[Listener] = []
        self.loop: asyncio.AbstractEventLoop | None = None
        self.sandbox_origin = ""
        self.host_origin = ""
        # Set in start(): these need the loop.
        from moka_shell.core.apphost import AppHost

        self.apphost = AppHost(self)
        self.chat: Any = None
        self.store: Any = None

    # ---- events ------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every pushed UI event; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def emit(self, event: str, data: dict[str, Any] | list[Any]) -> None:
        """Push an event to every front end."""
        for listener in list(self._listeners):
            try:
                listener(event, data)  # type: ignore[arg-type]
            except Exception:  # one broken front end must not stop the others
                log.exception("event listener failed for %s", event)

    def _servers_changed(self) -> None:
        self.emit("servers.changed", self.servers.infos())  # type: ignore[arg-type]

    # ---- lifecycle ---------------------------------------------------------------------------

    async def start(self, *, servers: list[str] | None = None, store: bool = True) -> None:
        """Load servers and start connecting (only ``servers`` when given)."""
        self.loop = asyncio.get_running_loop()
        wanted = self.config.mcp_servers
        if servers is not None:
            wanted = {n: c for n, c in wanted.items() if n in servers}
        self.problems = self.servers.load(wanted)
        self.servers.start_all()
        if store:
            from moka_shell.core.chat import ChatEngine
            from moka_shell.core.store import Store

            self.store = Store(self.paths.database)
            self.chat = ChatEngine(self)
        self.plugins.call_each("moka_startup", app=self)

    async def stop(self) -> None:
        """Tear down views, stop servers, flush the inspector."""
        self.plugins.call_each("moka_shutdown", app=self)
        try:
            await asyncio.wait_for(self.apphost.close_all(), timeout=5)
        except asyncio.TimeoutError:
            pass
        await self.servers.stop_all()
        if self.store is not None:
            self.store.close()
        self.inspector.close()

    def save_config(self) -> None:
        """Persist config changes made through the UI or CLI."""
        if self.config_file is not None:
            self.config_file.config = self.config
            self.config_file.save()

    def registered(self, kind: str) -> dict[str, Registered[Any]]:
        """One of the registries by name (transports, backends, themes, display_modes)."""
        return dict(getattr(self, kind))
