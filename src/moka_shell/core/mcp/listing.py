"""Listing a server: every page of tools, resources, templates and prompts (``nextCursor`` followed).

A list stops after ``MAX_PAGES`` pages or ``MAX_ITEMS`` items, and when a server hands back a cursor
it already gave (a loop): a broken or hostile server costs a bounded number of requests.
``ServerListing`` keeps one server's catalogue current: listed on connecting, listed again after a
burst of list changes, its UI resources read in the background.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pydantic
from mcp import Client, MCPError

from moka_shell.core.mcp.catalog import ToolEntry, UiResource, tool_entry
from moka_shell.core.mcp.coalesce import Coalesced
from moka_shell.core.mcp.link import Link
from moka_shell.core.mcp.sdk import describe_exception, dump
from moka_shell.core.mcp.ui_resources import UiCache
from moka_shell.inspector import Inspector

MAX_PAGES = 100
MAX_ITEMS = 10_000
LIST_CHANGED_DEBOUNCE = 0.25  # a burst of list_changed notifications within this makes one refresh
log = logging.getLogger("moka.servers")


async def all_pages(fetch: Callable[[str | None], Awaitable[Any]], field: str) -> list[Any]:
    """Call ``fetch(cursor)`` until a page has no ``next_cursor``; the items of ``field`` of every page."""
    items: list[Any] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        page = await fetch(cursor)
        items.extend(getattr(page, field) or [])
        cursor = page.next_cursor
        if not cursor or cursor in seen or len(items) >= MAX_ITEMS:
            break
        seen.add(cursor)
    return items[:MAX_ITEMS]


async def list_tools(client: Client) -> list[Any]:
    """Every tool the server lists."""
    return await all_pages(lambda c: client.list_tools(cursor=c, cache_mode="refresh"), "tools")


async def list_resources(client: Client) -> list[Any]:
    """Every resource the server lists."""
    return await all_pages(lambda c: client.list_resources(cursor=c, cache_mode="refresh"), "resources")


async def list_templates(client: Client) -> list[Any]:
    """Every resource template the server lists."""
    return await all_pages(lambda c: client.list_resource_templates(cursor=c, cache_mode="refresh"),
                           "resource_templates")


async def list_prompts(client: Client) -> list[Any]:
    """Every prompt the server lists."""
    return await all_pages(lambda c: client.list_prompts(cursor=c, cache_mode="refresh"), "prompts")


def has_capability(client: Client, name: str) -> bool:
    """Does the server say it offers ``name`` (``prompts``, ``resources``, ``completions``, ``logging``)?"""
    caps = client.server_capabilities
    return caps is not None and getattr(caps, name, None) is not None


@dataclass
class Listing:
    """What one refresh listed: the tools, and each resource's ``_meta`` and list entry (to see changes)."""

    tools: dict[str, ToolEntry]
    listing_meta: dict[str, dict[str, Any]]
    keys: dict[str, str]


async def read_listing(client: Client, server: str) -> Listing:
    """List every tool and resource of the server (no resource is read here)."""
    tools = {t.name: tool_entry(server, t) for t in await list_tools(client)}
    listing_meta: dict[str, dict[str, Any]] = {}
    keys: dict[str, str] = {}
    if client.server_capabilities is None or client.server_capabilities.resources is not None:
        try:
            resources = await list_resources(client)
        except (MCPError, pydantic.ValidationError):
            resources = []
        listing_meta = {str(r.uri): dict(r.meta or {}) for r in resources}
        keys = {str(r.uri): json.dumps(dump(r), sort_keys=True, default=str) for r in resources}
    return Listing(tools, listing_meta, keys)


class ServerListing:
    """One server's catalogue, kept current: its tools, each resource's ``_meta``, the UI resources read."""

    def __init__(self, link: Link, inspector: Inspector, changed: Callable[[], None]) -> None:
        self._link = link
        self._inspector = inspector
        self._changed = changed  # told after a refresh, so the card shows the new catalogue
        self.tools: dict[str, ToolEntry] = {}
        self.listing_meta: dict[str, dict[str, Any]] = {}
        self._keys: dict[str, str] = {}  # uri -> its resources/list entry as JSON, to see what changed
        self.ui = UiCache()
        self.version = 0  # counts the refreshes after list changes (the card's prompts and resources are stale)
        self.refresher = Coalesced(self._refresh_now, LIST_CHANGED_DEBOUNCE)

    async def refresh(self, client: Client) -> None:
        """List every tool and resource; then read (in the background) the UI resources that are new or changed."""
        found = await read_listing(client, self._link.name)
        changed = {uri for uri, key in found.keys.items() if self._keys.get(uri) != key}
        self.tools, self.listing_meta, self._keys = found.tools, found.listing_meta, found.keys
        uris = sorted({t.resource_uri for t in self.tools.values() if t.resource_uri})
        self.ui.keep_only(set(uris), changed)
        self.ui.prefetch(client, uris, self.listing_meta)

    def refresh_soon(self) -> None:
        """A list changed: refresh soon (a burst of changes makes one refresh)."""
        if self._link.client is not None:
            self.refresher.request()

    async def ui_resource(self, uri: str) -> UiResource:
        """The cached UI resource, read now if it is not cached."""
        client = self._link.ready_client()
        return await self.ui.get(client, uri, self.listing_meta.get(uri, {}).get("ui") or {})

    async def _refresh_now(self) -> bool:
        client = self._link.client
        if client is None:
            return False
        try:
            await self.refresh(client)
            self.version += 1
        except Exception as exc:  # the supervisor notices a dead connection; keep the old catalogue
            self._inspector.record("server", {"error": f"refresh failed: {describe_exception(exc)}"},
                                   server=self._link.name, method="refresh/error")
            return False
        self._changed()
        return True
