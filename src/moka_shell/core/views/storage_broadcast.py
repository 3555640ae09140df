"""Telling a server's other live views of accepted ``localStorage`` changes, within the storage budget.

An accepted change goes to the server's other views once on the page's socket (``Delivery.to_server``),
and what it carried is charged to the one budget of characters that resyncs keep to (storage_resync.py).
Uncharged, a view rewriting a 4 Mi-character value back to back (200 messages a second are accepted)
pushed 160 Mi characters in about a second, where the page's socket outbox closes the socket past
32 MiB (web/outbox.py), and the UI socket must never drop (security finding G1).

Past the budget, a server's changes are owed instead of sent: each key's newest change waits (a clear
drops what came before it), and they go as one message once the budget has refilled. Each view is sent
what the other views changed, never its own change back (that could overwrite a newer write of its own
still on its way), so every view ends with what is stored and hears a ``storage`` event for each key
another view changed, as before, only fewer of them for a key rewritten many times.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from moka_shell.core.views.delivery import Delivery
from moka_shell.core.views.redelivery import size_of
from moka_shell.core.views.storage import CHANGED_METHOD
from moka_shell.core.views.storage_resync import Budget
from moka_shell.core.views.view import View, notification


@dataclass
class _Owed:
    """One server's changes not sent yet: the newest of each key, and who made it."""

    cleared_by: str | None = None  # the view that cleared the area last, before the changes below
    changes: dict[str, tuple[dict[str, Any], str]] = field(default_factory=dict)  # key -> (change, view id)
    writers: list[str] = field(default_factory=list)  # the views that made them, in order
    timer: asyncio.TimerHandle | None = None

    def add(self, view: View, changes: list[dict[str, Any]]) -> None:
        for change in changes:
            if change.get("op") == "clear":
                self.cleared_by, self.changes, self.writers = view.id, {}, []
            else:
                self.changes.pop(change["key"], None)  # the newest goes last
                self.changes[change["key"]] = (change, view.id)
            if view.id not in self.writers:
                self.writers.append(view.id)

    def seen_by(self, view_id: str | None) -> list[dict[str, Any]]:
        """What ``view_id`` has to be told (None: a view that changed nothing), in order: the other views'
        changes; after another view's clear, its own since then as well (the clear empties its copy)."""
        if self.cleared_by is not None and self.cleared_by != view_id:
            return [{"op": "clear"}] + [change for change, _ in self.changes.values()]
        return [change for change, by in self.changes.values() if by != view_id]


class Broadcasts:
    """Sends a server's accepted changes to its other views while the budget allows, owes them after."""

    def __init__(self, delivery: Delivery, budget: Budget) -> None:
        self._delivery = delivery
        self.budget = budget  # shared with the resyncs of refused batches
        self._owed: dict[str, _Owed] = {}  # server -> what its views are owed

    def changed(self, view: View, changes: list[dict[str, Any]]) -> None:
        """``view`` changed its server's localStorage (accepted and stored)."""
        owed = self._owed.get(view.server)
        if owed is None and self.budget.wait() == 0:
            self.budget.spend(self._delivery.to_server(view.server, self._message(changes), but=(view.id,)))
            return
        if owed is None:  # nothing sent past the budget, nor ahead of what is owed already
            owed = self._owed[view.server] = _Owed()
            owed.timer = asyncio.get_running_loop().call_later(self.budget.wait(), self._pay, view.server)
        owed.add(view, changes)

    def owing(self) -> int:
        """How many servers' views wait for changes now."""
        return len(self._owed)

    def drop(self, server: str) -> None:
        """The server's storage was cleared and its views told: nothing owed is true any more."""
        owed = self._owed.pop(server, None)
        if owed is not None and owed.timer is not None:
            owed.timer.cancel()

    def _pay(self, server: str) -> None:
        owed = self._owed.get(server)
        if owed is None:
            return
        wait = self.budget.wait()
        if wait > 0:  # resyncs or other servers' changes used the budget first
            owed.timer = asyncio.get_running_loop().call_later(wait, self._pay, server)
            return
        del self._owed[server]
        sent = self._delivery.to_server(server, self._message(owed.seen_by(None)), but=owed.writers)
        for writer in owed.writers:
            view = self._delivery.live(writer)
            changes = owed.seen_by(writer)
            if view is not None and changes:
                message = self._message(changes)
                self._delivery.send(view, message)
                sent += size_of(message)
        self.budget.spend(sent)

    @staticmethod
    def _message(changes: list[dict[str, Any]]) -> dict[str, Any]:
        return notification(CHANGED_METHOD, {"area": "local", "changes": changes})
