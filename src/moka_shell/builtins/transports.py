"""Built-in MCP transports: stdio (a child process) and streamable HTTP."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, TextIO

from moka_shell.config import SELF_COMMAND, ServerConfig, self_command
from moka_shell.config_oauth import OAuthSettings
from moka_shell.errors import ServerError
from moka_shell.hookspecs import RegisterTransport, hookimpl

if TYPE_CHECKING:
    from moka_shell.core.mcp.stdio_launch import EarlyProcess, StdioLaunch

# The MCP SDK's transports (and httpx) are imported when a server is opened, not when the built-ins
# register: Moka's page is answered before the SDK loads (docs/performance.md §13).


def resolve_command(config: ServerConfig) -> tuple[str, list[str]]:
    """The program and arguments to start; ``moka`` means this Moka itself."""
    assert config.command is not None
    if config.command == SELF_COMMAND:
        me = self_command()
        return me[0], me[1:] + list(config.args)
    found = shutil.which(config.command, path=config.env.get("PATH") or os.environ.get("PATH"))
    if found is None and not os.path.exists(config.command):
        raise ServerError(
            f"command not found: {config.command!r}",
            hint="install it, or give the full path in the server's 'command'",
        )
    return found or config.command, list(config.args)


class StdioTransport:
    """Start the server as a child process and speak MCP over its stdin/stdout."""

    transport_id = "stdio"

    def open(self, config: ServerConfig, errlog: TextIO) -> AbstractAsyncContextManager[Any]:
        """The mcp transport for this config; stderr goes to ``errlog``."""
        from moka_shell.core.mcp.stdio_client import stdio_streams

        # Moka's own reader: linear in a line's length, capped per message, tolerant of invalid UTF-8,
        # and it reports the exit code (findings R1.6, R1.9, R1.13).
        return stdio_streams(stdio_launch(config), errlog)

    async def launch_early(self, config: ServerConfig, errlog: TextIO) -> EarlyProcess | None:
        """Start the server's process before the MCP SDK is loaded (POSIX); its connection adopts it.

        A config that cannot start (no such command or directory) is left to ``open``, which says why.
        """
        if sys.platform == "win32":  # the SDK's own process handling there (job objects)
            return None
        from moka_shell.core.mcp.stdio_launch import EarlyProcess, spawn

        try:
            launch = stdio_launch(config)
            started = await spawn(launch, errlog)
        except (ServerError, OSError):
            return None

        def adopt(log: TextIO) -> AbstractAsyncContextManager[Any]:
            from moka_shell.core.mcp.stdio_client import stdio_streams

            return stdio_streams(launch, log, started=started)

        return EarlyProcess(started, adopt)


def stdio_launch(config: ServerConfig) -> StdioLaunch:
    """What to start for a stdio server's config (``ServerError`` when it cannot be started)."""
    from moka_shell.core.mcp.stdio_launch import StdioLaunch

    command, args = resolve_command(config)
    env = dict(config.env)
    if config.command == SELF_COMMAND:
        # The child must import the same moka_shell, wherever it was loaded from.
        env.setdefault("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
    if config.cwd and not os.path.isdir(config.cwd):
        # Else the child's FileNotFoundError reads as "command not found" (finding R1.24).
        raise ServerError(f"the server's working directory does not exist: {config.cwd!r}",
                          hint="fix or remove the server's 'cwd'")
    return StdioLaunch(command, args, env or None, config.cwd)


class HttpTransport:
    """Speak streamable HTTP to a server at ``url`` with optional headers."""

    transport_id = "http"

    def open(self, config: ServerConfig, errlog: TextIO) -> AbstractAsyncContextManager[Any]:
        """The mcp transport for this config."""
        assert config.url is not None
        return _http_streams(config.url, config.headers, errlog, config.oauth)


@asynccontextmanager
async def _http_streams(url: str, headers: dict[str, str], errlog: TextIO,
                        oauth: OAuthSettings | None = None) -> AsyncIterator[Any]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from moka_shell.core.mcp.http_guard import ReplyGuard
    from moka_shell.core.mcp.oauth.provider import connection_auth, find_oauth_failure, find_sign_in_required, uses_oauth
    from moka_shell.core.mcp.stdio_client import MAX_MESSAGE_BYTES

    # OAuth only acts on a 401; a server given its own Authorization header is left alone.
    auth = connection_auth(url, oauth) if uses_oauth(headers) else None
    # HTTP errors are said with their status and body (finding R1.19), and a reply is read within the
    # message cap as it arrives (N5b): core/mcp/http_guard.py.
    async with httpx2.AsyncClient(headers=headers or None, timeout=httpx2.Timeout(30.0, read=300.0),
                                  auth=auth, transport=ReplyGuard(errlog)) as client:
        try:
            # UI resources are single inlined HTML files, often over the SDK's 1 MiB per event: the
            # cap for one event is the cap for one message, as over stdio.
            async with streamable_http_client(url, http_client=client,
                                              max_sse_event_size=MAX_MESSAGE_BYTES) as streams:
                yield streams
        except Exception as exc:
            # The SDK's task groups wrap it; the supervisor must see "sign-in required" itself.
            needed = find_sign_in_required(exc)
            if needed is not None:
                raise needed from None
            refused = find_oauth_failure(exc)
            if refused is not None:  # e.g. client credentials the authorization server does not take
                raise ServerError(f"OAuth: {refused}", hint="check the server's OAuth client (`moka servers oauth "
                                                              "NAME`, or its Edit dialog)") from None
            raise


@hookimpl
def register_transports(register: RegisterTransport) -> None:
    """Register the stdio and streamable HTTP transports."""
    register(StdioTransport())
    register(HttpTransport())
