"""Adapters for the mcp SDK's values: models as wire JSON, exceptions as one readable line."""

from __future__ import annotations

import logging
from typing import Any

import httpx2
from mcp import MCPError
from pydantic import BaseModel

# The SDK logs a traceback per message it cannot parse, on stdio and over HTTP. Each failure also reaches
# the session (as an exception item, or an error reply for its request), so the inspector records it.
_PARSE_FAILURES = ("Failed to parse JSONRPC message", "Error parsing SSE message", "Error parsing JSON response",
                   "Error parsing server message")
_TRANSPORT_LOGGERS = ("mcp.client.stdio", "mcp.client.streamable_http", "mcp.client.sse")


class _NoParseTracebacks(logging.Filter):
    """Drops the SDK's traceback per unparsable message: the inspector records each as transport/error."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(_PARSE_FAILURES)


def quiet_sdk_logs() -> None:
    """Keep the SDK's per-message parse tracebacks out of Moka's stderr (finding R1.4); idempotent."""
    for name in _TRANSPORT_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _NoParseTracebacks) for f in logger.filters):
            logger.addFilter(_NoParseTracebacks())


def dump(obj: Any) -> Any:
    """An SDK model as wire JSON: camelCase aliases, ``_meta``, and never a null."""
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json", by_alias=True, exclude_none=True)
    return obj


def describe_exception(exc: BaseException) -> str:
    """One readable line for an exception, looking inside ExceptionGroups."""
    if isinstance(exc, BaseExceptionGroup):
        inner = [describe_exception(e) for e in exc.exceptions]
        return "; ".join(dict.fromkeys(inner)) or type(exc).__name__
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    name = type(exc).__name__
    if isinstance(exc, httpx2.ConnectError):
        return f"could not connect ({exc}); is the server running and the URL right?"
    if hasattr(exc, "message") and isinstance(exc.message, str):
        text = exc.message
    else:
        text = str(exc)
    if isinstance(exc, MCPError) and text == "Connection closed":
        return "the server closed the connection (it exited or crashed)"
    return f"{name}: {text}" if text else name
