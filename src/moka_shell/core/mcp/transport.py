"""The transport contract: how Moka opens a connection to an MCP server of one ``type``."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, TextIO, runtime_checkable

from moka_shell.config import ServerConfig


@runtime_checkable
class Transport(Protocol):
    """An MCP transport, registered through ``register_transports(register)``.

    ``transport_id`` is the value a server's config names in ``"type"`` (``"stdio"``,
    ``"http"``). ``open(config, errlog)`` returns an async context manager that yields the
    ``(read_stream, write_stream)`` pair of the ``mcp`` SDK's transports — what
    ``mcp.client.stdio.stdio_client`` and ``streamable_http_client`` return. A child process's
    stderr goes to ``errlog``. Moka wraps the result to log every message, then hands it to
    ``mcp.Client``.

    A transport that starts a process may also offer ``async launch_early(config, errlog)``: it
    starts the process before the MCP SDK is imported and returns an object with
    ``streams(errlog)`` (the same pair as ``open``, over that process) and ``async discard()``, or
    None to leave the start to ``open`` (the built-in stdio transport does this, ``stdio_launch.py``).
    """

    transport_id: str

    def open(self, config: ServerConfig, errlog: TextIO) -> AbstractAsyncContextManager[tuple[Any, Any]]:
        """The streams for one connection to the server ``config`` describes."""
        ...
