"""Replies both origins share: cache headers, and request bodies read within a limit."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

NO_STORE = {"Cache-Control": "no-store"}
IMMUTABLE = {"Cache-Control": "private, max-age=31536000, immutable"}  # a URL named by its content


class BodyTooLarge(Exception):
    """A request body over its limit (answered with 413 before it was read whole)."""


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, or BodyTooLarge as soon as it is known to exceed ``limit`` bytes."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:  # a missing or lying Content-Length: stop reading here (finding R5.7)
            raise BodyTooLarge
    return bytes(body)


def too_large(limit: int) -> Response:
    """The 413 reply for a body over ``limit``."""
    return PlainTextResponse(f"request body too large: the limit is {limit // 1024} KiB", status_code=413)
