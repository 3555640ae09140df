"""A server's stderr: read in chunks, lines capped in length, and only a tail kept, capped in bytes.

A server that prints a gigabyte with no newline must cost Moka a few kilobytes, not the gigabyte:
``for line in fh`` would build the whole "line" first (finding R1.8).
"""

from __future__ import annotations

import asyncio
import codecs
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator

from moka_shell.core.redact import SECRETS

MAX_LINE = 2000  # characters kept of one line; the rest is dropped up to the next newline
TAIL_BYTES = 64 * 1024  # what a connection keeps of its stderr
INFO_LINES = 20  # what servers.list carries
INFO_CHARS = 4000
CHUNK = 65536
MAX_PENDING = 4096  # stderr lines waiting for the core loop; past this the reader waits (back-pressure)
BATCH = 512  # lines logged per turn of the loop


class StderrTail:
    """The newest stderr lines of one server, at most ``max_bytes`` characters together."""

    def __init__(self, max_bytes: int = TAIL_BYTES) -> None:
        self.max_bytes = max_bytes
        self._lines: deque[str] = deque()
        self._size = 0
        self._lock = threading.Lock()  # appended by the reader thread, read on the loop

    def append(self, line: str) -> None:
        """Keep ``line``, dropping the oldest lines past the cap."""
        with self._lock:
            self._lines.append(line)
            self._size += len(line)
            while self._size > self.max_bytes and len(self._lines) > 1:
                self._size -= len(self._lines.popleft())

    def last(self, count: int, max_chars: int = INFO_CHARS) -> list[str]:
        """Up to ``count`` newest lines, oldest first, together at most ``max_chars`` characters."""
        with self._lock:
            picked: list[str] = []
            total = 0
            for line in reversed(self._lines):
                if len(picked) >= count or total + len(line) > max_chars:
                    break
                picked.append(line)
                total += len(line)
            return picked[::-1]

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            return iter(list(self._lines))

    def __len__(self) -> int:
        return len(self._lines)


class LineRelay:
    """Hands a reader thread's lines to the core loop in batches, with back-pressure.

    One ``call_soon_threadsafe`` per line let 2 GB of stderr queue up on the loop faster than it
    could log them (hundreds of MB of pending callbacks). Now at most ``max_pending`` lines wait;
    past that the reader waits too, so a flooding server is slowed to the pace Moka logs at, as a
    terminal would slow it.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop | None, deliver: Callable[[str], object], *,
                 max_pending: int = MAX_PENDING, batch: int = BATCH) -> None:
        self._loop = loop
        self._deliver = deliver
        self.max_pending = max_pending
        self.batch = batch
        self._pending: deque[str] = deque()
        self._room = threading.Condition()
        self._scheduled = False

    def _alive(self) -> bool:
        return self._loop is not None and not self._loop.is_closed()

    def put(self, line: str) -> None:
        """Queue ``line`` (reader thread); waits while ``max_pending`` lines are still queued."""
        with self._room:
            while len(self._pending) >= self.max_pending and self._alive():
                self._room.wait(0.5)
            if not self._alive():
                return
            self._pending.append(line)
            if not self._scheduled:
                self._schedule()

    def _schedule(self) -> None:
        assert self._loop is not None
        try:
            self._loop.call_soon_threadsafe(self._flush)
            self._scheduled = True
        except RuntimeError:  # the loop closed meanwhile (shutdown): nobody will log these
            self._pending.clear()

    def _flush(self) -> None:
        """Deliver up to ``batch`` lines on the loop; the rest get another turn, so the loop stays responsive."""
        with self._room:
            lines = [self._pending.popleft() for _ in range(min(self.batch, len(self._pending)))]
            self._scheduled = False
            if self._pending:
                self._schedule()
            self._room.notify_all()
        for line in lines:
            self._deliver(line)


def cut(line: str) -> str:
    """``line`` shortened to ``MAX_LINE`` characters, saying so."""
    return line if len(line) <= MAX_LINE else line[:MAX_LINE] + f" … [line cut at {MAX_LINE} characters]"


def pump(fd: int, on_line: Callable[[str], None]) -> None:
    """Read ``fd`` until EOF in chunks, calling ``on_line`` per line (capped); closes ``fd``."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    emit = on_line
    on_line = lambda line: emit(SECRETS.mask(line))  # noqa: E731 - a server may print its env values (S9)
    partial = ""
    discarding = False  # inside a line that was already cut: drop up to its newline
    try:
        while True:
            chunk = os.read(fd, CHUNK)
            if not chunk:
                break
            parts = (partial + decoder.decode(chunk)).split("\n")
            partial = parts.pop()
            for part in parts:
                if discarding:
                    discarding = False
                    continue
                on_line(cut(part.rstrip("\r")))
            if len(partial) > MAX_LINE and not discarding:
                on_line(cut(partial))
                partial, discarding = "", True
            elif discarding:
                partial = ""
    except OSError:  # the pipe broke: treat it as EOF
        pass
    finally:
        os.close(fd)
    rest = partial + decoder.decode(b"", final=True)
    if rest and not discarding:
        on_line(cut(rest))
