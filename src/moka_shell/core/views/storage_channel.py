"""The ``moka/storage`` notifications a view's prelude sends: checked, bounded, applied, shared.

They are Moka's own, between the prelude and the core: never forwarded to an MCP server, never
counted against the view (a refused write is a warning in the Inspector, not a view problem).
"""

from __future__ import annotations

import json
import sqlite3
from collections import OrderedDict
from typing import Any

from moka_shell.core.views.delivery import Delivery
from moka_shell.core.views.storage import (
    CHANGED_METHOD,
    MAX_OPS_PER_MESSAGE,
    QUOTA,
    Area,
    Snapshot,
    ViewStorage,
    units,
)
from moka_shell.core.views.storage_broadcast import Broadcasts
from moka_shell.core.views.storage_prelude import storage_script
from moka_shell.core.views.storage_resync import Resyncs
from moka_shell.core.views.view import View, notification
from moka_shell.inspector import Inspector

MAX_KEPT_SNAPSHOT = 1024 * 1024  # units of one view's starting storage kept for its recording
MAX_KEPT_VIEWS = 64


class StorageChannel:
    """Receives a view's storage changes and tells the server's other views about them."""

    def __init__(self, areas: ViewStorage, delivery: Delivery, inspector: Inspector) -> None:
        self.areas = areas  # the stored items themselves (SQLite)
        self._delivery = delivery
        self._inspector = inspector
        self.resyncs = Resyncs(self._resync)  # refused batches set the view's copy right, coalesced
        self.broadcasts = Broadcasts(delivery, self.resyncs.budget)  # accepted changes, to the other views
        self.provided = True  # False: `moka check --no-storage`, views see what an opaque origin gives
        self.touched: dict[str, set[str]] = {}  # view id -> areas it used ("local", "session")
        self.denied: dict[str, set[str]] = {}  # view id -> areas it reached for with storage off
        # What each view's first document carried, for recordings (the newest views, small ones whole).
        self._at_start: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def script(self, view: View) -> str:
        """The storage prelude for this view's document, with its values in it."""
        if not self.provided:
            return storage_script({"off": True})
        try:
            snap = self.areas.snapshot(view)
        except sqlite3.Error as exc:  # the view still loads, with empty storage, and the Inspector says why
            self._warn(view, f"its storage could not be read ({exc}); the view starts with none")
            snap = Snapshot([], [], 0, 0)
        if view.id not in self._at_start:
            small = snap.local_used + snap.session_used <= MAX_KEPT_SNAPSHOT
            self._at_start[view.id] = {"local": snap.local, "session": snap.session} if small else \
                {"local": [], "session": [], "omitted": f"{snap.local_used + snap.session_used} units, over "
                                                        f"{MAX_KEPT_SNAPSHOT} kept for recordings"}
            while len(self._at_start) > MAX_KEPT_VIEWS:
                self._at_start.popitem(last=False)
        return storage_script(snap.to_json())

    def at_start(self, view: View) -> dict[str, Any]:
        """The storage the view started with (a recording replays from it)."""
        return self._at_start.get(view.id) or {"local": self.areas.items(view, "local"),
                                               "session": self.areas.items(view, "session")}

    def handle(self, view: View, params: Any) -> None:
        """One ``moka/storage`` notification from ``view``.

        The rate is checked first, then the batch's count and size, before anything is read or written
        (security finding G1): a view past its bounds costs Moka a counter, not a database read.
        """
        if not isinstance(params, dict) or params.get("area") not in ("local", "session"):
            return self._warn(view, "a storage message without a valid area was ignored")
        area: Area = params["area"]
        ops = params.get("ops")
        has_ops = isinstance(ops, list) and bool(ops)
        if not self.areas.allowed(view):
            if has_ops and self.provided:
                self._refuse(view, area, "the view writes storage faster than Moka accepts")
            return None
        if params.get("denied"):
            self.denied.setdefault(view.id, set()).add(area)
            return self._log(view, area, "denied", 0)
        self.touched.setdefault(view.id, set()).add(area)
        if not has_ops:
            return self._log(view, area, "used", 0)
        if not self.provided:
            return
        assert isinstance(ops, list)
        if len(ops) > MAX_OPS_PER_MESSAGE or not all(isinstance(op, dict) for op in ops):
            return self._refuse(view, area, f"a storage batch of {len(ops)} changes is over Moka's limit of "
                                            f"{MAX_OPS_PER_MESSAGE}")
        size = sum(units(str(op.get("key", ""))) + units(str(op.get("value", ""))) for op in ops)
        if size > 2 * QUOTA:
            return self._refuse(view, area, f"a storage batch of {size} units is over twice the quota")
        try:
            changes, refusal = self.areas.apply(view, area, ops)
        except sqlite3.Error as exc:  # a full disk, a read-only copy of a damaged store
            changes, refusal = [], f"the database refused it ({exc})"
        if refusal:
            return self._refuse(view, area, refusal)
        self._log(view, area, "changed", len(changes), keys=[c.get("key") for c in changes[:20]])
        if area == "local" and changes:
            # Once on the socket, whatever the number of views (the page hands it to each; G1, row 34),
            # and within the budget resyncs keep to: past it, coalesced and sent later.
            self.broadcasts.changed(view, changes)

    def forget(self, view: View) -> None:
        """A view closed for good."""
        self.touched.pop(view.id, None)
        self.denied.pop(view.id, None)
        self.resyncs.forget(view)
        try:
            self.areas.forget_view(view)
        except sqlite3.Error:
            pass  # its sessionStorage stays until the next start, which clears unrecorded views' anyway

    def clear_server(self, server: str) -> None:
        """Clear a server's storage, and tell its live views their copies are empty now."""
        self.areas.clear_server(server)
        self.broadcasts.drop(server)
        for area in ("local", "session"):
            self._delivery.to_server(server, notification(CHANGED_METHOD, {"area": area, "reset": []}))

    def _refuse(self, view: View, area: Area, reason: str) -> None:
        # The view's copy now differs from what is stored. The refusal sends nothing back: the
        # stored items go once the view may have them again (storage_resync.py), so refusals
        # cannot multiply what a view sends into what the page's socket carries.
        if self.resyncs.owe(view, area, reason):
            self._warn(view, f"{area}Storage change refused: {reason}; Moka sets the view's copy right")

    def _resync(self, view: View, area: Area, reason: str, refused: int) -> int:
        if refused > 1:
            self._warn(view, f"{area}Storage: {refused - 1} more batches refused (first: {reason}); "
                             "the view's copy is set right once")
        try:
            items = self.areas.items(view, area)
        except sqlite3.Error:
            return 0  # nothing to read back either; the view keeps its copy until it is mounted again
        message = notification(CHANGED_METHOD, {"area": area, "reset": items})
        self._delivery.send(view, message)
        return len(json.dumps(message))  # what the page's socket carries, for the resyncs' budget

    def _warn(self, view: View, reason: str) -> None:
        self._inspector.record("view", {"event": "storage-refused", "reason": reason},
                                    server=view.server, view=view.id, method="view/storage")

    def _log(self, view: View, area: Area, event: str, count: int, keys: list[Any] | None = None) -> None:
        # Keys and counts only: values are the app's data and stay out of the Inspector's log.
        self._inspector.record("view", {"event": f"storage-{event}", "area": area, "changes": count,
                                             "keys": keys or []},
                                    server=view.server, view=view.id, method="view/storage")
