"""What a page's WebSocket has yet to be sent, bounded in bytes (reliability finding N1).

A page that stops reading (a stalled tab, a paused debugger, a laptop lid) must not grow Moka's
memory. Each socket's frames wait here, counted in characters:

- the Inspector's live pushes are the first to go: over ``live_limit`` waiting, they are dropped
  and counted, and once the page has caught up it gets one ``inspector.dropped`` event (the
  Inspector then reloads its page of events from the core, which kept them all);
- anything else over ``limit`` waiting means the page is not reading at all: the outbox empties,
  refuses more and says so (``overflowed``), and the server closes that socket. The page
  reconnects and resyncs (views, questions, the Inspector), as after any lost connection.
"""

from __future__ import annotations

import asyncio
import json

LIMIT = 32 * 1024 * 1024  # characters waiting for one page: well past any burst a reading page sees
LIVE_LIMIT = 4 * 1024 * 1024  # of which the Inspector's live stream may hold this much
BATCH = 500  # frames sent as one WebSocket message at most
# Frames that piled up are joined into one message up to this size: big ones go on their own, never
# piled into one frame the page must parse whole (security finding G1 saw 85 MB frames).
BATCH_CHARS = 1024 * 1024


class SocketOutbox:
    """One page's frames waiting to be sent, within ``limit`` characters."""

    def __init__(self, *, limit: int = LIMIT, live_limit: int = LIVE_LIMIT) -> None:
        self.limit = limit
        self.live_limit = min(live_limit, limit)
        self.size = 0  # characters waiting now
        self.peak = 0  # the most that ever waited
        self.dropped = 0  # live pushes dropped since the page last caught up
        self.overflowed = asyncio.Event()  # set once: the page stopped reading; close its socket
        self._frames: asyncio.Queue[str] = asyncio.Queue()

    def put(self, frame: str, *, live: bool = False) -> None:
        """Queue ``frame`` (``live``: an Inspector push, dropped first when the page falls behind)."""
        if self.overflowed.is_set():
            return
        if live and self.size + len(frame) > self.live_limit:
            self.dropped += 1
            return
        if self.size + len(frame) > self.limit:
            self._overflow()
            return
        self._frames.put_nowait(frame)
        self.size += len(frame)
        self.peak = max(self.peak, self.size)

    async def take(self) -> str:
        """The next WebSocket message: the frames waiting (up to ``BATCH`` of them, ``BATCH_CHARS`` in all),
        as one JSON array if several."""
        frames = [await self._frames.get()]
        size = len(frames[0])
        while not self._frames.empty() and len(frames) < BATCH and size < BATCH_CHARS:
            frames.append(self._frames.get_nowait())
            size += len(frames[-1])
        self.size -= size
        if self.dropped and self.size == 0:
            # Caught up: say how many live pushes never came, once, so the Inspector reloads.
            frames.append(json.dumps({"event": "inspector.dropped", "data": {"count": self.dropped}}))
            self.dropped = 0
        return frames[0] if len(frames) == 1 else "[" + ",".join(frames) + "]"

    def _overflow(self) -> None:
        while not self._frames.empty():
            self._frames.get_nowait()
        self.size = 0
        self.overflowed.set()
