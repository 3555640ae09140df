"""The inspector log: every message and lifecycle event, in memory and on disk.

Events are kept in a bounded ring for the UI and appended to one JSONL file per day
in the data dir for ``moka inspect``. Secrets are redacted before an event is stored.

The ring keeps each event as its JSON line (made once, for the file anyway) plus the few fields
filters look at, not as nested dicts: 100,000 events take a third less memory, the garbage
collector has nothing more to walk, a text search needs no encoding, and an export is a join.
Queries work on a snapshot of the ring, so they may run on a worker thread while the core loop
keeps recording.
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import IO, Any, Final

CHANNELS = ("mcp.rpc", "ui.rpc", "agent", "server", "view")
_SECRET_KEY = re.compile(r"(authorization|api[_-]?key|secret|password|token|cookie)", re.I)
_BEARER = re.compile(r"(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}")
REDACTED = "[redacted]"
PAGE = 2000  # events per page when a caller does not say
EXPORT_CHUNK = 5000  # lines per export reply: about 2 MB of JSON, encoded on the loop in ~10 ms


def redact(value: Any) -> Any:
    """Replace values under secret-looking keys, and bearer tokens in strings."""
    if isinstance(value, dict):
        return {k: (REDACTED if isinstance(k, str) and _SECRET_KEY.search(k) and isinstance(v, str) else redact(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    if isinstance(value, str) and "Bearer" in value:
        return _BEARER.sub(r"\1" + REDACTED, value)
    return value


def json_needle(text: str) -> str:
    """``text`` lowered and spelled the way ``json.dumps`` writes it (non-ASCII as \\uXXXX escapes).

    Searches run over the encoded message, so "café" must become "caf\\u00e9" to be found.
    Other characters stay as typed: a person may search for JSON itself, like ``"name": "ping"``.
    """
    return "".join(c if c.isascii() else json.dumps(c)[1:-1] for c in text.lower())


# One event in the ring: seq, channel, server, view, method, the event as its JSON line, and where
# the message's JSON starts in that line (it runs to the closing brace). A plain tuple, not a
# NamedTuple: the collector stops tracking exact tuples of strings and ints, so 100,000 of them
# add nothing to a full collection (NamedTuples would add ~12 ms to each, on the core loop).
_Entry = tuple[int, str, str | None, str | None, str | None, str, int]
_SEQ: Final = 0
_CHANNEL: Final = 1
_SERVER: Final = 2
_VIEW: Final = 3
_METHOD: Final = 4
_LINE: Final = 5
_BODY: Final = 6


@dataclass
class EventFilter:
    """Which events a query wants; empty fields match everything."""

    channel: str | None = None
    server: str | None = None
    view: str | None = None
    method: str | None = None
    text: str | None = None

    def matches(self, ev: dict[str, Any]) -> bool:
        """True if the event passes every given field (the same test queries apply to the ring)."""
        # As a ring entry: the message's JSON plus the closing brace the ring's lines end with.
        entry = (0, str(ev.get("channel", "")), ev.get("server"), ev.get("view"), ev.get("method"),
                 json.dumps(ev.get("message"), default=str) + "}", 0)
        return self._test()(entry)

    def is_empty(self) -> bool:
        """True if every event passes."""
        return not (self.channel or self.server or self.view or self.method or self.text)

    def _test(self) -> Callable[[_Entry], bool]:
        """The same test as ``matches``, for ring entries (the text is searched in the stored line)."""
        channel, server, view, method = self.channel, self.server, self.view, self.method
        needle = json_needle(self.text) if self.text else None

        def test(e: _Entry) -> bool:
            if channel and not e[_CHANNEL].startswith(channel):
                return False
            if server and e[_SERVER] != server:
                return False
            if view and e[_VIEW] != view:
                return False
            if method and method not in (e[_METHOD] or ""):
                return False
            return needle is None or needle in e[_LINE][e[_BODY]:-1].lower()

        return test


@dataclass
class Page:
    """Some of the matching events, oldest first, and what a screen needs to say and fetch more."""

    events: list[dict[str, Any]]
    matched: int  # events in the ring that pass the filter (newer than `after`, if given)
    total: int  # events in the ring
    capacity: int  # the most the ring keeps
    newest: int  # seq of the newest event recorded (0: none yet)
    before: int | None  # pass as `before` for the next older page; None when there are no older matches

    def to_json(self) -> dict[str, Any]:
        """The bridge's reply shape."""
        return {"events": self.events, "matched": self.matched, "total": self.total, "capacity": self.capacity,
                "newest": self.newest, "before": self.before}


@dataclass
class Chunk:
    """Part of an export: matching events oldest first, as JSONL."""

    content: str
    count: int
    next: int | None  # pass as `after` for the following chunk; None when this was the last


class Inspector:
    """A bounded in-memory ring of events plus a JSONL file per day."""

    def __init__(self, folder: Path | None, *, capacity: int = 100_000) -> None:
        self.folder = folder
        self.capacity = capacity
        self._ring: deque[_Entry] = deque(maxlen=capacity)
        self.seq = 0
        self.servers: set[str] = set()  # every server an event named, for the screen's filter
        self._lock = threading.Lock()
        self._listeners: list[Callable[[dict[str, Any]], None]] = []
        self._raw_listeners: list[Callable[[str], None]] = []
        self._file: IO[str] | None = None
        self._file_day: str | None = None
        self._last_flush = 0.0

    def subscribe(self, listener: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
        """Call ``listener(event)`` for every new event; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def subscribe_json(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """Like ``subscribe``, but ``listener`` gets the event already encoded as JSON (encoded once)."""
        self._raw_listeners.append(listener)
        return lambda: self._raw_listeners.remove(listener) if listener in self._raw_listeners else None

    def record(self, channel: str, message: Any, *, direction: str = "-", server: str | None = None,
               view: str | None = None, method: str | None = None) -> dict[str, Any]:
        """Store one event and tell the listeners."""
        if method is None and isinstance(message, dict):
            m = message.get("method")
            method = m if isinstance(m, str) else None
        clean = redact(message)
        body = json.dumps(clean, default=str)
        with self._lock:
            self.seq += 1
            ev: dict[str, Any] = {"seq": self.seq, "time": time.time(), "channel": channel, "direction": direction}
            if server:
                ev["server"] = server
                self.servers.add(server)
            if view:
                ev["view"] = view
            if method:
                ev["method"] = method
            # The same text json.dumps(ev) would give, with the message (always last) encoded once.
            head = json.dumps(ev, default=str)[:-1] + ', "message": '
            line = head + body + "}"
            ev["message"] = clean
            self._ring.append((self.seq, str(channel), server or None, view or None, method or None, line, len(head)))
            self._append(ev, line)
        for raw in list(self._raw_listeners):
            try:
                raw(line)
            except Exception:  # a broken UI listener must never break logging
                pass
        for listener in list(self._listeners):
            try:
                listener(ev)
            except Exception:  # a broken UI listener must never break logging
                pass
        return ev

    def query(self, flt: EventFilter | None = None, limit: int = 500) -> list[dict[str, Any]]:
        """The newest ``limit`` events matching ``flt``, oldest first."""
        return self.page(flt, limit=limit).events

    def page(self, flt: EventFilter | None = None, *, limit: int = PAGE, before: int | None = None,
             after: int | None = None) -> Page:
        """The newest ``limit`` matching events older than seq ``before``, oldest first.

        ``after`` hides everything up to that seq (a screen that was cleared). Safe to call from
        any thread: it works on a snapshot taken under the lock.
        """
        flt = flt or EventFilter()
        entries, total, newest = self._snapshot(after)
        test = flt._test()
        hits = entries if flt.is_empty() else [e for e in entries if test(e)]
        end = len(hits) if before is None else bisect.bisect_left(hits, before, key=itemgetter(_SEQ))
        start = max(0, end - max(0, limit))
        chosen = hits[start:end]
        return Page(events=[json.loads(e[_LINE]) for e in chosen], matched=len(hits), total=total,
                    capacity=self.capacity, newest=newest, before=chosen[0][_SEQ] if start > 0 and chosen else None)

    def export(self, flt: EventFilter | None = None, *, after: int | None = None,
               limit: int = EXPORT_CHUNK) -> Chunk:
        """Up to ``limit`` matching events newer than seq ``after``, oldest first, as JSONL."""
        flt = flt or EventFilter()
        entries, _total, _newest = self._snapshot(after)
        # A lazy filter: a chunk stops scanning once it has one match more than it returns.
        found: Iterable[_Entry] = entries if flt.is_empty() else filter(flt._test(), entries)
        chosen = list(itertools.islice(found, limit + 1))
        more = len(chosen) > limit
        chosen = chosen[:limit]
        return Chunk(content="".join(e[_LINE] + "\n" for e in chosen), count=len(chosen),
                     next=chosen[-1][_SEQ] if more else None)

    def _snapshot(self, after: int | None) -> tuple[list[_Entry], int, int]:
        """The ring's entries newer than seq ``after`` (oldest first), its size, and the newest seq."""
        with self._lock:
            total = len(self._ring)
            if not total:
                return [], 0, self.seq
            # Seqs in the ring are consecutive, so a seq gives its index without a search.
            skip = 0 if after is None else min(max(after + 1 - self._ring[0][_SEQ], 0), total)
            entries = list(self._ring) if skip == 0 else list(itertools.islice(self._ring, skip, None))
            return entries, total, self.seq

    def _append(self, ev: dict[str, Any], line: str) -> None:
        if self.folder is None:
            return
        day = dt.datetime.fromtimestamp(ev["time"]).strftime("%Y-%m-%d")
        if day != self._file_day or self._file is None:
            if self._file:
                self._file.close()
            self.folder.mkdir(parents=True, exist_ok=True)
            self._file = open(self.folder / f"events-{day}.jsonl", "a", encoding="utf-8")  # noqa: SIM115
            self._file_day = day
        self._file.write(line + "\n")
        # Flush at most every 0.2 s: other processes (`moka inspect --follow`) read the file.
        now = time.monotonic()
        if now - self._last_flush > 0.2:
            self._file.flush()
            self._last_flush = now

    def close(self) -> None:
        """Flush and close the day file."""
        with self._lock:
            if self._file:
                self._file.close()
                self._file = None


def read_log(folder: Path) -> Iterator[dict[str, Any]]:
    """Every event stored on disk, oldest first."""
    if not folder.exists():
        return
    for path in sorted(folder.glob("events-*.jsonl")):
        yield from _read_lines(path.open(encoding="utf-8"))


def _read_lines(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut by a crash mid-write


def follow_log(folder: Path, poll: float = 0.25) -> Iterator[dict[str, Any]]:
    """Yield events appended to today's and later files, forever."""
    positions: dict[Path, int] = {p: p.stat().st_size for p in folder.glob("events-*.jsonl")} if folder.exists() else {}
    while True:
        if folder.exists():
            for path in sorted(folder.glob("events-*.jsonl")):
                start = positions.get(path, 0)
                size = path.stat().st_size
                if size > start:
                    with path.open(encoding="utf-8") as fh:
                        fh.seek(start)
                        chunk = fh.read()
                    complete, _, _rest = chunk.rpartition("\n")
                    positions[path] = start + len(complete.encode("utf-8")) + (1 if complete else 0)
                    yield from _read_lines(complete.splitlines())
        time.sleep(poll)
