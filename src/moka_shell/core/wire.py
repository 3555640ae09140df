"""Wire helpers: logging every JSON-RPC message, dumping SDK models, readable exceptions."""

from __future__ import annotations

from types import TracebackType
from typing import Any

from pydantic import BaseModel

from moka_shell.inspector import Inspector


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
    if name == "ConnectError":
        return f"could not connect ({exc}); is the server running and the URL right?"
    if hasattr(exc, "message") and isinstance(exc.message, str):
        text = exc.message
    else:
        text = str(exc)
    if name == "MCPError" and text == "Connection closed":
        return "the server closed the connection (it exited or crashed)"
    return f"{name}: {text}" if text else name


class _LoggedRead:
    def __init__(self, inner: Any, inspector: Inspector, server: str) -> None:
        self._inner, self._inspector, self._server = inner, inspector, server

    async def receive(self) -> Any:
        item = await self._inner.receive()
        self._log(item)
        return item

    def _log(self, item: Any) -> None:
        msg = getattr(item, "message", None)
        if msg is not None:
            self._inspector.record("mcp.rpc", dump(msg), direction="in", server=self._server)
        elif isinstance(item, Exception):
            self._inspector.record("mcp.rpc", {"error": f"{type(item).__name__}: {item}"[:2000]},
                                   direction="in", server=self._server, method="transport/error")

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _LoggedRead:
        return self

    async def __anext__(self) -> Any:
        item = await self._inner.__anext__()
        self._log(item)
        return item

    async def __aenter__(self) -> _LoggedRead:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> Any:
        return await self._inner.__aexit__(et, ev, tb)

    def __getattr__(self, name: str) -> Any:  # last_context and friends
        return getattr(self._inner, name)


class _LoggedWrite:
    def __init__(self, inner: Any, inspector: Inspector, server: str) -> None:
        self._inner, self._inspector, self._server = inner, inspector, server

    async def send(self, item: Any, /) -> None:
        msg = getattr(item, "message", None)
        if msg is not None:
            self._inspector.record("mcp.rpc", dump(msg), direction="out", server=self._server)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _LoggedWrite:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> Any:
        return await self._inner.__aexit__(et, ev, tb)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class LoggingTransport:
    """Wraps any mcp transport so every JSON-RPC message becomes an ``mcp.rpc`` event."""

    def __init__(self, inner: Any, inspector: Inspector, server: str) -> None:
        self._inner, self._inspector, self._server = inner, inspector, server

    async def __aenter__(self) -> tuple[Any, Any]:
        read, write = await self._inner.__aenter__()
        return _LoggedRead(read, self._inspector, self._server), _LoggedWrite(write, self._inspector, self._server)

    async def __aexit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> Any:
        return await self._inner.__aexit__(et, ev, tb)
