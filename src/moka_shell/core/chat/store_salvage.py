"""Salvage: what can still be read of a damaged conversation database, copied into a fresh one.

A byte copy of a damaged file is as damaged as the file (reliability finding 3.8: the list of
conversations failed on it). Instead every table of the current schema is read row by row in
rowid order from a scratch copy; a read that fails (a malformed page) is skipped past by probing
the rowids after the last good row, so one bad page costs the rows on it, not the table. The rows
go into a new database built with the current schema. Conversations whose row was lost but whose
messages were read come back under a placeholder title. The original file is only ever read.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from moka_shell.core.chat.store_health import remove_database, scratch_copy

# Order matters: conversations first, so the placeholder step knows which ones are missing.
TABLES = ("conversations", "messages", "tool_calls", "views", "attachments",
          "view_local_storage", "view_session_storage")
# After a failed read, rowids after the last good one are tried one by one, then in growing
# steps: a bad leaf page holds at most a few hundred rows, a bad interior page many more.
LINEAR_PROBES = 1024
MAX_PROBES = 4096  # per damaged spot: past this, the rest of the table counts as lost
BATCH = 500  # rows per insert into the new database
LOST_TITLE = "Recovered conversation (its title was lost)"


@dataclass
class Salvage:
    """What a salvage recovered and what it could not read."""

    rows: dict[str, int] = field(default_factory=dict)  # table -> rows copied
    skipped: dict[str, int] = field(default_factory=dict)  # table -> damaged spots skipped past
    untitled: int = 0  # conversations brought back under a placeholder title
    gapped: int = 0  # conversations with some messages missing
    unreadable: str | None = None  # why nothing at all could be read

    def summary(self) -> str:
        """One sentence for the person: how much came back and what is missing."""
        if self.unreadable is not None:
            return f"nothing could be recovered from it ({self.unreadable})"
        convs, msgs = self.rows.get("conversations", 0), self.rows.get("messages", 0)
        text = f"recovered {convs} conversation{'s' * (convs != 1)} and {msgs} message{'s' * (msgs != 1)}"
        lost = []
        spots = sum(self.skipped.values())
        if spots:
            where = ", ".join(f"{t} {n}" for t, n in self.skipped.items() if n)
            lost.append(f"the rows in {spots} unreadable part{'s' * (spots != 1)} of the file ({where})")
        if self.untitled:
            lost.append(f"the title of {self.untitled} conversation{'s' * (self.untitled != 1)} "
                        f"(shown as \"{LOST_TITLE}\")")
        if self.gapped:
            lost.append(f"some messages of {self.gapped} conversation{'s' * (self.gapped != 1)}")
        return text + ("; lost: " + "; ".join(lost) if lost else "; nothing was lost")


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in db.execute(f'PRAGMA table_info("{table}")').fetchall()]


def _declared(db: sqlite3.Connection, table: str) -> dict[str, str]:
    return {r[1]: str(r[2]).upper() for r in db.execute(f'PRAGMA table_info("{table}")').fetchall()}


def _fit(value: Any, declared: str) -> Any:
    """``value`` as its column's declared type says it should be, or None when it cannot be.

    A garbled record header can give any column any storage class: a title read back as bytes or
    a timestamp as text. SQLite keeps what it is given, so without this the copy held them as they
    were and every reader got a type it never expects (a title that is bytes broke the list).
    """
    if value is None:
        return None
    if "INT" in declared:
        if isinstance(value, int):
            return value
        try:
            return int(float(value.decode() if isinstance(value, bytes) else value))
        except (ValueError, OverflowError, UnicodeDecodeError, TypeError):
            return None
    if "CHAR" in declared or "CLOB" in declared or "TEXT" in declared:
        return _text(value) if isinstance(value, bytes) else value if isinstance(value, str) else str(value)
    if "REAL" in declared or "FLOA" in declared or "DOUB" in declared:
        if isinstance(value, float):
            return value
        try:
            number = float(value.decode() if isinstance(value, bytes) else value)
        except (ValueError, OverflowError, UnicodeDecodeError, TypeError):
            return None
        return number if number == number and abs(number) != float("inf") else None  # no NaN, no infinity
    return value  # BLOB (an attachment's bytes) or no declared type: kept as read


def _text(raw: bytes) -> str:
    # A damaged page can hold any bytes: a column that is not UTF-8 any more is shown with U+FFFD.
    return raw.decode("utf-8", "replace")


class _Reader:
    """Reads one table of the damaged file in rowid order, stepping over what fails."""

    def __init__(self, src: sqlite3.Connection, table: str, columns: list[str]) -> None:
        cols = ", ".join(f'"{c}"' for c in columns)
        self._sql = f'SELECT rowid, {cols} FROM "{table}" WHERE rowid > ? ORDER BY rowid'
        self._src = src
        self.skipped = 0

    def rows(self, put: Callable[[list[Any]], None]) -> None:
        """Hand every readable row (without its rowid) to ``put``."""
        last: int | None = -(2**63)
        while last is not None:
            last = self._scan(last, put)
            if last is not None:
                self.skipped += 1
                last = self._next_readable(last)

    def _scan(self, after: int, put: Callable[[list[Any]], None]) -> int | None:
        """Rows after ``after`` until the end (None) or a failed read (the last good rowid)."""
        last = after
        try:
            for row in self._src.execute(self._sql, (after,)):
                # Rowids out of order (a damaged page) must not send the scan backwards.
                if isinstance(row[0], int) and row[0] > last:
                    last = row[0]
                put(list(row[1:]))
        except sqlite3.DatabaseError:
            return last
        return None

    def _next_readable(self, bad: int) -> int | None:
        """A rowid just before the next row that can be read past ``bad``, or None: the rest is lost."""
        step, probe = 1, bad
        for n in range(MAX_PROBES):
            probe += step
            if n >= LINEAR_PROBES:
                step *= 2
            try:
                row = self._src.execute(self._sql.replace("ORDER BY rowid", "ORDER BY rowid LIMIT 1"),
                                        (probe,)).fetchone()
            except sqlite3.DatabaseError:
                continue
            return None if row is None else probe
        return None


def _copy_table(src: sqlite3.Connection, dst: sqlite3.Connection, table: str) -> tuple[int, int]:
    """Copy what can be read of ``table``; returns (rows copied, damaged spots skipped)."""
    try:
        have = set(_columns(src, table))
    except sqlite3.DatabaseError:
        return 0, 1
    columns = [c for c in _columns(dst, table) if c in have]
    if not columns:
        return 0, 0
    types = _declared(dst, table)
    kinds = [types.get(c, "") for c in columns]
    insert = (f'INSERT OR IGNORE INTO "{table}" ({", ".join(chr(34) + c + chr(34) for c in columns)}) '
              f'VALUES ({", ".join("?" * len(columns))})')
    batch: list[list[Any]] = []
    copied = 0

    def flush() -> None:
        nonlocal copied
        for row in batch:  # one by one: a garbled row that breaks a constraint costs only itself
            try:
                copied += dst.execute(insert, row).rowcount
            except (sqlite3.IntegrityError, sqlite3.InterfaceError, sqlite3.OperationalError):
                continue
        batch.clear()

    def put(row: list[Any]) -> None:
        batch.append([_fit(value, kind) for value, kind in zip(row, kinds)])
        if len(batch) >= BATCH:
            flush()

    reader = _Reader(src, table, columns)
    reader.rows(put)
    flush()
    return copied, reader.skipped


def _placeholders(dst: sqlite3.Connection) -> int:
    """Conversations whose row was lost but whose messages were read get a placeholder title."""
    cur = dst.execute(
        "INSERT INTO conversations (id, title, created_at, updated_at) "
        "SELECT conversation_id, ?, MIN(created_at), MAX(created_at) FROM messages "
        "WHERE conversation_id NOT IN (SELECT id FROM conversations) GROUP BY conversation_id", (LOST_TITLE,))
    return int(cur.rowcount)


def _gapped(dst: sqlite3.Connection) -> int:
    """Conversations whose message numbers have holes (their messages' rows were on a bad page)."""
    row = dst.execute("SELECT COUNT(*) FROM (SELECT conversation_id FROM messages GROUP BY conversation_id "
                      "HAVING MAX(seq) > COUNT(*))").fetchone()
    return int(row[0])


def salvage(source: Path, target: Path) -> Salvage:
    """Copy what can be read of the database at ``source`` into the one at ``target`` (at the current schema)."""
    report = Salvage()
    try:
        src = sqlite3.connect(str(source), isolation_level=None)
    except sqlite3.Error as exc:
        report.unreadable = str(exc)
        return report
    src.text_factory = _text
    # Plain connections, not the store's guarded ones: here a failed read is expected, and skipped.
    dst = sqlite3.connect(str(target), isolation_level=None)
    try:
        try:
            found = {r[0] for r in src.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()}
        except sqlite3.DatabaseError as exc:
            report.unreadable = f"its list of tables can't be read: {exc}"
            return report
        dst.execute("PRAGMA foreign_keys=OFF")  # rows come back in any order, and some never
        dst.execute("BEGIN")
        for table in TABLES:
            if table in found:
                report.rows[table], report.skipped[table] = _copy_table(src, dst, table)
        report.untitled = _placeholders(dst)
        report.rows["conversations"] = report.rows.get("conversations", 0) + report.untitled
        report.gapped = _gapped(dst)
        dst.execute("COMMIT")
        dst.execute("PRAGMA journal_mode=DELETE")  # the copy is only read: no -wal/-shm beside it
    finally:
        src.close()
        dst.close()
    return report


def salvaged_copy(path: Path, fresh: Callable[[Path], None]) -> tuple[Path, Salvage]:
    """Build ``<name>.damaged-copy``: ``fresh`` makes it at the current schema, then what can be read goes in.

    One copy, made again at each start (it is only ever read): restarts don't pile copies up. Raises
    OSError when no copy can be made (a full disk).
    """
    copy = path.with_name(f"{path.name}.damaged-copy")
    scratch = scratch_copy(path)
    try:
        remove_database(copy)
        fresh(copy)
        return copy, salvage(scratch, copy)
    finally:
        remove_database(scratch)
