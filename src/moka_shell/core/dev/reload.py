"""Live reload for ``moka dev``: a change of the server's files restarts it and re-renders its views.

One reload: the old frames are told they go (``ui/resource-teardown``, briefly) while the server
restarts; once it is ready its ``ui://`` resources are read again (a new connection starts with an
empty cache) and every open view of it is re-rendered with the same input and result, in the same
card (core/views/reload.py). Moka itself keeps running, so the Inspector keeps its history.

A broken edit loses nothing: when the server does not come up, its row says why (the connection's
error, with the server's last words) and each view card says the reload failed, showing the last
good version; the next good edit reloads them all again. Each step is pushed as a ``dev.reload``
event and recorded in the Inspector (channel ``server``, method ``dev/reload``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moka_shell.core.dev.watch import FileWatch
from moka_shell.core.views.reload import reloadable, reload_views, tear_down

if TYPE_CHECKING:
    from moka_shell.core.app import MokaApp

log = logging.getLogger("moka.dev")
READY_GRACE = 5.0  # seconds beyond the server's connect deadline that a reload waits for it
FILES_SHOWN = 20  # changed files named in one event


class DevReload:
    """Watches ``roots`` and reloads ``server`` (a configured server of ``app``) on every change."""

    def __init__(self, app: MokaApp, server: str, roots: Sequence[Path], *, watch: FileWatch | None = None) -> None:
        self.app = app
        self.server = server
        self.roots = [Path(r).resolve() for r in roots]
        self.watch = watch or FileWatch(self.roots)
        self.reloads = 0
        self.last: dict[str, Any] | None = None  # the newest dev.reload event
        self.stamps: dict[str, float] = {}  # the newest reload's steps, perf_counter seconds (bench/reload.py)
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> int:
        """Take the first scan and start watching; returns how many files are watched."""
        self.app.servers.get(self.server)  # UnknownServerError before anything starts
        self.app.view_host.retention.keep_failed(self.server)
        count = await self.watch.start()
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"dev:{self.server}")
        return count

    async def stop(self) -> None:
        """Stop watching (a reload under way is cancelled)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self) -> None:
        async for changed in self.watch.changes():
            try:
                await self.reload(changed)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a bug in one reload must not end the watching
                log.exception("reloading %r failed", self.server)
                self._tell("failed", changed, error=f"Moka could not reload the server: {exc}")

    def _shown(self, changed: Sequence[str]) -> list[str]:
        out = []
        for p in list(changed)[:FILES_SHOWN]:
            path = Path(p)
            root = next((r for r in self.roots if path.is_relative_to(r)), None)
            out.append(str(path.relative_to(root)) if root is not None and path != root else path.name)
        return out

    def _tell(self, state: str, changed: Sequence[str], **extra: Any) -> dict[str, Any]:
        event = {"server": self.server, "state": state, "reload": self.reloads, "files": self._shown(changed),
                 **extra}
        self.last = event
        self.app.inspector.record("server", event, server=self.server, method="dev/reload")
        self.app.emit("dev.reload", event)
        return event

    async def reload(self, changed: Sequence[str] = ()) -> dict[str, Any]:
        """Restart the server and re-render its views; the ``dev.reload`` event that says how it went."""
        self.reloads += 1
        started = time.perf_counter()
        self.stamps = {"started": started}
        host = self.app.view_host
        conn = self.app.servers.get(self.server)
        views = reloadable(host, self.server)
        self._tell("restarting", changed, viewIds=[v.id for v in views])
        await asyncio.gather(conn.restart(), *(tear_down(host, v) for v in views))
        ready = await conn.wait_ready(conn.connect_timeout + READY_GRACE)
        ready_at = self.stamps["ready"] = time.perf_counter()
        if not ready:
            return self._tell("failed", changed, viewIds=[v.id for v in views],
                              error=f"the server did not start: {conn.error or conn.status}",
                              seconds={"ready": round(ready_at - started, 3)})
        views = reloadable(host, self.server)  # one closed meanwhile is not brought back
        errors = await reload_views(host, views)
        self.stamps["announced"] = time.perf_counter()
        return self._tell("reloaded", changed, viewIds=[v.id for v in views], errors=errors,
                          seconds={"ready": round(ready_at - started, 3),
                                   "views": round(time.perf_counter() - ready_at, 3)})
