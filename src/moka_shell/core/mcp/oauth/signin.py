"""Sign-ins started from the UI: the Sign in / Sign out buttons on a server's card.

``begin`` returns the authorization URL as soon as it is known (the page opens it in a popup,
or the desktop shell in the system browser) while the rest of the round trip runs here; when it
ends the connection restarts and ``servers.signin`` says how it went.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from moka_shell.core.mcp.oauth.provider import SIGN_IN_TIMEOUT, sign_in_url
from moka_shell.core.mcp.oauth.login import sign_in, sign_out
from moka_shell.core.mcp.servers import ServerManager
from moka_shell.errors import MokaError, SignInError

URL_WAIT = 30.0  # discovery and registration before the authorization URL exists


class SignIns:
    """At most one sign-in per server; a new one replaces a pending one."""

    def __init__(self, servers: ServerManager, emit: Callable[[str, Any], None],
                 open_link: Callable[[str], None], *, timeout: float = SIGN_IN_TIMEOUT) -> None:
        self.servers, self.emit, self.open_link, self.timeout = servers, emit, open_link, timeout
        self.tasks: dict[str, asyncio.Task[MokaError | None]] = {}

    def _url_of(self, name: str) -> str:
        config = self.servers.get(name).config
        return sign_in_url(name, config.url, config.headers,
                           header_hint="remove the header in the server's Edit dialog to sign in")

    async def begin(self, name: str, *, open_in_browser: bool, client_id: str | None = None) -> dict[str, Any]:
        """Start signing in to ``name``; returns ``{"url"}``, the page to show the person.

        A server that lets no client register itself answers ``{"url": None, "needsClientId": True,
        "message"}``: ask the person for a client id and begin again with it.
        """
        url = self._url_of(name)
        await self.cancel(name)
        shown: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def show(authorization_url: str) -> None:
            if not shown.done():
                shown.set_result(authorization_url)
            if open_in_browser:
                self.open_link(authorization_url)

        task = asyncio.get_running_loop().create_task(self._run(name, url, show, client_id), name=f"sign-in:{name}")
        self.tasks[name] = task
        waiting: set[asyncio.Future[Any]] = {shown, task}
        done, _ = await asyncio.wait(waiting, timeout=URL_WAIT, return_when=asyncio.FIRST_COMPLETED)
        if shown in done:
            return {"url": shown.result()}
        if task in done:  # it failed before there was a page to show (discovery, registration)
            failure = task.result()
            if isinstance(failure, SignInError) and failure.needs_client_id:
                return {"url": None, "needsClientId": True, "message": str(failure)}
            raise failure or SignInError(f"signing in to {name!r} ended before it began")
        await self.cancel(name)
        raise SignInError(f"{name!r} did not offer a sign-in page within {URL_WAIT:g} s",
                          hint="check the server's URL, and that its authorization server is reachable")

    async def _run(self, name: str, url: str, show: Callable[[str], Any], client_id: str | None) -> MokaError | None:
        """The whole round trip; returns the error, or None when signed in (and reconnected)."""
        config = self.servers.get(name).config
        try:
            result = await sign_in(url, name, show, headers=config.headers, timeout=self.timeout, client_id=client_id,
                                   client=config.oauth)
        except MokaError as exc:
            self.emit("servers.signin", {"name": name, "ok": False, "error": str(exc),
                                         "needsClientId": isinstance(exc, SignInError) and exc.needs_client_id})
            return exc
        finally:
            if self.tasks.get(name) is asyncio.current_task():
                del self.tasks[name]
        self.emit("servers.signin", {"name": name, "ok": True, "issuer": result.get("issuer")})
        with contextlib.suppress(MokaError):  # removed meanwhile: nothing to reconnect
            await self.servers.get(name).restart()
        return None

    async def cancel(self, name: str) -> None:
        """Stop a pending sign-in (its loopback listener closes)."""
        task = self.tasks.pop(name, None)
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def end(self, name: str) -> dict[str, Any]:
        """Sign out: forget (and revoke) the tokens, then reconnect, which shows "Sign in required"."""
        url = self._url_of(name)
        await self.cancel(name)
        result = await sign_out(url)
        await self.servers.get(name).restart()
        return result

    async def close(self) -> None:
        """Cancel every pending sign-in."""
        for name in list(self.tasks):
            await self.cancel(name)
