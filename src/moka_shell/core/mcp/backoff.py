"""When to try a failed server again: a growing delay that starts over after a healthy session."""

from __future__ import annotations

import time

BACKOFF = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
HEALTHY_SECONDS = 60.0  # a session ready this long was healthy: the next retry starts from the shortest delay


class Backoff:
    """Counts failures in a row; ``ready()`` marks the start of a session, ``next_delay()`` ends it."""

    def __init__(self, delays: tuple[float, ...] = BACKOFF, healthy_seconds: float = HEALTHY_SECONDS) -> None:
        self.delays = delays
        self.healthy_seconds = healthy_seconds
        self.failures = 0
        self._ready_since: float | None = None

    def ready(self) -> None:
        """The connection is up now."""
        self._ready_since = time.monotonic()

    def next_delay(self) -> float:
        """The session ended: how long to wait before the next attempt (finding R1.9)."""
        healthy = self._ready_since is not None and time.monotonic() - self._ready_since >= self.healthy_seconds
        self._ready_since = None
        self.failures = 0 if healthy else self.failures + 1
        return self.delays[min(self.failures, len(self.delays) - 1)]
