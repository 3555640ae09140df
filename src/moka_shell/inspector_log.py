"""The inspector's JSONL files: a writer that never raises and stays under a size cap, and readers
that survive any file (odd lines, invalid UTF-8, a directory named like a log) in bounded memory.

Files are ``events-YYYY-MM-DD.jsonl``, then ``events-YYYY-MM-DD.1.jsonl``, ``.2`` … when a day's
file reaches its part size. The oldest files are deleted first when all of them exceed the cap.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from moka_shell.errors import DataDirError
from moka_shell.paths import ensure_dir, open_private

log = logging.getLogger("moka.inspector")
DEFAULT_MAX_BYTES = 200 * 1024 * 1024
MAX_LINE = 16 * 1024 * 1024  # a longer line on disk (from an older Moka) is skipped, not read whole
BLOCK = 1 << 16
_NAME = re.compile(r"^events-(\d{4}-\d\d-\d\d)(?:\.(\d+))?\.jsonl$")
_TEXT_FIELDS = ("channel", "direction", "server", "view", "method")
FLUSH_EVERY = 0.2  # s: lines reach the file at most this long after they were written


def log_files(folder: Path) -> list[Path]:
    """The log files in ``folder``, oldest first (by day, then part); anything else is ignored."""
    found: list[tuple[str, int, Path]] = []
    try:
        entries = list(folder.iterdir())
    except OSError:  # missing, or not a directory
        return []
    for path in entries:
        m = _NAME.match(path.name)
        try:
            if m and path.is_file():
                found.append((m.group(1), int(m.group(2) or 0), path))
        except OSError:
            continue
    return [p for _day, _part, p in sorted(found)]


class LogWriter:
    """Appends event lines to the day's file; a failed write is counted and reported, never raised."""

    def __init__(self, folder: Path, *, max_bytes: int = DEFAULT_MAX_BYTES, retry_after: float = 1.0) -> None:
        self.folder = folder
        self.max_bytes = max(max_bytes, 1024 * 1024)
        # Ten parts under the cap, so deleting the oldest part frees a tenth, not everything.
        self.part_bytes = max(self.max_bytes // 10, 64 * 1024)
        self.retry_after = retry_after
        self.dropped = 0  # events that could not be written, since start
        self.problem: str | None = None  # why writing fails now; None while it works
        self._file: IO[bytes] | None = None
        self._day: str | None = None
        self._size = 0
        self._pending = 0  # lines written to the buffer since the last successful flush
        self._last_flush = 0.0
        self._retry_at = 0.0
        self._lock = threading.RLock()  # the late flush runs on a timer's thread
        self._timer: threading.Timer | None = None  # the late flush armed for the lines still buffered

    def write(self, day: str, line: str) -> None:
        """Append one line (ASCII JSON) for ``day``; on any OSError drop it and keep going."""
        with self._lock:
            if self._file is None and time.monotonic() < self._retry_at:
                self.dropped += 1
                return
            try:
                if self._file is None or day != self._day or self._size >= self.part_bytes:
                    self._open(day)
                assert self._file is not None
                self._file.write(line.encode("ascii", "replace") + b"\n")
                self._size += len(line) + 1
                self._pending += 1
                # Flush at most every 0.2 s: other processes (`moka inspect --follow`) read the file.
                # The last lines of a burst go out on a timer, not with whatever event comes next.
                now = time.monotonic()
                if now - self._last_flush > FLUSH_EVERY:
                    self._flush()
                    self._last_flush = now
                elif self._timer is None:
                    self._timer = threading.Timer(FLUSH_EVERY, self._late_flush)
                    self._timer.daemon = True
                    self._timer.start()
            except (OSError, ValueError) as exc:  # ValueError: a file closed under us
                self._fail(exc)

    def _late_flush(self) -> None:
        with self._lock:
            self._timer = None
            if self._file is not None and self._pending:
                self.flush()
                self._last_flush = time.monotonic()

    def flush(self) -> None:
        """Write out what is buffered (errors are counted, not raised)."""
        with self._lock:
            if self._file is None:
                return
            try:
                self._flush()
            except (OSError, ValueError) as exc:
                self._fail(exc)

    def close(self) -> None:
        """Flush and close the current file."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self.flush()
            self._drop_file()

    def _flush(self) -> None:
        assert self._file is not None
        self._file.flush()
        self._pending = 0
        if self.problem is not None:
            log.warning("the inspector log is written again; %d events were lost meanwhile", self.dropped)
            self.problem = None

    def _open(self, day: str) -> None:
        self._drop_file()
        try:
            ensure_dir(self.folder, "the inspector's folder", private=True)
        except DataDirError as exc:  # a file where the folder should be: say which, as an OSError would
            raise OSError(exc.problem.split(": ", 1)[-1]) from exc
        parts = [p for p in log_files(self.folder) if p.name.startswith(f"events-{day}")]
        path = parts[-1] if parts else self.folder / f"events-{day}.jsonl"
        size = path.stat().st_size if path.exists() else 0
        if size >= self.part_bytes:
            m = _NAME.match(path.name)
            path = self.folder / f"events-{day}.{int((m and m.group(2)) or 0) + 1}.jsonl"
            size = 0
        self._file = open_private(path, "ab")  # kept open across writes; owner-only (finding G10)
        self._day, self._size = day, size
        if size and _last_byte(path) != b"\n":
            # A write cut short (a full disk, a crash) left half a line: end it, so ours stays whole.
            self._file.write(b"\n")
            self._size += 1
        self._enforce_cap(path)

    def _enforce_cap(self, current: Path) -> None:
        """Delete the oldest files until the others leave room for a full current part."""
        files = [p for p in log_files(self.folder) if p != current]
        sizes = {}
        for p in files:
            try:
                sizes[p] = p.stat().st_size
            except OSError:
                sizes[p] = 0
        total = sum(sizes.values())
        for p in files:
            if total + self.part_bytes <= self.max_bytes:
                break
            try:
                p.unlink()
            except OSError as exc:
                log.warning("could not delete the old inspector log %s: %s", p, exc)
            total -= sizes[p]

    def _fail(self, exc: BaseException) -> None:
        self.dropped += self._pending + 1
        self._pending = 0
        self._drop_file()
        self._retry_at = time.monotonic() + self.retry_after
        if self.problem is None:
            self.problem = f"the inspector's log can't be written in {self.folder}: {exc}; events are kept in memory only"
            log.warning("%s (reported once until writing works again)", self.problem)

    def _drop_file(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except (OSError, ValueError):  # the buffered lines are lost: counted by the caller
                pass
            self._file = None


def _last_byte(path: Path) -> bytes:
    with path.open("rb") as fh:
        fh.seek(-1, 2)
        return fh.read(1)


def parse_line(raw: bytes) -> dict[str, Any] | None:
    """One stored event, or None for a line that is not a well-formed event."""
    text = raw.decode("utf-8", "replace").strip()
    if not text:
        return None
    try:
        ev = json.loads(text)
    except (ValueError, RecursionError):  # a line cut by a crash mid-write, or garbage
        return None
    if not isinstance(ev, dict):
        return None
    t = ev.get("time", 0)
    if isinstance(t, bool) or not isinstance(t, (int, float)):
        return None
    if any(k in ev and not isinstance(ev[k], str) for k in _TEXT_FIELDS):
        return None
    return ev


def _lines_forward(fh: IO[bytes], start: int = 0, end: int | None = None) -> Iterator[tuple[bytes, int]]:
    """Complete lines from ``start`` up to ``end`` (or EOF), each with the offset just past its newline.

    Overlong lines are skipped; a last line without its newline is left for the next read.
    """
    fh.seek(start)
    pos, tail, skipping = start, b"", False
    while end is None or pos < end:
        chunk = fh.read(BLOCK if end is None else min(BLOCK, end - pos))
        if not chunk:
            break
        base = pos - len(tail)  # file offset of parts[0]
        pos += len(chunk)
        parts = (tail + chunk).split(b"\n")
        tail = parts.pop()
        for part in parts:
            base += len(part) + 1
            if skipping:
                skipping = False
                continue
            yield part, base
        if len(tail) > MAX_LINE:
            tail, skipping = b"", True


def _lines_backward(fh: IO[bytes], size: int) -> Iterator[bytes]:
    """Lines from the end of the file to its start; memory is one block plus one (capped) line."""
    pos, tail, skipping = size, b"", False
    while pos > 0:
        step = min(BLOCK, pos)
        pos -= step
        fh.seek(pos)
        parts = (fh.read(step) + tail).split(b"\n")
        tail = parts[0]
        for part in reversed(parts[1:]):
            if skipping:  # the start of a line that was too long
                skipping = False
                continue
            yield part
        if len(tail) > MAX_LINE:
            tail, skipping = b"", True
    if not skipping:
        yield tail


def read_log(folder: Path) -> Iterator[dict[str, Any]]:
    """Every well-formed event stored on disk, oldest first."""
    for path in log_files(folder):
        try:
            with path.open("rb") as fh:
                for raw, _end in _lines_forward(fh):
                    ev = parse_line(raw)
                    if ev is not None:
                        yield ev
        except OSError:
            continue


def read_tail(folder: Path, keep: Callable[[dict[str, Any]], bool], limit: int) -> list[dict[str, Any]]:
    """The newest ``limit`` events passing ``keep``, oldest first, read from the end of the log."""
    found: deque[dict[str, Any]] = deque()
    for path in reversed(log_files(folder)):
        if len(found) >= limit:
            break
        try:
            with path.open("rb") as fh:
                for raw in _lines_backward(fh, path.stat().st_size):
                    ev = parse_line(raw)
                    if ev is not None and keep(ev):
                        found.appendleft(ev)
                        if len(found) >= limit:
                            break
        except OSError:
            continue
    return list(found)


def follow_log(folder: Path, poll: float = 0.25) -> Iterator[dict[str, Any]]:
    """Yield events appended to the existing files and to files made later, forever."""
    positions: dict[Path, int] = {}
    for p in log_files(folder):
        try:
            positions[p] = p.stat().st_size
        except OSError:
            continue
    while True:
        for path in log_files(folder):
            start = positions.get(path, 0)
            try:
                size = path.stat().st_size
                if size <= start:
                    continue
                with path.open("rb") as fh:
                    done = start
                    for raw, done in _lines_forward(fh, start, size):
                        ev = parse_line(raw)
                        if ev is not None:
                            yield ev
                # Only complete lines count as read: a half-written last line is read next time.
                positions[path] = max(done, start)
            except OSError:
                continue
        time.sleep(poll)
