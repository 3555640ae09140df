"""The inspector log: every message and lifecycle event, in memory and on disk.

Events are kept in a ring bounded by count and by bytes for the UI, and appended to JSONL files
in the data dir for ``moka inspect`` (rotated and capped: ``inspector_log``). Secrets are redacted
before an event is stored, and a message over ``MAX_MESSAGE`` is stored as a truncated preview.
Recording never raises: a log that can't be written is counted and reported in ``problem``.

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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any, Final

from moka_shell.core.redact import SECRETS
from moka_shell.inspector_log import DEFAULT_MAX_BYTES, LogWriter, follow_log, read_log, read_tail
from moka_shell.inspector_pairs import Exchanges

__all__ = ["EventFilter", "Inspector", "Page", "Chunk", "follow_log", "read_log", "read_tail", "redact"]

_SECRET_KEY = re.compile(r"(authorization|api[_-]?key|secret|password|token|cookie)", re.I)
_BEARER = re.compile(r"(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}")
REDACTED = "[redacted]"
PAGE = 2000  # events per page when a caller does not say
EXPORT_CHUNK = 5000  # lines per export reply: about 2 MB of JSON, encoded on the loop in ~10 ms
MAX_MESSAGE = 256 * 1024  # a message's JSON above this is stored as a preview plus its size
PREVIEW = 4096
RING_BYTES = 256 * 1024 * 1024  # the ring's lines together; the count cap alone let 50 MB events pile up


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


def _encode(message: Any) -> tuple[Any, str]:
    """The message as stored (redacted; a preview if it is huge) and its JSON."""
    try:
        clean = redact(message)
        body = json.dumps(clean, default=str)
        masked = SECRETS.mask(body)  # known secret values echoed by others (core/redact.py, S9)
        if masked != body:
            clean, body = json.loads(masked), masked
    except Exception as exc:  # logging must never fail its caller: a value's own __str__ may raise anything
        clean = {"moka/unencodable": f"{type(exc).__name__}: {exc}"[:500]}
        return clean, json.dumps(clean)
    if len(body) > MAX_MESSAGE:
        clean = {"moka/truncated": True, "size": len(body), "preview": body[:PREVIEW]}
        body = json.dumps(clean)
    return clean, body


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
        entry = (0, str(ev.get("channel", "")), ev.get("server"), ev.get("view"), ev.get("method") or ev.get("request_method"),
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
    problem: str | None = None  # the disk log's problem, so the screen can say events are not saved
    size: int = 0  # characters of the ring's lines now (its other cap, next to `capacity`)

    def to_json(self) -> dict[str, Any]:
        """The bridge's reply shape."""
        out = {"events": self.events, "matched": self.matched, "total": self.total, "capacity": self.capacity,
               "newest": self.newest, "before": self.before, "size": self.size}
        if self.problem:
            out["logProblem"] = self.problem
        return out


@dataclass
class Chunk:
    """Part of an export: matching events oldest first, as JSONL."""

    content: str
    count: int
    next: int | None  # pass as `after` for the following chunk; None when this was the last


class Inspector:
    """A bounded in-memory ring of events plus a JSONL file per day."""

    def __init__(self, folder: Path | None, *, capacity: int = 100_000, ring_bytes: int = RING_BYTES,
                 max_log_bytes: int = DEFAULT_MAX_BYTES, log_retry_after: float = 1.0) -> None:
        self.folder = folder
        self.capacity = capacity
        self.ring_bytes = ring_bytes
        self._ring: deque[_Entry] = deque()
        self._ring_size = 0  # bytes of the lines in the ring
        self._log = LogWriter(folder, max_bytes=max_log_bytes, retry_after=log_retry_after) if folder is not None else None
        self.seq = 0
        self.servers: set[str] = set()  # every server an event named, for the screen's filter
        self._lock = threading.Lock()
        self._listeners: list[Callable[[dict[str, Any]], None]] = []
        self._raw_listeners: list[Callable[[str], None]] = []
        self._exchanges = Exchanges()

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
        clean, body = _encode(message)
        with self._lock:
            self.seq += 1
            ev: dict[str, Any] = {"seq": self.seq, "time": time.time(), "channel": channel, "direction": direction}
            if server:
                ev["server"] = server
                self.servers.add(server)
            if view:
                ev["view"] = view
            try:
                pair = self._exchanges.note(str(channel), direction, server or None, view or None, message, self.seq,
                                            ev["time"])
            except Exception:  # pairing is a nicety: a message it can't read must not stop the recording
                pair = None
            if method:
                ev["method"] = method
            found_by = method
            if pair is not None:
                # A response names its request, carries the request's method and is timed. Its own
                # `method` stays unset (it is not a request), but a method filter finds it too.
                ev["reply_to"], ev["request_method"], ev["ms"] = pair["reply_to"], pair["method"], pair["ms"]
                found_by = method or pair["method"]
            # The same text json.dumps(ev) would give, with the message (always last) encoded once.
            head = json.dumps(ev, default=str)[:-1] + ', "message": '
            line = head + body + "}"
            ev["message"] = clean
            self._ring.append((self.seq, str(channel), server or None, view or None, found_by or None, line, len(head)))
            self._ring_size += len(line)
            # Seqs stay consecutive: only the oldest end is dropped (queries rely on it).
            while len(self._ring) > self.capacity or (self._ring_size > self.ring_bytes and len(self._ring) > 1):
                self._ring_size -= len(self._ring.popleft()[_LINE])
            if self._log is not None:
                self._log.write(dt.datetime.fromtimestamp(ev["time"]).strftime("%Y-%m-%d"), line)
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
                    capacity=self.capacity, newest=newest, before=chosen[0][_SEQ] if start > 0 and chosen else None,
                    problem=self.problem, size=self._ring_size)

    @property
    def problem(self) -> str | None:
        """Why the log on disk is not being written right now, or None."""
        return self._log.problem if self._log is not None else None

    def status(self) -> dict[str, Any]:
        """The disk log's health: whether it is written, and how many events it lost so far."""
        out: dict[str, Any] = {"writing": self._log is not None and self._log.problem is None,
                               "dropped": self._log.dropped if self._log is not None else 0}
        if self.problem:
            out["problem"] = self.problem
        return out

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

    def close(self) -> None:
        """Flush and close the day file."""
        with self._lock:
            if self._log is not None:
                self._log.close()
