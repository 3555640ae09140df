"""The legacy HTTP+SSE transport (``"type": "sse"``): deprecated by the spec, still served by older servers.

A GET opens the event stream, whose first event names the URL to POST messages to. Built on the SDK's
``mcp.client.sse.sse_client``; HTTP errors reach the server's log with their status and body, and a
URL that answers 404/405 while not ending in ``/sse`` is hinted to be a streamable HTTP endpoint.
One SSE event is limited to 1 MiB by the SDK on this transport, so a bigger UI resource or result fails
with that message: serve such servers over streamable HTTP.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, TextIO

from moka_shell.config import ServerConfig
from moka_shell.errors import ServerError
from moka_shell.hookspecs import RegisterTransport, hookimpl

CONNECT_SECONDS = 30.0
READ_SECONDS = 300.0  # the event stream may stay quiet this long


class SseTransport:
    """Speak MCP over the legacy HTTP+SSE transport to the server at ``url``."""

    transport_id = "sse"

    def open(self, config: ServerConfig, errlog: TextIO) -> AbstractAsyncContextManager[Any]:
        """The mcp transport for this config; HTTP errors are written to ``errlog``."""
        if not config.url:
            raise ServerError("an SSE server needs a 'url' (its event stream, usually ending in /sse)",
                              hint='add "url", or remove "type": "sse" for a stdio server')
        return _sse_streams(config.url, config.headers, errlog)


@asynccontextmanager
async def _sse_streams(url: str, headers: dict[str, str], errlog: TextIO) -> AsyncIterator[Any]:
    # Imported here, not with the built-ins: the SDK loads with the first server (performance.md §13).
    import httpx2
    from mcp.client.sse import sse_client

    from moka_shell.core.mcp.http_guard import ReplyGuard

    def client(headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None) -> Any:
        return httpx2.AsyncClient(headers=headers, auth=auth, timeout=timeout or httpx2.Timeout(CONNECT_SECONDS),
                                  transport=ReplyGuard(errlog, sse=True))

    async with sse_client(url, headers=headers or None, timeout=CONNECT_SECONDS, sse_read_timeout=READ_SECONDS,
                          httpx_client_factory=client) as streams:
        yield streams


@hookimpl
def register_transports(register: RegisterTransport) -> None:
    """Register the legacy HTTP+SSE transport."""
    register(SseTransport())
