"""Pairs JSON-RPC requests with their responses as the Inspector records them.

A response event then names its request (``reply_to``, the request's seq), the request's method
(``request_method``) and how long the exchange took (``ms``), so the Inspector can show one row per
exchange, find responses by method and time every call, without the screen matching ids itself.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

# Requests that never get an answer (a server that died, a notification with a stray id) must not
# grow the table without bound: the oldest pending one is forgotten first.
PENDING_CAP = 4096

_OPPOSITE = {"in": "out", "out": "in"}

_Key = tuple[str, str | None, str | None, str, str]


class Exchanges:
    """Remembers pending requests per (channel, server, view, direction, id) until answered."""

    def __init__(self, capacity: int = PENDING_CAP) -> None:
        self.capacity = capacity
        self._pending: OrderedDict[_Key, tuple[int, str, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._pending)

    def note(self, channel: str, direction: str, server: str | None, view: str | None,
             message: Any, seq: int, when: float) -> dict[str, Any] | None:
        """Record a request, or return ``{reply_to, method, ms}`` for the response to one."""
        if not isinstance(message, dict):
            return None
        rid = message.get("id")
        if rid is None or isinstance(rid, (dict, list, bool)):
            return None
        # JSON-RPC ids are numbers or strings; 5 and "5" are different ids.
        ident = f"{type(rid).__name__}:{rid}"
        method = message.get("method")
        if isinstance(method, str):
            key = (channel, server, view, direction, ident)
            self._pending[key] = (seq, method, when)
            self._pending.move_to_end(key)
            while len(self._pending) > self.capacity:
                self._pending.popitem(last=False)
            return None
        if "result" not in message and "error" not in message:
            return None
        asked = _OPPOSITE.get(direction)
        if asked is None:
            return None
        hit = self._pending.pop((channel, server, view, asked, ident), None)
        if hit is None:
            return None
        request_seq, request_method, started = hit
        return {"reply_to": request_seq, "method": request_method, "ms": round((when - started) * 1000, 1)}
