"""What Moka's HTTP client lets through to the SDK: replies within the message cap, errors in words.

An httpx2 transport under the streamable HTTP and legacy SSE clients (findings R1.19, N5b):

- a reply body (not an event stream) is read here, at most ``MAX_MESSAGE_BYTES`` of it, decoded
  within the same cap; a bigger one is dropped as it arrives (a declared Content-Length is refused
  unread), and the request it answers gets an error naming the size, as over stdio;
- an HTTP error status is written to the server's log as one line (status, reason, method, path,
  a short body: ``http_diagnostics.describe_response``), and a request answered that way gets that
  line as its JSON-RPC error, so "tools/call failed" says what the server said (the SDK would say
  only "Server returned an error response");
- an event stream passes as it is: the SDK caps each of its events (``max_sse_event_size``).
"""

from __future__ import annotations

import json
import zlib
from typing import Any, TextIO

import httpx2

from moka_shell.core.mcp.http_diagnostics import MAX_READ, describe_response
from moka_shell.core.mcp.stdio_client import MAX_MESSAGE_BYTES, over_the_cap

# Statuses the SDK and the OAuth flow act on themselves: 401/403 sign-in and scope, 404 a lost session.
SDK_STATUSES = (401, 403, 404)
ENCODINGS = "gzip, deflate"  # what Moka can decode within the cap (no brotli, no zstd)


class ReplyTooLarge(Exception):
    """A reply body went over the cap (its size, or None when reading stopped at the cap)."""

    def __init__(self, size: int | None) -> None:
        super().__init__(size)
        self.size = size


class ReplyGuard(httpx2.AsyncBaseTransport):
    """Wraps a transport: bounded reply bodies, error statuses logged and said for their request."""

    def __init__(self, errlog: TextIO, *, sse: bool = False, limit: int = MAX_MESSAGE_BYTES,
                 inner: httpx2.AsyncBaseTransport | None = None) -> None:
        self._inner = inner or httpx2.AsyncHTTPTransport()
        self._errlog = errlog
        self._sse = sse
        self.limit = limit

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send ``request``; the reply read within the cap (an event stream is handed on unread)."""
        request.headers["Accept-Encoding"] = ENCODINGS
        response = await self._inner.handle_async_request(request)
        if response.headers.get("content-type", "").lower().startswith("text/event-stream"):
            if response.status_code >= 400:
                self._log(request, response, "")
            return response
        request_id = _request_id(request)
        try:
            body = await self._read(response)
        except (ReplyTooLarge, httpx2.DecodingError) as exc:
            what = (f"the server's reply was {over_the_cap(exc.size, self.limit)}; Moka dropped it unread"
                    if isinstance(exc, ReplyTooLarge) else str(exc))
            self._write(f"{what} ({request.method} {request.url.path})")
            return _error_reply(response, request, request_id, what, status=200 if request_id is not None else 502)
        finally:
            await response.aclose()
        if response.status_code >= 400:
            line = self._log(request, response, body[:MAX_READ].decode("utf-8", "replace"))
            if request_id is not None and response.status_code not in SDK_STATUSES and not _is_rpc_error(body):
                return _error_reply(response, request, request_id, line, status=response.status_code)
        headers = [(k, v) for k, v in response.headers.multi_items()
                   if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
        return httpx2.Response(response.status_code, headers=headers, content=body, request=request,
                               extensions=response.extensions)

    async def aclose(self) -> None:
        """Close the wrapped transport."""
        await self._inner.aclose()

    async def _read(self, response: httpx2.Response) -> bytes:
        declared = response.headers.get("content-length", "")
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if declared.isdigit() and int(declared) > self.limit and encoding == "identity":
            raise ReplyTooLarge(int(declared))  # refused unread
        inflate = _inflater(encoding)
        parts: list[bytes] = []
        size = 0
        async for chunk in response.stream:  # type: ignore[union-attr]
            data = inflate(chunk, self.limit - size)
            size += len(data)
            if size > self.limit:
                raise ReplyTooLarge(None)
            parts.append(data)
        return b"".join(parts)

    def _log(self, request: httpx2.Request, response: httpx2.Response, body: str) -> str:
        line = describe_response(response.status_code, response.reason_phrase, request.method, str(request.url),
                                 body, sse=self._sse)
        self._write(line)
        return line

    def _write(self, line: str) -> None:
        try:
            self._errlog.write(line + "\n")
        except (ValueError, OSError):  # the connection ended and closed its log
            pass


def _inflater(encoding: str) -> Any:
    """``feed(chunk, room) -> bytes``: the chunk decoded, never more than ``room + 1`` bytes of it."""
    if encoding in ("identity", ""):
        return lambda chunk, _room: chunk
    if encoding not in ("gzip", "deflate", "x-gzip"):
        raise httpx2.DecodingError(f"the server sent its reply {encoding}-encoded, which Moka did not ask for")
    decoder = zlib.decompressobj(zlib.MAX_WBITS | 32)  # a gzip or a zlib header, told apart by zlib

    def feed(chunk: bytes, room: int) -> bytes:
        try:
            # max_length stops a small compressed chunk from growing past the cap in memory.
            return decoder.decompress(chunk, max(room, 0) + 1)
        except zlib.error as exc:
            raise httpx2.DecodingError(f"the server's {encoding} reply could not be decoded: {exc}") from None

    return feed


def _request_id(request: httpx2.Request) -> Any:
    """The JSON-RPC id of the request this POST carries, or None (a notification, a GET, a DELETE)."""
    if request.method != "POST":
        return None
    try:
        message = json.loads(request.content)
    except (httpx2.RequestNotRead, ValueError):
        return None
    if isinstance(message, dict) and "method" in message and isinstance(message.get("id"), (int, str)):
        return message["id"]
    return None


def _is_rpc_error(body: bytes) -> bool:
    """Is this body a JSON-RPC error the server wrote itself (the SDK hands that on as it is)?"""
    try:
        message = json.loads(body)
    except ValueError:
        return False
    return isinstance(message, dict) and isinstance(message.get("error"), dict)


def _error_reply(response: httpx2.Response, request: httpx2.Request, request_id: Any, message: str, *,
                 status: int) -> httpx2.Response:
    """A JSON-RPC error for ``request_id`` in place of the reply (a plain text one when no request waits)."""
    headers = {k: v for k, v in response.headers.items() if k.lower() in ("mcp-session-id", "www-authenticate")}
    if request_id is None:
        return httpx2.Response(status, headers=headers, text=message, request=request)
    error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": message}}
    return httpx2.Response(status, headers=headers, json=error, request=request)
