"""Opening the conversation database safely, and saying plainly what is wrong when it can't be used.

- Every query goes through ``GuardedConnection``: an SQLite failure that is about the file or the
  disk (full, read-only, damaged, locked) becomes a ``StoreError`` that says so, never a raw
  ``sqlite3`` exception that the bridge could only answer as "internal error". Integrity and
  programming errors pass through unchanged: they are bugs, and code may catch them.
- Nothing is changed before it is understood: the layout is checked against what the migrations
  build, before and after migrating; a database with tables but no version (a foreign or very old
  file) is refused, not stamped; migrations run in one transaction with the new version, so a
  failure leaves the file as it was.
- ``PRAGMA quick_check`` at open: damaged pages are found before the first chat, and the person is
  offered a read-only copy of what is left (store_salvage.py), the original never touched.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from moka_shell.errors import StoreDamagedError, StoreError
from moka_shell.paths import open_private, owner_only

_HINT_DAMAGED = ("Moka did not change the file; on start it shows a read-only copy of what can still be read. "
                 "Move the file aside to start a fresh one")
_HINT_FREE = "free some space on that disk: this change was not saved, everything shown before it is kept, " \
             "and saving works again as soon as there is room"


def store_error(exc: sqlite3.Error, path: str) -> StoreError:
    """What an SQLite failure means for the person, as one of our errors."""
    text = str(exc)
    low = text.lower()
    if "disk is full" in low or "disk full" in low:
        return StoreError(f"the conversation database {path} can't be written: the disk is full", hint=_HINT_FREE)
    if "readonly" in low or "read-only" in low:
        return StoreError(f"the conversation database {path} is open read-only, so this change was not saved",
                          hint="Moka opened a read-only copy because the file is damaged, or the file is not "
                               "writable; see `moka serve` output or app problems")
    if "malformed" in low or "not a database" in low or "corrupt" in low:
        return StoreDamagedError(f"the conversation database {path} is damaged ({text})", hint=_HINT_DAMAGED)
    if "locked" in low or "busy" in low:
        return StoreError(f"the conversation database {path} is busy: another process holds it ({text})",
                          hint="is another Moka using the same data dir? try again in a moment")
    return StoreError(f"the conversation database {path} failed: {text}")


def _passes(exc: sqlite3.Error) -> bool:
    # Constraint and usage errors are our own bugs (or expected by the code that made them): keep them.
    return isinstance(exc, (sqlite3.IntegrityError, sqlite3.ProgrammingError, sqlite3.InterfaceError))


class GuardedCursor(sqlite3.Cursor):
    """A cursor whose file and disk failures are StoreErrors."""

    def _path(self) -> str:
        return getattr(self.connection, "store_path", "?")

    def execute(self, sql: str, parameters: Any = (), /) -> GuardedCursor:  # type: ignore[override]
        """Run one statement."""
        try:
            super().execute(sql, parameters)
        except sqlite3.Error as exc:
            if _passes(exc):
                raise
            raise store_error(exc, self._path()) from exc
        return self

    def executemany(self, sql: str, seq: Iterable[Any], /) -> GuardedCursor:  # type: ignore[override]
        """Run one statement per parameter set."""
        try:
            super().executemany(sql, seq)
        except sqlite3.Error as exc:
            if _passes(exc):
                raise
            raise store_error(exc, self._path()) from exc
        return self

    def fetchone(self) -> Any:
        """The next row (reading a damaged page is a StoreError too)."""
        try:
            return super().fetchone()
        except sqlite3.Error as exc:
            if _passes(exc):
                raise
            raise store_error(exc, self._path()) from exc

    def fetchall(self) -> list[Any]:
        """The remaining rows."""
        try:
            return super().fetchall()
        except sqlite3.Error as exc:
            if _passes(exc):
                raise
            raise store_error(exc, self._path()) from exc

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except sqlite3.Error as exc:
            if _passes(exc):
                raise
            raise store_error(exc, self._path()) from exc


class GuardedConnection(sqlite3.Connection):
    """``sqlite3.connect(..., factory=GuardedConnection)``: every statement through a GuardedCursor."""

    store_path = "?"

    def cursor(self, factory: Any = GuardedCursor) -> Any:  # type: ignore[override]
        """A guarded cursor."""
        return super().cursor(factory)

    def execute(self, sql: str, parameters: Any = (), /) -> GuardedCursor:  # type: ignore[override]
        """Run one statement on a new guarded cursor."""
        return self.cursor().execute(sql, parameters)  # type: ignore[no-any-return]

    def executemany(self, sql: str, seq: Iterable[Any], /) -> GuardedCursor:  # type: ignore[override]
        """Run one statement per parameter set on a new guarded cursor."""
        return self.cursor().executemany(sql, seq)  # type: ignore[no-any-return]

    def executescript(self, script: str, /) -> GuardedCursor:  # type: ignore[override]
        """Run a script (it commits first, as sqlite3 always does)."""
        try:
            return super().executescript(script)  # type: ignore[return-value]
        except sqlite3.Error as exc:
            if _passes(exc):
                raise
            raise store_error(exc, self.store_path) from exc


def connect(path: Path, *, read_only: bool = False) -> GuardedConnection:
    """Open ``path`` with the store's settings (autocommit, rows by name, usable from worker threads)."""
    db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, factory=GuardedConnection)
    db.store_path = str(path)
    db.row_factory = sqlite3.Row
    if read_only:
        db.execute("PRAGMA query_only=ON")
    return db


def statements(script: str) -> list[str]:
    """A migration script cut into statements (``executescript`` would commit between them)."""
    out, current = [], ""
    for line in script.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            if current.strip():
                out.append(current.strip())
            current = ""
    if current.strip():
        out.append(current.strip())
    return out


def _columns(db: sqlite3.Connection) -> dict[str, set[str]]:
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table' "
                                       "AND name NOT LIKE 'sqlite_%'").fetchall()]
    return {t: {r[1] for r in db.execute(f'PRAGMA table_info("{t}")').fetchall()} for t in tables}


def reference_layout(migrations: dict[int, str], upto: int) -> dict[str, set[str]]:
    """The tables and columns the migrations up to ``upto`` build, on an empty database in memory."""
    mem = sqlite3.connect(":memory:")
    try:
        for number in sorted(migrations):
            if number <= upto:
                mem.executescript(migrations[number])
        return _columns(mem)
    finally:
        mem.close()


def layout_problem(db: sqlite3.Connection, expected: dict[str, set[str]]) -> str | None:
    """What the database lacks of ``expected`` (extra tables and columns are fine), or None."""
    found = _columns(db)
    for table, cols in sorted(expected.items()):
        if table not in found:
            return f"table {table} is missing"
        missing = sorted(cols - found[table])
        if missing:
            return f"table {table} lacks the column{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
    return None


def migrate(db: GuardedConnection, migrations: dict[int, str], path: Path) -> None:
    """Bring the database to the newest version for real, or refuse with the file untouched."""
    newest = max(migrations)
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version > newest:
        raise StoreError(f"the conversation database {path} was written by a newer Moka (schema {version}); "
                         "update Moka", hint="Moka did not change the file")
    if version == 0 and _columns(db):
        # Tables but no version: a foreign file, or one from before versions. Only the first layout
        # (a crash between creating it and stamping it) is taken as ours.
        problem = layout_problem(db, reference_layout(migrations, min(migrations)))
        if problem:
            raise StoreError(f"the conversation database {path} has tables but no Moka schema version, and "
                             f"{problem}: it was not made by this Moka", hint="Moka did not change the file; move "
                             "it aside to start fresh, or open it with the program that made it")
    elif version:
        problem = layout_problem(db, reference_layout(migrations, version))
        if problem:
            raise StoreError(f"the conversation database {path} says schema {version}, but {problem}",
                             hint="Moka did not change the file; move it aside to start fresh")
    pending = [n for n in sorted(migrations) if n > version]
    if not pending:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        for number in pending:
            for stmt in statements(migrations[number]):
                db.execute(stmt)
            db.execute(f"PRAGMA user_version={number}")
        problem = layout_problem(db, reference_layout(migrations, newest))
        if problem:
            raise StoreError(f"migrating the conversation database {path} to schema {newest} went wrong: {problem}",
                             hint="Moka rolled the change back; the file is as it was")
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:  # SQLite may have rolled back already (a full disk does)
            db.execute("ROLLBACK")
        raise


def check_integrity(db: GuardedConnection, path: Path) -> None:
    """``PRAGMA quick_check``: raise StoreDamagedError naming the first problem, if any."""
    rows = [r[0] for r in db.execute("PRAGMA quick_check(5)").fetchall()]
    if rows != ["ok"]:
        raise StoreDamagedError(f"the conversation database {path} is damaged ({'; '.join(map(str, rows[:3]))})",
                                hint=_HINT_DAMAGED)


def _copy_private(source: Path, target: Path) -> None:
    # The copy holds the same conversations: owner-only like the original (copyfile would use the umask).
    with source.open("rb") as src, open_private(target, "wb") as out:
        shutil.copyfileobj(src, out)


def scratch_copy(path: Path) -> Path:
    """A byte copy of a damaged database (with its WAL) beside it, to read from; the original stays as it is."""
    scratch = path.with_name(f"{path.name}.damaged-read")
    remove_database(scratch)
    _copy_private(path, scratch)
    side = path.with_name(path.name + "-wal")
    if side.exists():
        _copy_private(side, scratch.with_name(scratch.name + "-wal"))
    return scratch


def remove_database(path: Path) -> None:
    """Delete a database file Moka made (a copy) with its ``-wal``/``-shm``/``-journal``."""
    for name in (path.name, path.name + "-wal", path.name + "-shm", path.name + "-journal"):
        path.with_name(name).unlink(missing_ok=True)


def private_database(path: Path) -> None:
    """Create the database file owner-only before SQLite does (it gives ``-wal``/``-shm`` the file's mode)."""
    try:
        open_private(path, "ab").close()
    except OSError:
        return  # connect() says what is wrong with the place
    for side in ("-wal", "-shm", "-journal"):  # an older Moka's, made with the umask's mode
        owner_only(path.with_name(path.name + side))
