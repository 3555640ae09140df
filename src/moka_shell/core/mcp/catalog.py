"""The tool catalogue: each tool with its whole ``_meta``, UI resource and visibility.

Also the UI resource cache entries and the size cap applied to tool output.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

APP_MIME = "text/html;profile=mcp-app"
DEFAULT_VISIBILITY = ["model", "app"]
MAX_RESULT_BYTES = 4 * 1024 * 1024  # the cap on one tool result, before it goes anywhere


@dataclass
class ToolEntry:
    """One tool of one server, as Moka understands it."""

    server: str
    name: str
    title: str | None
    description: str
    input_schema: dict[str, Any]
    meta: dict[str, Any]
    resource_uri: str | None
    visibility: list[str]
    problems: list[str] = field(default_factory=list)
    annotations: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    icons: list[dict[str, Any]] = field(default_factory=list)
    task_support: str | None = None  # execution.taskSupport: "required" tools are never offered to the model

    @property
    def model_visible(self) -> bool:
        """May the model see this tool? (Not when its visibility lacks "model", nor when it needs tasks.)"""
        return "model" in self.visibility and self.task_support != "required"

    @property
    def app_visible(self) -> bool:
        """May a view of the same server call this tool?"""
        return "app" in self.visibility

    def to_info(self) -> dict[str, Any]:
        """The tool as the UI and ``--json`` output show it (no nulls)."""
        info: dict[str, Any] = {
            "server": self.server, "name": self.name, "description": self.description,
            "inputSchema": self.input_schema, "visibility": self.visibility, "meta": self.meta,
        }
        if self.title:
            info["title"] = self.title
        if self.resource_uri:
            info["resourceUri"] = self.resource_uri
        if self.problems:
            info["problems"] = self.problems
        if self.annotations:
            info["annotations"] = self.annotations
        if self.icons:
            info["icons"] = self.icons
        if self.task_support in ("required", "optional"):
            info["taskSupport"] = self.task_support
        return info

    def to_mcp_tool(self) -> dict[str, Any]:
        """The tool as an MCP ``Tool`` object (for the view's ``toolInfo``)."""
        tool: dict[str, Any] = {"name": self.name, "inputSchema": self.input_schema or {"type": "object"}}
        if tool["inputSchema"].get("type") != "object":
            tool["inputSchema"] = {"type": "object", **{k: v for k, v in tool["inputSchema"].items() if k != "type"}}
        if self.title:
            tool["title"] = self.title
        if self.description:
            tool["description"] = self.description
        if self.meta:
            tool["_meta"] = self.meta
        return tool


MAX_ICON_CHARS = 256 * 1024  # a data: icon bigger than this is dropped


def safe_icons(icons: Any) -> list[dict[str, Any]]:
    """The icons the UI may show: ``data:image/`` sources only (the UI page loads no remote images)."""
    out: list[dict[str, Any]] = []
    for icon in icons if isinstance(icons, list) else []:
        src = icon.get("src") if isinstance(icon, dict) else None
        if isinstance(src, str) and src.startswith("data:image/") and len(src) <= MAX_ICON_CHARS:
            out.append({k: v for k, v in icon.items() if k in ("src", "mimeType", "sizes", "theme")})
    return out[:4]


def ui_link(meta: dict[str, Any] | None) -> tuple[str | None, list[str], list[str]]:
    """Read (resourceUri, visibility, problems) from a tool's ``_meta``.

    The nested ``_meta.ui.resourceUri`` wins over the deprecated flat ``ui/resourceUri``.
    A value that is not a ``ui://`` string means "no UI" and is reported as a problem.
    """
    meta = meta or {}
    problems: list[str] = []
    raw_ui = meta.get("ui")
    ui: dict[str, Any] = raw_ui if isinstance(raw_ui, dict) else {}
    uri: Any = ui.get("resourceUri") if "resourceUri" in ui else meta.get("ui/resourceUri")
    if uri is not None and not (isinstance(uri, str) and uri.startswith("ui://")):
        problems.append(f"_meta.ui.resourceUri must be a ui:// URI, got {uri!r}, so no app will be shown (the tool still runs)")
        uri = None
    visibility = ui.get("visibility", DEFAULT_VISIBILITY)
    if not isinstance(visibility, list) or not all(v in ("model", "app") for v in visibility):
        problems.append(f"_meta.ui.visibility must be a list of 'model'/'app', got {visibility!r}; using the default")
        visibility = list(DEFAULT_VISIBILITY)
    elif not visibility:
        problems.append("_meta.ui.visibility is empty: neither the model nor any view can call this tool")
    for key in ("csp", "permissions"):
        if key in ui:
            problems.append(f"_meta.ui.{key} belongs on the ui:// resource, not on the tool; Moka ignores it here")
    return uri, list(visibility), problems


def tool_entry(server: str, tool: Any) -> ToolEntry:
    """Build a catalogue entry from an ``mcp`` Tool object."""
    meta = dict(tool.meta or {})
    uri, visibility, problems = ui_link(meta)
    annotations = tool.annotations.model_dump(mode="json", by_alias=True, exclude_none=True) if tool.annotations else None
    return ToolEntry(
        # The display name: the tool's title, else its annotations' title (both are the spec's).
        server=server, name=tool.name, title=getattr(tool, "title", None) or (annotations or {}).get("title"),
        description=tool.description or "",
        input_schema=dict(tool.input_schema or {"type": "object"}), meta=meta, resource_uri=uri,
        visibility=visibility, problems=problems, annotations=annotations,
        output_schema=dict(tool.output_schema) if getattr(tool, "output_schema", None) else None,
        icons=safe_icons([i.model_dump(mode="json", exclude_none=True) for i in (getattr(tool, "icons", None) or [])]),
        task_support=getattr(getattr(tool, "execution", None), "task_support", None),
    )


@dataclass
class UiResource:
    """A fetched ``ui://`` resource, or why it could not be used."""

    uri: str
    html: str | None
    mime_type: str | None
    ui_meta: dict[str, Any]
    error: str | None = None


def mime_is_app(mime: str | None) -> bool:
    """Exactly ``text/html;profile=mcp-app``, parsed leniently (spaces, case, quotes)."""
    if not mime:
        return False
    parts = [p.strip().lower() for p in mime.split(";")]
    if parts[0] != "text/html":
        return False
    params = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
    return params.get("profile", "").strip('"') == "mcp-app"


def result_size(result: dict[str, Any]) -> int:
    """The size of a result as JSON, in bytes."""
    return len(json.dumps(result, default=str).encode("utf-8"))


def cap_result(result: dict[str, Any], limit: int = MAX_RESULT_BYTES) -> dict[str, Any]:
    """Shrink a tool result to at most ``limit`` bytes of JSON, saying what was cut.

    Big binary items are replaced by a note, text is truncated, and structuredContent is
    dropped only when it alone is over half the limit.
    """
    size = result_size(result)
    if size <= limit:
        return result
    out = dict(result)
    notes: list[str] = []
    if "structuredContent" in out and result_size({"s": out["structuredContent"]}) > limit // 2:
        out.pop("structuredContent")
        notes.append("structuredContent dropped")
    content: list[dict[str, Any]] = []
    budget = max(1024, limit // max(1, len(out.get("content") or [1])) - 256)
    for item in out.get("content") or []:
        if not isinstance(item, dict):
            continue
        item = dict(item)
        if item.get("type") == "text" and len(item.get("text", "")) > budget:
            item["text"] = item["text"][:budget] + f"\n… [truncated by Moka: {len(item['text'])} characters in all]"
            notes.append("text truncated")
        elif item.get("type") in ("image", "audio") and len(item.get("data", "")) > budget:
            item = {"type": "text", "text": f"[{item['type']} of {len(item['data'])} bytes removed by Moka's size cap]"}
            notes.append(f"{item['type']} removed")
        elif item.get("type") == "resource" and result_size(item) > budget:
            res = item.get("resource", {})
            item = {"type": "text", "text": f"[resource {res.get('uri', '')} removed by Moka's size cap]"}
            notes.append("resource removed")
        content.append(item)
    out["content"] = content
    meta = dict(out.get("_meta") or {})
    meta["moka/truncated"] = {"originalBytes": size, "limitBytes": limit, "what": sorted(set(notes))}
    out["_meta"] = meta
    return out
