"""Rate limits for what a view can make Moka repeat (findings S5, S8): token buckets, bounded.

A hostile view sent ``ui/notifications/initialized`` 100 times and got a 1 MiB result replayed
100 times; any local page could file CSP reports without end. Each kind of repeat gets a small
bucket per view: a burst is allowed (a page reload re-handshakes every view), more is dropped,
and the first drop of each kind is logged once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Bucket:
    """``capacity`` tokens, refilled at ``per_second``; one token per admitted event."""

    capacity: float
    per_second: float
    tokens: float
    stamp: float

    def take(self, now: float) -> bool:
        """Spend a token if there is one."""
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.per_second)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class Throttle:
    """Buckets per (view, kind); ``admit`` says whether one more event of that kind may pass."""

    MAX_KEYS = 10_000  # views come and go; forget the oldest buckets past this

    def __init__(self, limits: dict[str, tuple[float, float]], *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits  # kind -> (burst, refill per second)
        self._clock = clock
        self._buckets: dict[tuple[str, str], Bucket] = {}
        self.dropped: dict[tuple[str, str], int] = {}

    def admit(self, view_id: str, kind: str) -> bool:
        """True if this event passes; False (and counted) if it is over the limit."""
        key = (view_id, kind)
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self.MAX_KEYS:
                self._buckets.pop(next(iter(self._buckets)))
            burst, rate = self.limits[kind]
            bucket = self._buckets[key] = Bucket(burst, rate, burst, now)
        if bucket.take(now):
            return True
        if len(self.dropped) >= self.MAX_KEYS and key not in self.dropped:
            self.dropped.pop(next(iter(self.dropped)))
        self.dropped[key] = self.dropped.get(key, 0) + 1
        return False

    def first_drop(self, view_id: str, kind: str) -> bool:
        """True right after the first dropped event of this kind (the one to log)."""
        return self.dropped.get((view_id, kind)) == 1

    def forget(self, view_id: str) -> None:
        """Drop a closed view's buckets."""
        for key in [k for k in self._buckets if k[0] == view_id]:
            self._buckets.pop(key, None)
            self.dropped.pop(key, None)
