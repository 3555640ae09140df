"""HTTP errors in words: the status, a short body and, for a ``/sse`` URL, the transport to use.

The SDK turns any HTTP error into "Server returned an error response" (finding R1.19). Moka's HTTP
transport (``http_guard.ReplyGuard``) sees the status first; it writes the line made here to the
connection's log (the same tail as a stdio server's stderr), which the connection adds to the reason
it shows, and gives it to the request it answers as its error.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

MAX_BODY = 300  # characters of an error body shown
MAX_READ = 64 * 1024  # how much of an error body is looked at
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
