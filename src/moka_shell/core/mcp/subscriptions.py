"""Resource subscriptions: the person (an attachment, a view) follows a resource; the server says when it changed.

2025-11-25 servers get ``resources/subscribe`` and send ``notifications/resources/updated``; on
2026-07-28 one ``subscriptions/listen`` stream carries the list changes and the followed URIs (it is
reopened when the set changes). Subscriptions outlive a reconnect; each update calls
``on_updated(server, uri)`` (MokaApp emits ``resource.updated``).
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Callable
from typing import Any

from mcp import Client
from mcp.shared.subscriptions import ResourceUpdated

from moka_shell.core.mcp.link import Link, speaks_2026
from moka_shell.core.mcp.listing import ServerListing
from moka_shell.core.mcp.sdk import describe_exception
from moka_shell.errors import InvalidParamsError, ToolCallError
from moka_shell.inspector import Inspector

log = logging.getLogger("moka.servers")
MAX_SUBSCRIPTIONS = 64  # resources followed per server


class ResourceSubscriptions:
    """``subscribe`` / ``unsubscribe``, the updates that follow, and the 2026-07-28 listen stream."""

    def __init__(self, link: Link, inspector: Inspector, listing: ServerListing, *,
                 on_updated: Callable[[str, str], None] | None = None) -> None:
        self._link = link
        self._inspector = inspector
        self._listing = listing  # refreshed when the listen stream reports a list change
        self._on_updated = on_updated
        self.subscribed: set[str] = set()  # kept across reconnects
        self._listen_task: asyncio.Task[None] | None = None

    async def subscribe(self, uri: str) -> list[str]:
        """Follow ``uri``: its updates are reported from now on. Returns every followed uri."""
        client = self._link.ready_client()
        caps = client.server_capabilities
        if caps is None or caps.resources is None or not caps.resources.subscribe:
            raise ToolCallError(f"{self._link.name!r} does not offer resource subscriptions; "
                                "read the resource again instead")
        if uri not in self.subscribed and len(self.subscribed) >= MAX_SUBSCRIPTIONS:
            raise InvalidParamsError(f"at most {MAX_SUBSCRIPTIONS} resources of one server can be followed")
        self.subscribed.add(uri)
        await self._tell(client, "subscribe", uri)
        return sorted(self.subscribed)

    async def unsubscribe(self, uri: str) -> list[str]:
        """Stop following ``uri`` (no-op when it was not followed)."""
        if uri in self.subscribed:
            self.subscribed.discard(uri)
            client = self._link.ready_or_none()
            if client is not None:
                await self._tell(client, "unsubscribe", uri)
        return sorted(self.subscribed)

    async def resubscribe(self, client: Client) -> None:
        """After a reconnect, a 2025-11-25 server is asked again for each followed resource."""
        if not speaks_2026(client):
            for uri in sorted(self.subscribed):
                await self._tell(client, "subscribe", uri)

    async def _tell(self, client: Client, what: str, uri: str) -> None:
        if speaks_2026(client):
            self.stop_listening()
            self.listen(client)  # the listen request carries the followed URIs
            return
        try:
            with warnings.catch_warnings():  # deprecated in 2026-07-28; the only way on 2025-11-25
                warnings.simplefilter("ignore")
                if what == "subscribe":
                    await client.subscribe_resource(uri)
                else:
                    await client.unsubscribe_resource(uri)
        except Exception as exc:
            raise ToolCallError(f"resources/{what} {uri} on {self._link.name!r} failed: "
                                f"{describe_exception(exc)}") from exc

    def updated(self, uri: str) -> None:
        """The server says ``uri`` changed: tell whoever follows it (nobody asked: nothing to tell)."""
        if uri not in self.subscribed:
            return
        name = self._link.name
        self._inspector.record("server", {"uri": uri}, server=name, method="notifications/resources/updated")
        if self._on_updated is not None:
            try:
                self._on_updated(name, uri)
            except Exception:
                log.exception("reporting an update of %s on %r failed", uri, name)

    # ---- 2026-07-28: subscriptions/listen --------------------------------------------------------

    def listen(self, client: Client) -> None:
        """Open the listen stream of a 2026-07-28 connection for what its server says it can report.

        Only the list changes it advertises (``listChanged``) and, if it offers ``resources.subscribe``,
        the followed resources. A server that advertises none of them gets no stream: it need not
        implement ``subscriptions/listen`` at all, and asking made the bundled demo's first contact a
        "Method not found" error in the Inspector.
        """
        if not speaks_2026(client):
            return
        wanted = _wanted(client, sorted(self.subscribed))
        if not any(wanted.values()):
            return

        async def listen() -> None:
            try:
                async with client.listen(**wanted) as sub:
                    async for event in sub:
                        if isinstance(event, ResourceUpdated):
                            self.updated(event.uri)
                        else:
                            self._listing.refresh_soon()
            except Exception as exc:  # listening is best effort; the connection itself is supervised
                self._inspector.record("server", {"error": f"subscriptions/listen ended: {describe_exception(exc)}"},
                                       server=self._link.name, method="listen/error")

        self._listen_task = asyncio.get_running_loop().create_task(listen())

    def stop_listening(self) -> None:
        """Close the listen stream (the connection ended, or the followed set changed)."""
        if self._listen_task is not None:
            self._listen_task.cancel()
            self._listen_task = None


def _wanted(client: Client, followed: list[str]) -> dict[str, Any]:
    """The listen filter a server's capabilities allow: the lists it says change, the resources it lets us follow."""
    caps = client.server_capabilities
    tools, prompts, resources = (getattr(caps, n, None) for n in ("tools", "prompts", "resources"))
    return {"tools_list_changed": bool(getattr(tools, "list_changed", False)),
            "prompts_list_changed": bool(getattr(prompts, "list_changed", False)),
            "resources_list_changed": bool(getattr(resources, "list_changed", False)),
            "resource_subscriptions": followed if getattr(resources, "subscribe", False) else []}
