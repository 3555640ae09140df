"""HTTP errors in words: the status, a short body and, for a ``/sse`` URL, the transport to use.

The SDK turns any HTTP error into "Server returned an error response" (finding R1.19). An httpx2
response hook sees the status first; it writes one line to the connection's log (the same tail as a
stdio server's stderr), which the connection adds to the reason it shows.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import TextIO
from urllib.parse import urlsplit

import httpx2

MAX_BODY = 300  # characters of an error body shown
MAX_READ = 64 * 1024  # an error body longer than this is not read
SSE_HINT = 'this looks like a legacy HTTP+SSE endpoint: set "type": "sse" for this server'
STREAMABLE_HINT = 'this looks like a streamable HTTP endpoint: remove "type": "sse" (or set "type": "http")'


def looks_like_sse(url: str) -> bool:
    """Does the URL's path end in ``/sse`` (the usual legacy HTTP+SSE endpoint)?"""
    return urlsplit(url).path.rstrip("/").endswith("/sse")


def describe_response(status: int, reason: str, method: str, url: str, body: str, *, sse: bool) -> str:
    """'HTTP 500 Internal Server Error from POST /mcp: database is down' (+ a transport hint)."""
    path = urlsplit(url).path or "/"  # never the query: it may carry a token
    text = re.sub(r"\s+", " ", body).strip()
    if len(text) > MAX_BODY:
        text = text[:MAX_BODY] + " …"
    line = f"HTTP {status} {reason} from {method} {path}" + (f": {text}" if text else "")
    if status in (404, 405) and not sse and looks_like_sse(url):
        line += f" ({SSE_HINT})"
    elif status in (404, 405) and sse and not looks_like_sse(url):
        line += f" ({STREAMABLE_HINT})"
    return line


def error_reporter(errlog: TextIO, *, sse: bool = False) -> Callable[[httpx2.Response], Awaitable[None]]:
    """An httpx2 ``response`` event hook that writes each HTTP error as one line to ``errlog``."""

    async def on_response(response: httpx2.Response) -> None:
        if response.status_code < 400:
            return
        body = ""
        length = response.headers.get("content-length")
        streamed = response.headers.get("content-type", "").startswith("text/event-stream")
        if not streamed and (length is None or (length.isdigit() and int(length) <= MAX_READ)):
            try:
                # Read now so the SDK reads the same bytes later (httpx keeps a body once read).
                body = (await response.aread())[:MAX_READ].decode("utf-8", "replace")
            except httpx2.HTTPError:
                body = ""
        line = describe_response(response.status_code, response.reason_phrase, response.request.method,
                                 str(response.request.url), body, sse=sse)
        try:
            errlog.write(line + "\n")
        except (ValueError, OSError):  # the connection ended and closed its log
            pass

    return on_response
