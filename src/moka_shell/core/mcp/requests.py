"""What Moka asks a connected server: tools, prompts, resources, completions.

Every request goes through ``_guard``, which turns the SDK's failures into ToolCallError and marks
a dead connection (``Link.lost``) so the supervisor reconnects.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import anyio
import mcp_types as types
import pydantic
from mcp import MCPError

from moka_shell.core.mcp import listing
from moka_shell.core.mcp.catalog import MAX_RESULT_BYTES, ToolEntry, cap_result, result_size
from moka_shell.core.mcp.link import Link
from moka_shell.core.mcp.listing import ServerListing
from moka_shell.core.mcp.progress import CallTracker, progress_for
from moka_shell.core.mcp.sdk import describe_exception, dump
from moka_shell.core.mcp.stderr import StderrTail
from moka_shell.core.mcp.stdio_client import over_the_cap
from moka_shell.errors import InvalidParamsError, ToolCallError, UnknownToolError

_EVENT_CAP = re.compile(r"Server-sent event exceeded the (\d+) byte limit")


class ServerRequests:
    """``call_tool``, ``request`` and the prompts / resources / completion methods of one server."""

    def __init__(self, link: Link, listing: ServerListing, stderr: StderrTail, *,
                 calls: CallTracker | None = None) -> None:
        self._link = link
        self._listing = listing  # the tools a call may name
        self._stderr = stderr  # the transport's last HTTP error, quoted in a failure
        self._calls = calls  # progress of each call goes to the card of the call the task serves
        self.name = link.name

    def tool(self, name: str) -> ToolEntry:
        """The catalogue entry of a tool, or UnknownToolError."""
        tools = self._listing.tools
        try:
            return tools[name]
        except KeyError:
            raise UnknownToolError(self.name, name, list(tools)) from None

    async def call_tool(self, name: str, arguments: dict[str, Any] | None, *,
                        timeout: float | None = None) -> dict[str, Any]:
        """Call a tool; returns the wire ``CallToolResult`` dict, size-capped.

        Protocol failures raise ToolCallError; a dead connection is marked so the
        supervisor reconnects.
        """
        client = self._link.ready_client()
        self.tool(name)
        return cap_result(await self._guard(client.call_tool(name, arguments or {}, read_timeout_seconds=timeout,
                                                             progress_callback=progress_for(self._calls, self.name)),
                                            f"tools/call {name}"))

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Proxy a read-only request (resources/read, resources/list, ...) for a view."""
        client = self._link.ready_client()
        if method == "resources/read":
            coro: Any = client.read_resource(str(params.get("uri", "")))
        elif method == "resources/list":
            coro = client.list_resources(cursor=params.get("cursor"))
        elif method == "resources/templates/list":
            coro = client.list_resource_templates(cursor=params.get("cursor"))
        elif method == "prompts/list":
            coro = client.list_prompts(cursor=params.get("cursor"))
        else:
            raise ToolCallError(f"{method} is not proxied")
        return await self._guard(coro, method)

    # ---- prompts, resources and completions for the person (servers.prompts …) ----------------

    async def prompts(self) -> list[dict[str, Any]]:
        """Every prompt of the server (``[]`` when it offers none)."""
        client = self._link.ready_client()
        if not listing.has_capability(client, "prompts"):
            return []
        found = await self._guard(listing.list_prompts(client), "prompts/list")
        return [{"server": self.name, "arguments": [], **dump(p)} for p in found]

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> dict[str, Any]:
        """``prompts/get``: the prompt's messages with these arguments filled in."""
        client = self._link.ready_client()
        return await self._guard(client.get_prompt(name, arguments or None), f"prompts/get {name}")

    async def resources(self) -> dict[str, list[dict[str, Any]]]:
        """Every resource and resource template of the server."""
        client = self._link.ready_client()
        if not listing.has_capability(client, "resources"):
            return {"resources": [], "templates": []}
        res = await self._guard(listing.list_resources(client), "resources/list")
        try:
            tpl = await self._guard(listing.list_templates(client), "resources/templates/list")
        except ToolCallError:  # templates are optional; many servers answer "method not found"
            tpl = []
        return {"resources": [{"server": self.name, **dump(r)} for r in res],
                "templates": [{"server": self.name, "variables": template_variables(dump(t).get("uriTemplate", "")),
                               **dump(t)} for t in tpl]}

    async def read_resource(self, uri: str) -> dict[str, Any]:
        """``resources/read``, at most ``MAX_RESULT_BYTES`` of contents in all."""
        client = self._link.ready_client()
        result = await self._guard(client.read_resource(uri), f"resources/read {uri}")
        size = result_size(result)
        if size <= MAX_RESULT_BYTES:
            return result
        kept, budget = [], MAX_RESULT_BYTES
        for item in result.get("contents") or []:
            item_size = result_size(item)
            if item_size > budget:
                item = {k: v for k, v in item.items() if k not in ("text", "blob")}
                item["text"] = f"[{item_size} bytes removed by Moka's size cap]"
            budget -= result_size(item)
            kept.append(item)
        return {**result, "contents": kept, "truncated": {"originalBytes": size, "limitBytes": MAX_RESULT_BYTES}}

    async def complete(self, ref: dict[str, Any], argument: dict[str, Any],
                       context: dict[str, str] | None = None) -> dict[str, Any]:
        """``completion/complete`` for a prompt argument or a resource template variable."""
        client = self._link.ready_client()
        if not listing.has_capability(client, "completions"):
            return {"values": []}
        try:
            sdk_ref: types.PromptReference | types.ResourceTemplateReference
            if ref.get("type") == "ref/prompt":
                sdk_ref = types.PromptReference(type="ref/prompt", name=str(ref.get("name", "")))
            elif ref.get("type") == "ref/resource":
                sdk_ref = types.ResourceTemplateReference(type="ref/resource", uri=str(ref.get("uri", "")))
            else:
                raise InvalidParamsError("'ref' must be {type: 'ref/prompt', name} or {type: 'ref/resource', uri}")
        except pydantic.ValidationError as exc:
            raise InvalidParamsError(f"bad 'ref': {describe_exception(exc)}") from None
        arg = {"name": str(argument.get("name", "")), "value": str(argument.get("value", ""))}
        done = await self._guard(client.complete(sdk_ref, arg, context or None), "completion/complete")
        return dict(done.get("completion") or {"values": []})

    # ---- the guard -------------------------------------------------------------------------

    def _http_note(self, message: str) -> str:
        """The last HTTP error the transport saw (written to the server's log by http_guard), unless said."""
        last = self._stderr.last(1)
        return f" — {last[0]}" if last and last[0].startswith("HTTP ") and last[0] not in message else ""

    async def _guard(self, coro: Any, what: str) -> Any:
        try:
            result = await coro
        except MCPError as exc:
            message = event_too_large(exc.message)
            # An event over the cap ends only its own reply stream (the SDK calls it abandoned).
            if exc.code == types.CONNECTION_CLOSED and message == exc.message:
                self._link.lost.set()
                raise ToolCallError(f"{what} on {self.name!r} failed: the server's connection closed "
                                    f"({exc.message}); Moka is reconnecting") from exc
            raise ToolCallError(f"{what} on {self.name!r} failed: {message} (code {exc.code})"
                                f"{self._http_note(message)}") from exc
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            # The HTTP transport's task group crashed and cancelled the call: the server died.
            self._link.lost.set()
            raise ToolCallError(f"{what} on {self.name!r} failed: the connection was lost; Moka is reconnecting") from None
        except (pydantic.ValidationError, RuntimeError) as exc:
            raise ToolCallError(f"{what} on {self.name!r} returned an invalid result: {describe_exception(exc)}") from exc
        except (TimeoutError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            self._link.lost.set()
            raise ToolCallError(f"{what} on {self.name!r} failed: {describe_exception(exc)}") from exc
        return [dump(x) for x in result] if isinstance(result, list) else dump(result)


def event_too_large(message: str) -> str:
    """The SDK's "SSE stream failed: Server-sent event exceeded the N byte limit." said as over stdio."""
    found = _EVENT_CAP.search(message)
    if found is None:
        return message
    return f"the server's reply was {over_the_cap(None, int(found.group(1)))}; Moka dropped it unread"


def template_variables(template: str) -> list[str]:
    """The variable names of an RFC 6570 URI template (``{a}``, ``{+b}``, ``{?c,d}``), in order."""
    names: list[str] = []
    for part in template.split("{")[1:]:
        expr = part.split("}", 1)[0].lstrip("+#./;?&")
        for name in expr.split(","):
            name = name.split(":", 1)[0].rstrip("*").strip()
            if name and name not in names:
                names.append(name)
    return names
