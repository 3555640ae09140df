"""Limits a bridge frame must meet before it is decoded: its size and its nesting depth.

``json.loads`` recurses once per level, so a frame nested ~1,000 deep raised ``RecursionError``
and ended the WebSocket handler with it (finding S2). The depth is measured on the raw text,
without decoding: strings are cut out first (a bracket inside a string is not nesting), then
the brackets left are counted.
"""

from __future__ import annotations

import re

from moka_shell.errors import BridgeError

FRAME_LIMIT = 16 * 1024 * 1024  # characters of one frame (the page refuses bigger ones before sending)
MAX_DEPTH = 128  # nesting of one frame; a view's message sits two levels down (params.message)
WS_MAX_SIZE = 4 * FRAME_LIMIT + 64 * 1024  # bytes; uvicorn closes the socket above: our limit in UTF-8, and then some
PARSE_ERROR = -32700

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_RUNS = re.compile(r"[\[{]+|[\]}]+")
_LEADING_ID = re.compile(r'\s*\{\s*"id"\s*:\s*(-?\d{1,15})\s*[,}]')


class FrameRefused(Exception):
    """A frame over a limit, or not JSON text; ``code`` and ``message`` make its JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def depth_of(text: str, limit: int = MAX_DEPTH) -> int:
    """The nesting depth of JSON ``text``, or a bound on it: exact once past ``limit``, else at most ``limit``."""
    openers = text.count("[") + text.count("{")
    if openers <= limit:
        return openers  # no deeper than the brackets it holds: no scan needed
    depth = deepest = 0
    for run in _RUNS.finditer(_STRING.sub("", text)):
        piece = run.group()
        if piece[0] in "[{":
            depth += len(piece)
            if depth > limit:
                return depth
            deepest = max(deepest, depth)
        else:
            depth -= len(piece)
    return deepest


def check_frame(text: str, *, limit: int = FRAME_LIMIT, max_depth: int = MAX_DEPTH) -> None:
    """Raise FrameRefused if ``text`` is over the size or depth limit."""
    if len(text) > limit:
        raise FrameRefused(BridgeError.INVALID_REQUEST,
                           f"frame of {len(text)} characters is over Moka's {limit} character limit")
    if depth_of(text, max_depth) > max_depth:
        raise FrameRefused(BridgeError.INVALID_REQUEST, f"frame nested deeper than Moka's limit of {max_depth} levels")


def frame_text(data: str | bytes | None) -> str:
    """The frame as text: bytes must be UTF-8 (checked before anything else is)."""
    if isinstance(data, str):
        return data
    if data is None:
        raise FrameRefused(PARSE_ERROR, "empty frame")
    if len(data) > FRAME_LIMIT * 4:  # UTF-8 is at most 4 bytes a character: over the limit whatever it says
        raise FrameRefused(BridgeError.INVALID_REQUEST, f"frame of {len(data)} bytes is over Moka's limit")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise FrameRefused(PARSE_ERROR, "frame is not UTF-8 text (send JSON-RPC as JSON text)") from None


def leading_id(text: str) -> int | None:
    """The id of a refused frame, when it starts with one (the page writes ``{"id": N, ...}``)."""
    match = _LEADING_ID.match(text[:80])
    return int(match.group(1)) if match else None
