"""A server's stderr: read in chunks, lines capped in length, and only a tail kept, capped in bytes.

A server that prints a gigabyte with no newline must cost Moka a few kilobytes, not the gigabyte:
``for line in fh`` would build the whole "line" first (finding R1.8). ``StderrPipe`` is one
connection attempt's log: the pipe the transport writes to, and the thread that reads it.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from moka_shell.core.redact import SECRETS

MAX_LINE = 2000  # characters kept of one line; the rest is dropped up to the next newline
TAIL_BYTES = 64 * 1024  # what a connection keeps of its stderr
INFO_LINES = 20  # what servers.list carries
INFO_CHARS = 4000
CHUNK = 65536
MAX_PENDING = 4096  # stderr lines waiting for the core loop; past this the reader waits (back-pressure)
BATCH = 512  # lines logged per turn of the loop
EXIT_REPORT_WAIT = 1.0  # after a stdio server's stderr closed, for its exit status to arrive
EXIT_PREFIX = "[moka] "  # marks Moka's own line in a server's stderr log (the stdio transport's exit report)


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


class StderrPipe:
    """One connection attempt's stderr log: a pipe the transport writes to, read on a thread until EOF.

    Each line goes to the server's tail and, batched onto the loop with back-pressure (R1.7), to
    ``deliver``. The stdio transport's own last line (``EXIT_PREFIX`` + how the process ended) becomes
    ``exit_reason``; EOF sets ``eof`` (for a stdio server: its process is gone). Each attempt has its
    own pipe, so an earlier attempt's log ending late never speaks for the current one.
    """

    def __init__(self, name: str, tail: StderrTail, deliver: Callable[[str], object], *, stdio: bool) -> None:
        self.stdio = stdio  # a child process writes here (other transports write their own HTTP errors)
        self._loop = asyncio.get_running_loop()
        self._tail = tail
        self._relay = LineRelay(self._loop, deliver)
        read_fd, write_fd = os.pipe()
        self.file: TextIO = os.fdopen(write_fd, "w", buffering=1, encoding="utf-8", errors="replace")
        self.exit_reason: str | None = None
        self._exited = asyncio.Event()
        self.eof = asyncio.Event()
        self._reader = threading.Thread(target=self._read, args=(read_fd,), daemon=True, name=f"stderr:{name}")
        self._reader.start()

    def transport_opened(self) -> None:
        """A stdio child has its copy of the pipe now: close ours, so EOF means "exited".

        Other transports keep it open: the HTTP transport writes its errors there.
        """
        if self.stdio:
            self.close()

    def close(self) -> None:
        """Close Moka's copy of the writing end (a child keeps its own until it exits)."""
        if not self.file.closed:
            self.file.close()

    async def drain(self, timeout: float) -> None:
        """Close Moka's end and let the reader take in what is still in the pipe (at most ``timeout`` s)."""
        self.close()
        await asyncio.to_thread(self._reader.join, timeout)

    async def explain(self, message: str, *, wait: float = EXIT_REPORT_WAIT) -> str:
        """``message`` with how the process ended (stdio) and the server's last stderr lines.

        A stdio child's exit report may still be on its way: wait up to ``wait`` s for it. Other
        transports write their own hints into the pipe (e.g. "this looks like an SSE URL"): let the
        reader take in what is there before quoting it, or the line can be missed.
        """
        if not self.stdio:
            await self.drain(wait)
        elif self.exit_reason is None:
            try:
                await asyncio.wait_for(self._exited.wait(), timeout=wait)
            except asyncio.TimeoutError:
                pass
        if self.exit_reason and self.exit_reason not in message:
            message += f": {self.exit_reason}"
        # Each line once, and not a line the message already says (an HTTP error is both: R1.19).
        last = [line[:300] for line in dict.fromkeys(self._tail.last(3))
                if line.strip() and not line.startswith(EXIT_PREFIX) and line[:300] not in message]
        return message + (f" — stderr: {' | '.join(last)}" if last else "")

    def _later(self, *call: Any) -> None:
        if not self._loop.is_closed():
            try:
                self._loop.call_soon_threadsafe(*call)
            except RuntimeError:  # the loop closed meanwhile (shutdown)
                pass

    def _exited_with(self, reason: str) -> None:
        self.exit_reason = reason
        self._exited.set()

    def _read(self, fd: int) -> None:
        def on_line(line: str) -> None:
            self._tail.append(line)
            if line.startswith(EXIT_PREFIX):
                self._later(self._exited_with, line[len(EXIT_PREFIX):])
            self._relay.put(line)

        pump(fd, on_line)
        self._later(self.eof.set)
