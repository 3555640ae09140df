"""What the parts of one server connection share: its name and config, the SDK client, the status.

``ServerConnection`` (``connection.py``) writes the status and the client as it connects; its
requests, settings, subscriptions and listing read them here, and a request that finds the
connection gone says so with ``lost``, which wakes the supervisor to reconnect.
"""

from __future__ import annotations

import asyncio
from typing import Literal

from mcp import Client

from moka_shell.config import ServerConfig
from moka_shell.errors import ServerUnavailableError

Status = Literal["connecting", "ready", "failed", "stopped", "disabled", "signin"]


class Link:
    """One server's live state: who it is, how it is configured, whether (and through which client) it is up."""

    def __init__(self, name: str, config: ServerConfig) -> None:
        self.name = name
        self.config = config  # the person's edits (log level, roots, enabled) replace it; the caller saves it
        self.status: Status = "disabled" if config.disabled else "stopped"
        self.error: str | None = None
        self.client: Client | None = None  # set while a connection is open (from the handshake on)
        self.lost = asyncio.Event()  # the connection died under a request: the supervisor reconnects

    def ready_client(self) -> Client:
        """The client of a ready connection, or ServerUnavailableError saying why there is none."""
        if self.status != "ready" or self.client is None:
            raise ServerUnavailableError(self.name, self.status, self.error)
        return self.client

    def ready_or_none(self) -> Client | None:
        """The client of a ready connection, or None (for what is told to a server only while it is up)."""
        return self.client if self.status == "ready" else None


def speaks_2026(client: Client) -> bool:
    """Does the connection speak 2026-07-28 (``subscriptions/listen``, the log level in each request)?"""
    return (client.protocol_version or "") >= "2026-07-28"
