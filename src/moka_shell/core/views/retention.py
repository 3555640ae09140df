"""Views let go of what they no longer need, so memory after many UI runs comes back to a plateau.

A view that ended (closed, or failed: its error card needs only the reason) drops its input,
result and queued messages once its tool call is over and a short grace has passed (the chat
engine stores the result for reopening right after the call; the grace leaves it that moment).
A parked view whose call is stored in a conversation drops them too, and reads them back from the
store when it is mounted again. Of the ended views, only the newest ``MAX_ENDED`` are remembered at
all (a late event for an older one is answered "no view"), so ids do not pile up either.
"""

from __future__ import annotations

import asyncio
import ctypes
import sys
from collections import deque
from collections.abc import Callable
from typing import Any

from moka_shell.core.views.parking import Parking
from moka_shell.core.views.view import View

RELEASE_AFTER = 10.0  # seconds between a view ending (with its call over) and its data going
MAX_ENDED = 256  # ended views still known by id

TRIM_EVERY = 2.0  # seconds between giving freed heap pages back to the OS (glibc only)

RecordReader = Callable[[str], "dict[str, Any] | None"]  # the store's view record by id


class Retention:
    """When each view's data may go, for one view host (the view itself lets go: ``View.release``)."""

    def __init__(self, views: dict[str, View], parking: Parking, records: RecordReader | None,
                 release_after: float = RELEASE_AFTER, max_ended: int = MAX_ENDED) -> None:
        self._views = views
        self._parking = parking
        self._records = records  # None: this run stores no conversations, so nothing can be read back
        self.release_after = release_after
        self.max_ended = max_ended
        self._ended: deque[str] = deque()
        self._trim = _malloc_trim()
        self._trim_pending = False
        self._kept: set[str] = set()  # servers whose failed views keep their data (``moka dev``)

    def keep_failed(self, server: str) -> None:
        """``moka dev``: ``server``'s failed views keep input and result, to be re-rendered after a fix."""
        self._kept.add(server)

    def settled(self, view: View) -> None:
        """The view ended or was parked: release its data once its call is over and the grace has passed."""
        if view.state in ("closed", "failed"):
            if view.id not in self._ended:
                self._ended.append(view.id)
            self._forget_oldest()
        elif view.state != "parked":
            return
        self._later(view)

    def _later(self, view: View) -> None:
        try:
            asyncio.get_running_loop().call_later(self.release_after, self._release, view)
        except RuntimeError:  # no loop (a test driving the host by hand): release now
            self._release(view)

    def restore(self, view: View) -> None:
        """A parked view comes back: read its input and result again from the store."""
        if view.released:
            view.restore(self._records(view.record_id) if self._records and view.record_id else None)

    def _release(self, view: View) -> None:
        if view.released or (view.state == "failed" and view.server in self._kept):
            return
        if not view.ended:
            if view.state in ("closed", "failed", "parked"):
                self._later(view)  # the call still runs and its owner will read the result: look again later
            return
        if view.state == "parked":
            if not (view.record_id and self._records):
                return  # nothing else has its data: it must stay to be mounted again
        elif view.state not in ("closed", "failed"):
            return  # mounted again meanwhile
        view.release()
        self._trim_soon()

    def _trim_soon(self) -> None:
        # glibc keeps freed results in its heap (3 MB strings past its raised mmap threshold): the
        # objects are gone but RSS stays. Hand the pages back, at most once per TRIM_EVERY seconds.
        if self._trim is None or self._trim_pending:
            return
        self._trim_pending = True

        def trim() -> None:
            self._trim_pending = False
            if self._trim is not None:
                self._trim(0)

        try:
            asyncio.get_running_loop().call_later(TRIM_EVERY, trim)
        except RuntimeError:
            trim()

    def _forget_oldest(self) -> None:
        views = self._views
        excess = len(self._ended) - self.max_ended
        for _ in range(max(0, excess)):
            vid = self._ended.popleft()
            view = views.get(vid)
            if view is not None and view.state in ("closed", "failed") and not view.pending and not view.inflight:
                del views[vid]
                self._parking.forget(vid)
            elif view is not None and view.state in ("closed", "failed"):
                self._ended.append(vid)  # still answering something: try again later


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where there is none (macOS, Windows, musl)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn: Callable[[int], int] = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
    return fn
