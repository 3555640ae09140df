"""LoggingTransport: wraps any mcp transport so every JSON-RPC message reaches the inspector."""

from __future__ import annotations

from types import TracebackType
from typing import Any

from moka_shell.core.mcp.sdk import dump
from moka_shell.inspector import Inspector


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
