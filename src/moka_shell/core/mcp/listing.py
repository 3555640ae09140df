"""Listing a server: every page of tools, resources, templates and prompts (``nextCursor`` followed).

A list stops after ``MAX_PAGES`` pages or ``MAX_ITEMS`` items, and when a server hands back a cursor
it already gave (a loop): a broken or hostile server costs a bounded number of requests.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pydantic
from mcp import Client, MCPError

from moka_shell.core.mcp.catalog import ToolEntry, tool_entry
from moka_shell.core.mcp.sdk import dump

MAX_PAGES = 100
MAX_ITEMS = 10_000


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
