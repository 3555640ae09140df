"""MCP Apps' UI resources (HTML, mime type, ``_meta.ui``): read after connecting, a few at a time, each capped.

Reading them is not part of connecting (finding R1.15: 8,000 resources read one by one under the
connect deadline never connected). After a refresh the cache prefetches what is new or changed with
at most ``CONCURRENCY`` reads in flight; a view that needs one reads it at once, sharing a read
already under way and overtaking one still queued for a slot.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from typing import Any

import pydantic
from mcp import Client, MCPError

from moka_shell.core.mcp.catalog import APP_MIME, UiResource, mime_is_app
from moka_shell.core.mcp.sdk import describe_exception, dump

CONCURRENCY = 4  # ui:// reads in flight per server
MAX_UI_BYTES = 24 * 1024 * 1024  # one view's HTML; bigger is refused with a message (R1.17)


def _too_big(uri: str, size: int) -> str:
    return (f"{uri} is {size / 1048576:.1f} MiB of HTML; Moka shows views of at most {MAX_UI_BYTES // 1048576} MiB "
            "(inline fewer assets, or load them from a domain the resource's CSP declares)")


async def read_ui_resource(client: Client, uri: str, listing_ui: dict[str, Any]) -> UiResource:
    """Read one ``ui://`` resource; a problem is kept in the result's ``error``, never raised."""
    try:
        res = await client.read_resource(uri)
    except (MCPError, pydantic.ValidationError, RuntimeError) as exc:
        return UiResource(uri, None, None, {}, error=f"resources/read {uri} failed: {describe_exception(exc)}")
    if not res.contents:
        return UiResource(uri, None, None, listing_ui, error=f"resources/read {uri} returned no contents")
    item = res.contents[0]
    data = dump(item)
    content_meta = data.get("_meta") or data.get("meta") or {}
    ui_meta = content_meta.get("ui") if isinstance(content_meta.get("ui"), dict) else listing_ui
    mime = data.get("mimeType")
    if not mime_is_app(mime):
        return UiResource(uri, None, mime, ui_meta or {},
                          error=f"{uri} has mime type {mime!r}; an MCP App must be exactly {APP_MIME!r}")
    if "text" in data:
        html = data["text"]
    else:
        blob = data.get("blob", "")
        if len(blob) * 3 // 4 > MAX_UI_BYTES:
            return UiResource(uri, None, mime, ui_meta or {}, error=_too_big(uri, len(blob) * 3 // 4))
        try:
            html = base64.b64decode(blob).decode("utf-8")
        except (ValueError, UnicodeDecodeError) as exc:
            return UiResource(uri, None, mime, ui_meta or {}, error=f"{uri}: blob is not base64 UTF-8 HTML ({exc})")
    size = len(html.encode("utf-8"))
    if size > MAX_UI_BYTES:
        return UiResource(uri, None, mime, ui_meta or {}, error=_too_big(uri, size))
    return UiResource(uri, html, mime, ui_meta or {})


class UiCache:
    """The UI resources of one server: what was read, and reads under way (at most ``CONCURRENCY``)."""

    def __init__(self) -> None:
        self.entries: dict[str, UiResource] = {}
        self._pending: dict[str, asyncio.Task[UiResource]] = {}
        self._reading: set[str] = set()  # pending reads that hold a slot (or need none): joined, not overtaken
        self._slots = asyncio.Semaphore(CONCURRENCY)
        self.ahead = True  # read every UI resource after a listing; False where no view is ever shown

    def clear(self) -> None:
        """Forget everything (a new connection); reads under way are cancelled."""
        for task in self._pending.values():
            task.cancel()
        self._pending.clear()
        self._reading.clear()
        self.entries.clear()

    def keep_only(self, wanted: set[str], changed: set[str]) -> None:
        """Drop entries no tool links to any more, and those whose resource list entry changed."""
        for uri in list(self.entries):
            if uri not in wanted or uri in changed or self.entries[uri].error is not None:
                del self.entries[uri]

    async def get(self, client: Client, uri: str, listing_ui: dict[str, Any]) -> UiResource:
        """The resource, read now if it is not cached (joining a read already under way)."""
        cached = self.entries.get(uri)
        if cached is not None and cached.error is None:
            return cached
        task = self._pending.get(uri)
        if task is None or task.done() or uri not in self._reading:
            # Not under way, or only queued behind the prefetch: a view is waiting for it, so it is
            # read now, outside the slots (R1.15: the 8,000th tool's view waited 7 s for the queue).
            if task is not None:
                task.cancel()
            task = asyncio.get_running_loop().create_task(self._read(client, uri, listing_ui, queued=False))
            self._pending[uri] = task
        return await asyncio.shield(task)

    def prefetch(self, client: Client, uris: list[str], listing: dict[str, dict[str, Any]]) -> None:
        """Start reading every uri that is not cached (unless nothing is read ahead); returns at once."""
        if not self.ahead:
            return
        for uri in uris:
            if uri not in self.entries and uri not in self._pending:
                ui = listing.get(uri, {}).get("ui") or {}
                self._pending[uri] = asyncio.get_running_loop().create_task(self._read(client, uri, ui))

    async def idle(self) -> None:
        """Wait until no read is under way (tests and ``moka check``)."""
        while self._pending:
            await asyncio.gather(*list(self._pending.values()), return_exceptions=True)

    async def _read(self, client: Client, uri: str, listing_ui: dict[str, Any], *, queued: bool = True) -> UiResource:
        me = asyncio.current_task()
        try:
            async with self._slots if queued else contextlib.nullcontext():
                self._reading.add(uri)
                try:
                    fresh = await read_ui_resource(client, uri, listing_ui)
                except Exception as exc:  # the connection died mid-read: a view asking later reads again
                    fresh = UiResource(uri, None, None, listing_ui, error=f"resources/read {uri} failed: "
                                                                          f"{describe_exception(exc)}")
            self.entries[uri] = fresh
            return fresh
        finally:
            if self._pending.get(uri) is me:  # a view's own read may have taken this one's place
                self._pending.pop(uri, None)
                self._reading.discard(uri)
