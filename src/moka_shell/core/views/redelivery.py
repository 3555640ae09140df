"""Redelivery: every host → view message is numbered, and a view's newest are kept, so a page that
missed some (its socket dropped; reliability finding N2) is given them again.

A page hears host → view messages only while its socket is up: what the core pushes while it
is down, or into a socket that is already dead, is gone. So each message a view is sent gets the
next number of that view (``seq`` on ``view.post``, ``seqs`` on ``view.broadcast``), and the view's
newest messages are kept, bounded in count and size. The page knows the last number it handed to
each frame; after a reconnect (``views.list`` carries each view's ``seq``) or on a number that
skips, it asks ``view.missed`` for the rest. When they are no longer all kept, the page mounts
the view's frame again instead: the new frame handshakes and is fed input, result, host context
and storage afresh (``note_mounted``).
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

MAX_KEPT = 256  # messages per view
KEPT_CHARS = 4 * 1024 * 1024  # of their JSON per view (a tool result of 4 MiB is fed again by a remount)


def size_of(message: dict[str, Any]) -> int:
    """About how many characters ``message`` is as JSON (what it costs to keep it)."""
    try:
        return len(json.dumps(message, separators=(",", ":"), default=str))
    except (TypeError, ValueError, RecursionError):
        return KEPT_CHARS + 1  # not kept: a page that missed it mounts the view again


class SentLog:
    """One view's numbered host → view messages, the newest kept for a page that missed them."""

    def __init__(self) -> None:
        self.seq = 0  # the number of the last message sent (never reset: pages compare against it)
        self._kept: deque[tuple[int, dict[str, Any], int]] = deque()
        self._chars = 0

    def add(self, message: dict[str, Any], size: int | None = None) -> int:
        """Number ``message`` and keep it (the oldest go past the bounds); returns its number."""
        self.seq += 1
        chars = size_of(message) if size is None else size
        self._kept.append((self.seq, message, chars))
        self._chars += chars
        while self._kept and (len(self._kept) > MAX_KEPT or self._chars > KEPT_CHARS):
            self._chars -= self._kept.popleft()[2]
        return self.seq

    def since(self, after: int) -> list[list[Any]] | None:
        """``[seq, message]`` of every message after number ``after``, or None when some are no longer kept."""
        if after >= self.seq:
            return []
        first = self._kept[0][0] if self._kept else self.seq + 1
        if after < 0 or first > after + 1:
            return None
        return [[n, message] for n, message, _ in self._kept if n > after]

    def forget(self) -> None:
        """Let go of the kept messages (the view's frame is gone, or its data released); numbers go on."""
        self._kept.clear()
        self._chars = 0


def missed(log: SentLog, after: Any) -> dict[str, Any]:
    """``view.missed``'s answer: the messages after ``after``, or ``remount`` when they can't all be given."""
    if not isinstance(after, int) or isinstance(after, bool):
        return {"seq": log.seq, "remount": True}
    messages = log.since(after)
    if messages is None:
        return {"seq": log.seq, "remount": True}
    return {"seq": log.seq, "messages": messages}
