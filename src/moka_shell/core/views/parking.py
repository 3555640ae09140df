"""Parking: while many views are live, the ones longest off screen are torn down and come back later."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from moka_shell.core.views.host import ViewHost
    from moka_shell.core.views.view import View

MAX_LIVE_VIEWS = 6  # views kept mounted while off screen; beyond this, off-screen views are parked


class Parking:
    """The many-views policy of one view host."""

    def __init__(self, host: ViewHost, max_live: int = MAX_LIVE_VIEWS) -> None:
        self._host = host
        self.max_live = max_live
        self.offscreen_since: dict[str, float] = {}

    def on_offscreen(self, view: View) -> None:
        """A view's card left the screen: it may be parked."""
        self.offscreen_since[view.id] = time.monotonic()
        self.enforce()

    def on_onscreen(self, view: View) -> None:
        """A view scrolled back: remount it if it was parked."""
        self.offscreen_since.pop(view.id, None)
        self._host.remount(view)
        self.enforce()

    def enforce(self) -> None:
        """While more than ``max_live`` views are live, park the views that have been off screen
        longest (inline ones only; fullscreen, pip and pop-outs stay)."""
        live = [v for v in self._host.views.values() if v.live and not v.parking]
        excess = len(live) - self.max_live
        if excess <= 0:
            return
        # Only views that finished their handshake: a loading view is left to finish first.
        offscreen = sorted((v for v in live if v.id in self.offscreen_since and v.display_mode == "inline"
                            and v.initialized),
                           key=lambda v: self.offscreen_since[v.id])
        for victim in offscreen[:excess]:
            victim.parking = True
            asyncio.get_running_loop().create_task(self._host.close(victim, "scrolled out of view", park=True))
