"""Dice rolling and the in-process roll history behind the moka-demo tools."""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Literal, TypedDict

MIN_SIDES, MAX_SIDES = 2, 100
MIN_COUNT, MAX_COUNT = 1, 20
HISTORY_LIMIT = 20

Source = Literal["model", "app"]


# Plain dicts, not pydantic models: the stdio demo server runs on the standard library alone
# (docs/performance.md §11). Their JSON Schemas live in `catalog.py`.


class DiceRoll(TypedDict):
    """One roll of `count` dice with `sides` faces each."""

    sides: int
    count: int
    rolls: list[int]
    total: int


class HistoryEntry(DiceRoll):
    """A roll remembered by the server, with who asked for it and when."""

    source: Source
    at: str


class DiceHistory(TypedDict):
    """The most recent rolls of this server process, oldest first."""

    entries: list[HistoryEntry]


class DiceError(ValueError):
    """Arguments outside the supported ranges."""


def validate(sides: int, count: int) -> None:
    """Raise `DiceError` with a readable message when sides or count is out of range."""
    problems = []
    if isinstance(sides, bool) or not MIN_SIDES <= sides <= MAX_SIDES:
        problems.append(f"sides must be a whole number from {MIN_SIDES} to {MAX_SIDES} (got {sides!r})")
    if isinstance(count, bool) or not MIN_COUNT <= count <= MAX_COUNT:
        problems.append(f"count must be a whole number from {MIN_COUNT} to {MAX_COUNT} (got {count!r})")
    if problems:
        raise DiceError("; ".join(problems))


def roll(sides: int, count: int, rng: random.Random | None = None) -> DiceRoll:
    """Roll `count` dice of `sides` faces after validating the ranges."""
    validate(sides, count)
    source = rng or random.SystemRandom()
    rolls = [source.randint(1, sides) for _ in range(count)]
    return {"sides": sides, "count": count, "rolls": rolls, "total": sum(rolls)}


def describe(result: DiceRoll) -> str:
    """A sentence a model can read on its own, e.g. "Rolled 3d6: 4, 2, 6 (total 12)"."""
    values = ", ".join(str(value) for value in result["rolls"])
    return f"Rolled {result['count']}d{result['sides']}: {values} (total {result['total']})"


class RollLog:
    """A bounded memory of recent rolls, kept for the life of one server."""

    def __init__(self, limit: int = HISTORY_LIMIT) -> None:
        self._entries: deque[HistoryEntry] = deque(maxlen=limit)

    def record(self, result: DiceRoll, source: Source) -> HistoryEntry:
        """Remember a roll and return the stored entry."""
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        entry: HistoryEntry = {**result, "source": source, "at": stamp}
        self._entries.append(entry)
        return entry

    def snapshot(self) -> DiceHistory:
        """The remembered rolls, oldest first."""
        return {"entries": list(self._entries)}


def summarize(entries: Iterable[HistoryEntry]) -> str:
    """A short plain-text summary of past rolls for a model."""
    items = list(entries)
    if not items:
        return "No dice have been rolled yet in this session."
    dice = sum(item["count"] for item in items)
    best = max(items, key=lambda item: item["total"])
    by_app = sum(1 for item in items if item["source"] == "app")
    lines = [
        f"{len(items)} roll(s) so far ({by_app} from the dice view), {dice} dice in all.",
        f"Highest total: {best['total']} on {best['count']}d{best['sides']}.",
        "Most recent: " + "; ".join(describe(item) for item in items[-3:]) + ".",
    ]
    return "\n".join(lines)
