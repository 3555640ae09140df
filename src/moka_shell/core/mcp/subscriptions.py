"""Resource subscriptions: the person (an attachment, a view) follows a resource; the server says when it changed.

A mixin of ServerConnection (``connection.py``). 2025-11-25 servers get ``resources/subscribe`` and send
``notifications/resources/updated``; on 2026-07-28 the subscribed URIs go in ``subscriptions/listen``
(the listen stream is reopened when the set changes). Subscriptions outlive a reconnect; each update
calls ``on_resource_updated(server, uri)`` (MokaApp emits ``resource.updated``).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable

from mcp import Client

from moka_shell.core.mcp.sdk import describe_exception
from moka_shell.errors import InvalidParamsError, ServerUnavailableError, ToolCallError
from moka_shell.inspector import Inspector

log = logging.getLogger("moka.servers")
MAX_SUBSCRIPTIONS = 64  # resources followed per server


def _legacy(client: Client) -> bool:
    return (client.protocol_version or "") < "2026-07-28"


class ResourceSubscriptions:
    """``subscribe`` / ``unsubscribe`` and the updates that follow."""

    name: str
    status: str
    error: str | None
    client: Client | None
    inspector: Inspector
    subscribed: set[str]
    on_resource_updated: Callable[[str, str], None] | None

    # Provided by SessionEvents (annotations, not stubs: a stub here could shadow them in the MRO).
    _start_listening: Callable[[Client], None]
    _stop_listening: Callable[[], None]

    async def subscribe(self, uri: str) -> list[str]:
        """Follow ``uri``: its updates are reported from now on. Returns every followed uri."""
        client = self._ready_client()
        caps = client.server_capabilities
        if caps is None or caps.resources is None or not caps.resources.subscribe:
            raise ToolCallError(f"{self.name!r} does not offer resource subscriptions; read the resource again instead")
        if uri not in self.subscribed and len(self.subscribed) >= MAX_SUBSCRIPTIONS:
            raise InvalidParamsError(f"at most {MAX_SUBSCRIPTIONS} resources of one server can be followed")
        self.subscribed.add(uri)
        await self._tell(client, "subscribe", uri)
        return sorted(self.subscribed)

    async def unsubscribe(self, uri: str) -> list[str]:
        """Stop following ``uri`` (no-op when it was not followed)."""
        if uri in self.subscribed:
            self.subscribed.discard(uri)
            client = self.client
            if client is not None and self.status == "ready":
                await self._tell(client, "unsubscribe", uri)
        return sorted(self.subscribed)

    async def _resubscribe(self, client: Client) -> None:
        """After a reconnect, a 2025-11-25 server is asked again for each followed resource."""
        if _legacy(client):
            for uri in sorted(self.subscribed):
                await self._tell(client, "subscribe", uri)

    async def _tell(self, client: Client, what: str, uri: str) -> None:
        if not _legacy(client):
            self._stop_listening()
            self._start_listening(client)  # the listen request carries the followed URIs
            return
        try:
            with warnings.catch_warnings():  # deprecated in 2026-07-28; the only way on 2025-11-25
                warnings.simplefilter("ignore")
                if what == "subscribe":
                    await client.subscribe_resource(uri)
                else:
                    await client.unsubscribe_resource(uri)
        except Exception as exc:
            raise ToolCallError(f"resources/{what} {uri} on {self.name!r} failed: {describe_exception(exc)}") from exc

    def _resource_updated(self, uri: str) -> None:
        if uri not in self.subscribed:
            return  # not asked for (or no longer): nothing to tell
        self.inspector.record("server", {"uri": uri}, server=self.name, method="notifications/resources/updated")
        if self.on_resource_updated is not None:
            try:
                self.on_resource_updated(self.name, uri)
            except Exception:
                log.exception("reporting an update of %s on %r failed", uri, self.name)

    def _ready_client(self) -> Client:
        if self.status != "ready" or self.client is None:
            raise ServerUnavailableError(self.name, self.status, self.error)
        return self.client
