"""Reading a server's catalogue: its tools, and each MCP App's UI resource (HTML, mime type, ``_meta.ui``)."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

import pydantic
from mcp import Client, MCPError

from moka_shell.core.mcp.catalog import APP_MIME, ToolEntry, UiResource, mime_is_app, tool_entry
from moka_shell.core.mcp.sdk import describe_exception, dump


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
        try:
            html = base64.b64decode(data.get("blob", "")).decode("utf-8")
        except (ValueError, UnicodeDecodeError) as exc:
            return UiResource(uri, None, mime, ui_meta or {}, error=f"{uri}: blob is not base64 UTF-8 HTML ({exc})")
    return UiResource(uri, html, mime, ui_meta or {})


@dataclass
class Catalogue:
    """What one refresh read: tools, the resource list's ``_meta`` and keys, and the UI resources."""

    tools: dict[str, ToolEntry]
    listing_meta: dict[str, dict[str, Any]]
    ui: dict[str, UiResource]
    keys: dict[str, str]


async def read_catalogue(client: Client, server: str, old: dict[str, UiResource],
                         old_keys: dict[str, str]) -> Catalogue:
    """List tools and resources; re-read only UI resources that are new, failed, or whose list entry changed."""
    listed = await client.list_tools(cache_mode="refresh")
    tools = {t.name: tool_entry(server, t) for t in listed.tools}
    listing_meta: dict[str, dict[str, Any]] = {}
    keys: dict[str, str] = {}
    if client.server_capabilities is None or client.server_capabilities.resources is not None:
        try:
            res = await client.list_resources(cache_mode="refresh")
            listing_meta = {str(r.uri): dict(r.meta or {}) for r in res.resources}
            keys = {str(r.uri): json.dumps(dump(r), sort_keys=True, default=str) for r in res.resources}
        except (MCPError, pydantic.ValidationError):
            listing_meta = {}
    ui: dict[str, UiResource] = {}
    for uri in sorted({t.resource_uri for t in tools.values() if t.resource_uri}):
        kept = old.get(uri)
        # Re-read only what is new, failed before, or whose list entry changed (finding R1.12).
        if kept is not None and kept.error is None and old_keys.get(uri) == keys.get(uri):
            ui[uri] = kept
        else:
            ui[uri] = await read_ui_resource(client, uri, listing_meta.get(uri, {}).get("ui") or {})
    return Catalogue(tools, listing_meta, ui, keys)
