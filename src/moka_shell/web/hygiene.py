"""Loopback hygiene: a request to Moka must name Moka's own address (finding S12).

A page on any web site can point its own host name at 127.0.0.1 (DNS rebinding) and then talk
to Moka's ports as "same origin". Its requests still carry that foreign name in ``Host``, so
every HTTP and WebSocket request whose ``Host`` is not ``127.0.0.1:<port>`` or
``localhost:<port>`` is refused before any route sees it. WebSockets of the host origin also
need an ``Origin`` of the host origin when a browser sends one (scripts send none).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

log = logging.getLogger("moka.web")
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def loopback_hosts(port: int) -> frozenset[str]:
    """The ``Host`` values a request to ``port`` may carry."""
    return frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})


def loopback_origins(port: int) -> frozenset[str]:
    """The origins of a page served from ``port``."""
    return frozenset(f"http://{h}" for h in loopback_hosts(port))


class HostGuard:
    """ASGI middleware: refuse requests with a foreign ``Host`` (and WebSockets with a foreign ``Origin``)."""

    def __init__(self, app: ASGIApp, *, port: int, ws_origins: frozenset[str] | None = None) -> None:
        self.app = app
        self.hosts = loopback_hosts(port)
        self.ws_origins = ws_origins  # None: this origin serves no WebSocket that needs one
        self._warned: set[str] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the headers, then hand the request on (or refuse it)."""
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get("host", "").lower()
        problem = None
        if host not in self.hosts:
            problem = f"Host {host!r} is not Moka's address"
        elif scope["type"] == "websocket" and self.ws_origins is not None:
            origin = headers.get("origin")
            if origin is not None and origin.lower() not in self.ws_origins:
                problem = f"Origin {origin!r} is not Moka's page"
        if problem is None:
            await self.app(scope, receive, send)
            return
        if problem not in self._warned and len(self._warned) < 100:  # logged once per value, bounded
            self._warned.add(problem)
            log.warning("refused a request: %s (use http://127.0.0.1:<port> or http://localhost:<port>)", problem)
        if scope["type"] == "websocket":
            await receive()  # the websocket.connect message
            await send({"type": "websocket.close", "code": 4403, "reason": "wrong host or origin"})
            return
        body = f"refused: {problem}; Moka answers only http://127.0.0.1:<port> or http://localhost:<port>".encode()
        await send({"type": "http.response.start", "status": 421,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
