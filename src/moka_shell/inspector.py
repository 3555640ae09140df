"""The inspector log: every message and lifecycle event, in memory and on disk.

Events are kept in a bounded ring for the UI and appended to one JSONL file per day
in the data dir for ``moka inspect``. Secrets are redacted before an event is stored.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

CHANNELS = ("mcp.rpc", "ui.rpc", "agent", "server", "view")
_SECRET_KEY = re.compile(r"(authorization|api[_-]?key|secret|password|token|cookie)", re.I)
_BEARER = re.compile(r"(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}")
REDACTED = "[redacted]"


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


@dataclass
class EventFilter:
    """Which events a query wants; empty fields match everything."""

    channel: str | None = None
    server: str | None = None
    view: str | None = None
    method: str | None = None
    text: str | None = None

    def matches(self, ev: dict[str, Any]) -> bool:
        """True if the event passes every given field."""
        if self.channel and not str(ev.get("channel", "")).startswith(self.channel):
            return False
        if self.server and ev.get("server") != self.server:
            return False
        if self.view and ev.get("view") != self.view:
            return False
        if self.method and self.method not in str(ev.get("method") or ""):
            return False
        if self.text and self.text.lower() not in json.dumps(ev.get("message"), default=str).lower():
            return False
        return True


class Inspector:
    """A bounded in-memory ring of events plus a JSONL file per day."""

    def __init__(self, folder: Path | None, *, capacity: int = 100_000) -> None:
        self.folder = folder
        self.ring: deque[dict[str, Any]] = deque(maxlen=capacity)
        self.seq = 0
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
        with self._lock:
            self.seq += 1
            ev: dict[str, Any] = {"seq": self.seq, "time": time.time(), "channel": channel, "direction": direction}
            if server:
                ev["server"] = server
            if view:
                ev["view"] = view
            if method:
                ev["method"] = method
            ev["message"] = redact(message)
            self.ring.append(ev)
            line = json.dumps(ev, default=str)
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
        flt = flt or EventFilter()
        out: list[dict[str, Any]] = []
        with self._lock:
            for ev in reversed(self.ring):
                if flt.matches(ev):
                    out.append(ev)
                    if len(out) >= limit:
                        break
        out.reverse()
        return out

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
