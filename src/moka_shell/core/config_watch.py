"""Watching config.json while Moka runs, so what others write there reaches the running app.

A terminal (``moka servers add``), an editor or a second Moka may write the file at any time.
A cheap stat every second notices it; the file is then merged (ConfigFile.reload) and the
servers that were added, removed or changed are connected, stopped or restarted.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from moka_shell.config import ConfigChange, ConfigFile
from moka_shell.core.mcp.servers import ServerManager
from moka_shell.errors import ConfigError, MokaError, to_jsonrpc

log = logging.getLogger("moka")
POLL_SECONDS = 1.0


class ConfigWatch:
    """Polls the config file on the core loop and applies what changed to the app."""

    def __init__(self, file: ConfigFile, servers: ServerManager, emit: Callable[[str, Any], None],
                 on_theme: Callable[[], None], interval: float = POLL_SECONDS) -> None:
        self.file = file
        self.servers = servers
        self.emit = emit
        self.on_theme = on_theme
        self.interval = interval
        self._task: asyncio.Task[None] | None = None
        self._syncing = asyncio.Lock()
        self._pending: set[asyncio.Task[None]] = set()
        self._problem: str | None = None

    def start(self) -> None:
        """Start polling (on the running loop)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="moka:config-watch")

    async def stop(self) -> None:
        """Stop polling and wait for server changes under way."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        await asyncio.gather(*self._pending, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            self.check()

    def check(self) -> None:
        """Reload the file if someone else wrote it, and apply what changed."""
        if not self.file.changed_on_disk():
            return
        try:
            change = self.file.reload()
        except ConfigError as exc:
            # Often a file half-way through an edit: say so once, keep the last good config.
            if str(exc) != self._problem:
                self._problem = str(exc)
                log.warning("config not reloaded: %s", exc)
                self.emit("config.problem", to_jsonrpc(exc))
            return
        self._problem = None
        self.apply(change)

    def apply(self, change: ConfigChange) -> None:
        """Bring changes another writer made (found by a reload or a save) into the app."""
        if not change:
            return
        if change.servers:
            task = asyncio.get_running_loop().create_task(self._sync(sorted(change.servers)))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)
        if "theme" in change.keys:
            self.on_theme()
        self.emit("config.changed", {"servers": sorted(change.servers), "keys": sorted(change.keys)})

    async def _sync(self, names: list[str]) -> None:
        async with self._syncing:  # one reload's servers at a time, in order
            for name in names:
                cfg = self.file.config.mcp_servers.get(name)
                try:
                    if cfg is None:
                        if name in self.servers.connections:
                            await self.servers.remove(name)
                    elif name not in self.servers.connections or self.servers.connections[name].config != cfg:
                        await self.servers.add(name, cfg)
                except MokaError as exc:  # e.g. a transport no plugin provides: that server only
                    log.warning("server %s from the config file: %s", name, exc)
