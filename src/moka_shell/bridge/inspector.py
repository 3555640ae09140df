"""Bridge methods for the inspector: pages of events, and export."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from moka_shell.bridge.params import Params, opt_int
from moka_shell.inspector import EventFilter, Page

if TYPE_CHECKING:
    from moka_shell.core.app import MokaApp


class InspectorMethods:
    """``inspector.*``."""

    def __init__(self, app: MokaApp) -> None:
        self.inspector = app.inspector

    def methods(self) -> dict[str, Any]:
        """Method name → coroutine function."""
        return {"inspector.query": self.query, "inspector.page": self.page, "inspector.export": self.export}

    @staticmethod
    def _filter(p: Params) -> EventFilter:
        return EventFilter(**{k: p.get(k) or None for k in ("channel", "server", "view", "method", "text")})

    async def _page(self, p: Params) -> Page:
        # At most 10,000 per call. On a worker thread (it works on a snapshot of the ring): a
        # filtered query looks at every event, and the loop must keep serving views meanwhile.
        return await asyncio.to_thread(self.inspector.page, self._filter(p),
                                       limit=min(opt_int(p, "limit") or 2000, 10_000),
                                       before=opt_int(p, "before"), after=opt_int(p, "after"))

    async def query(self, p: Params) -> list[dict[str, Any]]:
        """Events matching a filter (scripts and tests)."""
        return (await self._page(p)).events

    async def page(self, p: Params) -> dict[str, Any]:
        """A page of events for the Inspector screen, with counts and the cursor to older ones."""
        return {**(await self._page(p)).to_json(), "servers": sorted(self.inspector.servers)}

    async def export(self, p: Params) -> dict[str, Any]:
        """One chunk of the matching events as JSONL (``next`` → ``after`` for the following one)."""
        # In chunks: one reply for 100,000 events would be 40 MB of JSON, encoded on the loop in
        # the better part of a second.
        chunk = await asyncio.to_thread(self.inspector.export, self._filter(p), after=opt_int(p, "after"),
                                        limit=min(opt_int(p, "limit") or 5000, 20_000))
        name = time.strftime("moka-inspector-%Y%m%d-%H%M%S.jsonl")
        return {"filename": name, "count": chunk.count, "content": chunk.content, "next": chunk.next}
