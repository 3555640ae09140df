"""Per-server choices the person makes while connected: the log level and the roots (folders).

Both live in the server's config entry (``logLevel``, ``roots``). Each setter replaces the config
the connection holds (the caller saves it) and tells a connected server at once.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable
from typing import Any

from mcp import Client

from moka_shell.config import ServerConfig
from moka_shell.core.mcp.link import Link, speaks_2026
from moka_shell.core.mcp.roots import checked_roots, configured_roots, roots_result
from moka_shell.core.mcp.sdk import describe_exception
from moka_shell.core.mcp.session_events import LOG_LEVELS
from moka_shell.errors import InvalidParamsError
from moka_shell.inspector import Inspector


class ServerSettings:
    """``log_level`` / ``set_log_level`` and ``roots`` / ``set_roots`` of one server."""

    def __init__(self, link: Link, inspector: Inspector, *, reconnect: Callable[[], Awaitable[None]]) -> None:
        self._link = link
        self._inspector = inspector
        self._reconnect = reconnect  # turning roots on or off changes what the handshake declares

    def _with(self, key: str, value: Any) -> None:
        link = self._link
        link.config = ServerConfig.model_validate({**link.config.model_dump(), key: value})

    # ---- log level -------------------------------------------------------------------------

    @property
    def log_level(self) -> str:
        """The level of log messages asked of the server (the config's ``logLevel``, default ``info``)."""
        level = (self._link.config.model_extra or {}).get("logLevel")
        return level if level in LOG_LEVELS else "info"

    async def send_log_level(self, client: Client) -> None:
        """A 2025-11-25 server is told the level with ``logging/setLevel``; 2026-07-28 gets it per request."""
        caps = client.server_capabilities
        if speaks_2026(client) or caps is None or caps.logging is None:
            return
        try:
            with warnings.catch_warnings():  # deprecated in 2026-07-28, but the way to ask a 2025-11-25 server
                warnings.simplefilter("ignore")
                await client.set_logging_level(self.log_level)  # type: ignore[arg-type]
        except Exception as exc:  # a server that refuses keeps its own default
            self._inspector.record("server", {"error": f"logging/setLevel failed: {describe_exception(exc)}"},
                                   server=self._link.name, method="logging/setLevel")

    async def set_log_level(self, level: str) -> None:
        """Ask for log messages at ``level`` and above from now on (the caller saves the config)."""
        if level not in LOG_LEVELS:
            raise InvalidParamsError(f"unknown log level {level!r} (one of: {', '.join(LOG_LEVELS)})")
        self._with("logLevel", level)
        client = self._link.ready_or_none()
        if client is None:
            return
        session = client.session
        if hasattr(session, "_log_level"):  # 2026-07-28: the level travels in each request's _meta
            session._log_level = level  # type: ignore[assignment]
        await self.send_log_level(client)

    # ---- roots -----------------------------------------------------------------------------

    @property
    def roots(self) -> list[str]:
        """The folders this server may use (the config's ``roots``)."""
        return configured_roots(self._link.config)

    async def on_list_roots(self, context: Any) -> Any:
        """``roots/list`` (and 2026-07-28 input requests for roots): the folders the person chose."""
        self._inspector.record("server", {"roots": self.roots}, server=self._link.name, method="roots/list")
        return roots_result(self.roots)

    async def set_roots(self, paths: Any) -> None:
        """Let the server use exactly these folders (checked); it is told at once (the caller saves the config)."""
        chosen = checked_roots(paths)
        had = bool(self.roots)
        self._with("roots", chosen)
        if had != bool(chosen):
            # The roots capability is declared when connecting: turning roots on or off needs a new connection.
            if self._link.client is not None:
                await self._reconnect()
            return
        client = self._link.ready_or_none()
        if client is None or speaks_2026(client):
            return  # a 2026-07-28 server asks for roots with each request that needs them
        try:
            with warnings.catch_warnings():  # deprecated in 2026-07-28, still how a 2025-11-25 server hears it
                warnings.simplefilter("ignore")
                await client.send_roots_list_changed()
        except Exception as exc:
            self._inspector.record("server", {"error": f"roots/list_changed failed: {describe_exception(exc)}"},
                                   server=self._link.name, method="notifications/roots/list_changed")
