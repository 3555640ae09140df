"""Setting a view's storage copy right after a refused batch: coalesced, so refusals cannot amplify.

A refused batch leaves the view's copy (the prelude's) different from what is stored, and only
the stored items can set it right. Sending them with every refusal made 15 KB of refused batches
cost 5 MB each on the page's socket (security finding G1, row 19). So a refusal itself sends
nothing: it marks the view's area stale, and the stored items go back once, as soon as that
view and area may have them again. The first resync after a quiet spell goes at once; a view that
keeps being refused waits twice as long each time, up to ``resync_every``'s upper bound. And all
views' resyncs together keep within one budget of characters (a burst, then so many a second), shared
with the broadcasts of accepted changes (storage_broadcast.py), so six views refused at once cannot pile 60 Mi characters onto the page's socket, whose outbox closes
the socket past 32 MiB (web/outbox.py): they go one after another instead.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from moka_shell.core.views.storage import Area
from moka_shell.core.views.view import View

RESYNC_EVERY = (1.0, 30.0)  # seconds between two resyncs of one view's area: the first interval, the longest
BUDGET = (8 * 1024 * 1024, 8 * 1024 * 1024)  # characters of every resync and broadcast together: a burst, then per second


class Budget:
    """A token bucket in characters; what was sent is paid after (the bucket may go below zero)."""

    def __init__(self, burst: float, rate: float) -> None:
        self.burst, self.rate = burst, rate
        self.tokens, self._at = burst, time.monotonic()

    def wait(self) -> float:
        """Seconds until the next resync may go (0: now)."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self._at) * self.rate)
        self._at = now
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate

    def spend(self, chars: int) -> None:
        """A resync of ``chars`` characters went."""
        self.tokens -= chars


@dataclass
class _Stale:
    """One view's area whose copy is out of date, and when it may be resent."""

    reason: str  # the first refusal since the last resync, for the Inspector
    refused: int = 1  # batches refused since the last resync
    next_at: float = 0.0  # monotonic time the next resync may go
    interval: float = 0.0
    timer: asyncio.TimerHandle | None = None


class Resyncs:
    """Owes views their stored items after refusals, and pays each debt once per interval.

    ``send(view, area, reason, refused)`` sends the stored items (and says why, and how many batches
    were refused) and returns the characters it sent; it is called on the running loop, never from
    inside ``owe``.
    """

    def __init__(self, send: Callable[[View, Area, str, int], int]) -> None:
        self._send = send
        self._stale: dict[tuple[str, Area], _Stale] = {}
        self._views: dict[str, View] = {}
        self.every = RESYNC_EVERY
        self.budget = Budget(*BUDGET)

    def owe(self, view: View, area: Area, reason: str) -> bool:
        """A batch of ``view``'s ``area`` was refused; True when it is the first since the last resync."""
        key = (view.id, area)
        stale = self._stale.get(key)
        if stale is None:
            stale = self._stale[key] = _Stale(reason, refused=0, interval=self.every[0])
        first = stale.refused == 0
        if first:
            stale.reason = reason
        stale.refused += 1
        if stale.timer is None:
            self._views[view.id] = view
            delay = max(0.0, stale.next_at - time.monotonic())
            stale.timer = asyncio.get_running_loop().call_later(delay, self._pay, key)
        return first

    def _pay(self, key: tuple[str, Area]) -> None:
        stale = self._stale.get(key)
        view = self._views.get(key[0])
        if stale is None or view is None:
            return
        wait = self.budget.wait()
        if wait > 0:  # other views' resyncs used the budget: this one goes when it has refilled
            stale.timer = asyncio.get_running_loop().call_later(wait, self._pay, key)
            return
        stale.timer = None
        now = time.monotonic()
        low, high = self.every
        # Refused again within twice the interval: the next one waits longer. A quiet spell starts over.
        stale.interval = min(high, stale.interval * 2) if now < stale.next_at + stale.interval else low
        stale.next_at = now + stale.interval
        reason, refused = stale.reason, stale.refused
        stale.refused = 0
        self.budget.spend(self._send(view, key[1], reason, refused))

    def waiting(self) -> int:
        """How many views' areas wait for their resync now."""
        return sum(1 for stale in self._stale.values() if stale.timer is not None)

    def forget(self, view: View) -> None:
        """The view closed: nothing is owed to it any more."""
        for area in ("local", "session"):
            stale = self._stale.pop((view.id, area), None)  # type: ignore[arg-type]
            if stale is not None and stale.timer is not None:
                stale.timer.cancel()
        self._views.pop(view.id, None)
