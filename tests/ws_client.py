"""A minimal WebSocket client for tests (wsproto over asyncio streams): send frames, read replies."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import wsproto
import wsproto.events as ev


class WsClient:
    """One client connection; ``closed`` holds the close code once the server closed it."""

    def __init__(self) -> None:
        self.conn = wsproto.WSConnection(wsproto.ConnectionType.CLIENT)
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.closed: int | None = None
        self.rejected: int | None = None
        self._text = ""
        self.frames: asyncio.Queue[Any] = asyncio.Queue()

    async def connect(self, port: int, path: str, *, host: str | None = None, origin: str | None = None) -> bool:
        """Open the connection; False if the server refused the upgrade or closed at once."""
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", port)
        headers = [(b"origin", origin.encode())] if origin else []
        self.writer.write(self.conn.send(ev.Request(host=host or f"127.0.0.1:{port}", target=path,
                                                    extra_headers=headers)))
        await self.writer.drain()
        while True:
            for event in await self._events():
                if isinstance(event, ev.AcceptConnection):
                    asyncio.get_running_loop().create_task(self._pump())
                    return True
                if isinstance(event, (ev.RejectConnection, ev.CloseConnection)):
                    self.rejected = getattr(event, "status_code", None) or getattr(event, "code", None)
                    return False

    async def _events(self) -> list[Any]:
        assert self.reader is not None
        data = await self.reader.read(65536)
        self.conn.receive_data(data or None)
        return list(self.conn.events())

    async def _pump(self) -> None:
        try:
            while self.closed is None:
                for event in await self._events():
                    if isinstance(event, ev.TextMessage):
                        self._text += event.data
                        if event.message_finished:
                            self.frames.put_nowait(json.loads(self._text))
                            self._text = ""
                    elif isinstance(event, ev.CloseConnection):
                        self.closed = event.code
                        self.frames.put_nowait(None)
                    elif isinstance(event, ev.Ping):
                        self._write(self.conn.send(event.response()))
        except (ConnectionError, wsproto.utilities.LocalProtocolError):
            self.closed = self.closed or 1006
            self.frames.put_nowait(None)

    def _write(self, data: bytes) -> None:
        assert self.writer is not None
        self.writer.write(data)

    async def send_text(self, text: str) -> None:
        """One text message."""
        self._write(self.conn.send(ev.Message(data=text)))
        assert self.writer is not None
        await self.writer.drain()

    async def send_bytes(self, data: bytes) -> None:
        """One binary message."""
        self._write(self.conn.send(ev.Message(data=data)))
        assert self.writer is not None
        await self.writer.drain()

    async def reply(self, fid: Any, timeout: float = 30.0) -> dict[str, Any]:
        """The next reply frame with this id (batched arrays are unpacked; events skipped)."""
        while True:
            got = await asyncio.wait_for(self.frames.get(), timeout)
            if got is None:
                raise ConnectionError(f"the server closed the socket (code {self.closed})")
            for frame in got if isinstance(got, list) else [got]:
                if isinstance(frame, dict) and "event" not in frame and frame.get("id") == fid:
                    return frame

    async def close(self) -> None:
        """Close our side."""
        if self.writer is not None:
            if self.closed is None:
                try:
                    self._write(self.conn.send(ev.CloseConnection(code=1000)))
                except wsproto.utilities.LocalProtocolError:
                    pass
            self.writer.close()
