"""Parking: while many views are live, the ones longest off screen are torn down and come back later.

This is the policy only (which views, and when); the view host does the teardown and the remount.
"""

from __future__ import annotations

import time

from moka_shell.core.views.view import View

MAX_LIVE_VIEWS = 6  # views kept mounted while off screen; beyond this, off-screen views are parked


class Parking:
    """The many-views policy of one view host."""

    def __init__(self, views: dict[str, View], max_live: int = MAX_LIVE_VIEWS) -> None:
        self._views = views
        self.max_live = max_live
        self.offscreen_since: dict[str, float] = {}

    def offscreen(self, view: View) -> None:
        """A view's card left the screen: it may be parked."""
        self.offscreen_since[view.id] = time.monotonic()

    def onscreen(self, view: View) -> None:
        """A view's card is back on screen: it is not a candidate any more."""
        self.offscreen_since.pop(view.id, None)

    def forget(self, view_id: str) -> None:
        """A view is gone for good."""
        self.offscreen_since.pop(view_id, None)

    def victims(self) -> list[View]:
        """While more than ``max_live`` views are live, the views off screen longest (inline ones only;
        fullscreen, pip and pop-outs stay), which the host then parks."""
        live = [v for v in self._views.values() if v.live and not v.parking]
        excess = len(live) - self.max_live
        if excess <= 0:
            return []
        # Only views that finished their handshake: a loading view is left to finish first.
        offscreen = sorted((v for v in live if v.id in self.offscreen_since and v.display_mode == "inline"
                            and v.initialized),
                           key=lambda v: self.offscreen_since[v.id])
        return offscreen[:excess]
