"""Streamed tool arguments to a call's view: repaired, at most every ``interval`` s, the newest always sent.

Repairing the whole argument text on every fragment would cost time quadratic in its length,
so fragments closer together than ``interval`` are gathered; a timer then sends the newest
text, so a model that stops writing for a while (or a view that finished its handshake late)
is never left with arguments older than the ones that came.
"""

from __future__ import annotations

import asyncio
import time

from moka_shell.core.chat.partial_json import repair_partial_json
from moka_shell.core.chat.tool_call import ToolCall
from moka_shell.core.views.host import ViewHost

PARTIAL_INTERVAL = 0.05


class PartialFeed:
    """Feeds one stream's half-written tool arguments to the views of its calls."""

    def __init__(self, views: ViewHost, interval: float = PARTIAL_INTERVAL) -> None:
        self._views = views
        self._interval = interval
        self._text: dict[str, str] = {}
        self._sent_at: dict[str, float] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}

    def update(self, call: ToolCall, text: str) -> None:
        """The call's argument text so far (the whole of it, not the new piece)."""
        if call.view is None:
            return
        self._text[call.id] = text
        wait = self._sent_at.get(call.id, float("-inf")) + self._interval - time.monotonic()
        if wait <= 0:
            self._send(call)
        elif call.id not in self._timers:
            self._timers[call.id] = asyncio.get_running_loop().call_later(wait, self._send, call)

    def _send(self, call: ToolCall) -> None:
        self._timers.pop(call.id, None)
        self._sent_at[call.id] = time.monotonic()
        partial = repair_partial_json(self._text.get(call.id, ""))
        if partial is not None and call.view is not None:
            self._views.set_partial(call.view, partial)

    def end(self, call: ToolCall) -> None:
        """The call's arguments are complete: nothing older may follow them."""
        timer = self._timers.pop(call.id, None)
        if timer is not None:
            timer.cancel()
        self._text.pop(call.id, None)

    def close(self) -> None:
        """The stream is over (or failed): no timer outlives it."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._text.clear()
