"""Watching config.json while Moka runs, so what others write there reaches the running app.

A terminal (``moka servers add``), an editor or a second Moka may write the file at any time.
A cheap stat every second notices it; the file is then merged (ConfigFile.reload) and the
servers that were added, removed or changed are connected, stopped or restarted.

Moka's own saves go through here too (``save``). One that can't be done now (a file left broken
by an editor, a full disk) never loses the change: it stays in use, the person is told
(``config.problem`` with ``unsaved``, and app.info), and every poll tries again until it is saved.
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
        self._unsaved: ConfigError | None = None  # why this process's changes are not in the file yet

    @property
    def problem(self) -> str | None:
        """Why changes made here are not saved yet (kept, and tried again each poll), or None."""
        if self._unsaved is None:
            return None
        return f"{self._unsaved} — your changes are in use, and Moka saves them as soon as it can"

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

    def save(self) -> None:
        """Save the changes made here (the UI's), bringing in what others wrote; kept and retried if it can't be now.

        Without a running watch (a short command) nobody would try again, so the error goes to the caller.
        """
        try:
            change = self.file.save()
        except ConfigError as exc:
            if self._task is None:
                raise
            self._unsaved = exc
            self._report(exc, unsaved=True)
            return
        if self._unsaved is not None:
            self._unsaved = None
            self.emit("config.saved", {})
        self._problem = None
        self.apply(change)

    def check(self) -> None:
        """Reload the file if someone else wrote it, and apply what changed (or save what is waiting)."""
        if self._unsaved is not None:
            self.save()  # re-reads the file first: a repaired file is taken over and merged
            return
        if not self.file.changed_on_disk():
            return
        try:
            change = self.file.reload()
        except ConfigError as exc:
            self._report(exc, unsaved=False)  # a file broken by hand: the last good config stays in use
            return
        self._problem = None
        self.apply(change)

    def _report(self, exc: ConfigError, *, unsaved: bool) -> None:
        """Say a problem once (until it changes or goes away)."""
        said = f"{'unsaved' if unsaved else 'unread'}: {exc}"  # a change kept is news even when the file's state is not
        if said == self._problem:
            return
        self._problem = said
        log.warning("config %s: %s", "not saved yet" if unsaved else "not reloaded", exc)
        self.emit("config.problem", {**to_jsonrpc(exc), "unsaved": unsaved})

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
