"""Host-backed Web Storage for views: ``localStorage`` per MCP server, ``sessionStorage`` per view.

Views run in an opaque origin, where the browser's own storage throws ``SecurityError``. The
view prelude (``storage_prelude.py``) defines both objects from a snapshot that arrives with
the view document; every change comes back here as a ``moka/storage`` notification over the
view's own channel. This module is the only reader and writer of that data, and it scopes every
read and write by the view's server, so a view can never see another server's values.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from moka_shell.core.views.view import View

QUOTA = 5 * 1024 * 1024  # per server (localStorage) and per view (sessionStorage), as browsers do
MAX_OPS_PER_MESSAGE = 500
RATE_WINDOW = 1.0  # seconds
MAX_MESSAGES_PER_WINDOW = 200  # per view; the prelude batches, so a well-behaved view sends far fewer
STORAGE_METHOD = "moka/storage"
CHANGED_METHOD = "moka/storage-changed"
Area = Literal["local", "session"]

# Migration 3 of the conversation store (core/chat/store.py). Values are JSON text, so any
# JavaScript string (lone surrogates included) round-trips exactly.
TABLES_SQL = """
CREATE TABLE IF NOT EXISTS view_local_storage (
    server TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, size INTEGER NOT NULL, seq INTEGER NOT NULL,
    PRIMARY KEY (server, key));
CREATE TABLE IF NOT EXISTS view_session_storage (
    scope TEXT NOT NULL, server TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, size INTEGER NOT NULL,
    seq INTEGER NOT NULL, PRIMARY KEY (scope, key));
CREATE INDEX IF NOT EXISTS view_session_storage_by_server ON view_session_storage(server);
"""
# A stored view's sessionStorage goes with it (and so with its conversation).
TRIGGER_SQL = """
CREATE TRIGGER IF NOT EXISTS view_session_storage_gone AFTER DELETE ON views
BEGIN DELETE FROM view_session_storage WHERE scope = 'r:' || old.id; END;
"""
MIGRATION_SQL = TABLES_SQL + TRIGGER_SQL


def units(text: str) -> int:
    """A string's length as JavaScript counts it (UTF-16 code units): what the quota counts."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def session_scope(view: View) -> str:
    """sessionStorage belongs to the stored view when there is one (it survives a reopen)."""
    return f"r:{view.record_id}" if view.record_id else f"v:{view.id}"


@dataclass
class Snapshot:
    """What a view document carries: both areas' items (in insertion order) and the quota."""

    local: list[tuple[str, str]]
    session: list[tuple[str, str]]
    local_used: int
    session_used: int

    def to_json(self) -> dict[str, Any]:
        """The prelude's boot data."""
        return {"local": self.local, "session": self.session, "localUsed": self.local_used,
                "sessionUsed": self.session_used, "quota": QUOTA}


class ViewStorage:
    """The storage areas of every server and view, in SQLite (the store's, or a private one)."""

    def __init__(self, db: sqlite3.Connection | None = None) -> None:
        """The conversation store's database (migration 3 made the tables), or none: then a private
        in-memory one (``moka check``, ``tools``, ``call``; a damaged store's read-only copy), the same
        code path with nothing written to disk."""
        if db is None:
            db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            db.executescript(TABLES_SQL)
        else:
            # A crash may have left sessionStorage of views no conversation kept.
            db.execute("DELETE FROM view_session_storage WHERE scope LIKE 'v:%'")
        self.db = db
        self._rates: dict[str, deque[float]] = {}
        self.rate = (MAX_MESSAGES_PER_WINDOW, RATE_WINDOW)  # messages per seconds, per view

    # ---- reading ------------------------------------------------------------------------------

    def _items(self, table: str, column: str, value: str) -> list[tuple[str, str]]:
        rows = self.db.execute(f"SELECT key, value FROM {table} WHERE {column}=? ORDER BY seq", (value,)).fetchall()
        return [(k, json.loads(v)) for k, v in rows]

    def snapshot(self, view: View) -> Snapshot:
        """Everything this view may read: its server's localStorage and its own sessionStorage."""
        local = self._items("view_local_storage", "server", view.server)
        session = self._items("view_session_storage", "scope", session_scope(view))
        return Snapshot(local, session, sum(units(k) + units(v) for k, v in local),
                        sum(units(k) + units(v) for k, v in session))

    def items(self, view: View, area: Area) -> list[tuple[str, str]]:
        """One area's items as this view sees them (recordings keep them)."""
        if area == "local":
            return self._items("view_local_storage", "server", view.server)
        return self._items("view_session_storage", "scope", session_scope(view))

    def seed(self, view: View, area: Area, items: list[tuple[str, str]]) -> None:
        """Replace an area's items (a replay starts from the recorded storage)."""
        self.apply(view, area, [{"op": "clear"}] + [{"op": "set", "key": k, "value": v} for k, v in items])

    def usage(self, server: str) -> dict[str, int]:
        """A server's stored size (UTF-16 code units of keys and values) and item counts."""
        def measure(table: str) -> tuple[int, int]:
            row = self.db.execute(f"SELECT COUNT(*), COALESCE(SUM(size),0) FROM {table} WHERE server=?",
                                  (server,)).fetchone()
            return int(row[0]), int(row[1])
        local_items, local_units = measure("view_local_storage")
        session_items, session_units = measure("view_session_storage")
        return {"localItems": local_items, "localUnits": local_units, "sessionItems": session_items,
                "sessionUnits": session_units, "quota": QUOTA}

    # ---- writing ------------------------------------------------------------------------------

    def clear_server(self, server: str) -> None:
        """Forget everything a server's views stored (the server card's Clear button)."""
        self.db.execute("DELETE FROM view_local_storage WHERE server=?", (server,))
        self.db.execute("DELETE FROM view_session_storage WHERE server=?", (server,))

    def forget_view(self, view: View) -> None:
        """A closed view with no stored record: its sessionStorage ends with it, as a tab's does."""
        if not view.record_id:
            self.db.execute("DELETE FROM view_session_storage WHERE scope=?", (session_scope(view),))
        self._rates.pop(view.id, None)

    def allowed(self, view: View) -> bool:
        """Rate bound per view (a sliding window)."""
        now = time.monotonic()
        limit, window = self.rate
        stamps = self._rates.setdefault(view.id, deque())
        while stamps and now - stamps[0] > window:
            stamps.popleft()
        if len(stamps) >= limit:
            return False
        stamps.append(now)
        return True

    def apply(self, view: View, area: Area, ops: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str | None]:
        """Apply a batch of changes in one transaction; returns the changes made and a refusal, if any.

        The whole batch is refused when it would take the area over its quota: the prelude
        checked the same quota before it changed its copy, so only a view that bypassed it
        (or raced another view of the same server) gets here.
        """
        if area == "local":
            table, column, owner = "view_local_storage", "server", view.server
        else:
            table, column, owner = "view_session_storage", "scope", session_scope(view)
        changes: list[dict[str, Any]] = []
        self.db.execute("BEGIN IMMEDIATE")
        try:
            for op in ops:
                changes.extend(self._apply_one(view, table, column, owner, op))
            used = self.db.execute(f"SELECT COALESCE(SUM(size),0) FROM {table} WHERE {column}=?",
                                   (owner,)).fetchone()[0]
            if used > QUOTA:
                self.db.execute("ROLLBACK")
                return [], f"{area}Storage for {view.server!r} would hold {used} of {QUOTA} allowed units"
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return changes, None

    def _apply_one(self, view: View, table: str, column: str, owner: str, op: dict[str, Any]) -> list[dict[str, Any]]:
        # No old value is read: the other views' preludes know their own (a 5 MB value removed
        # 500 times in a batch was 500 reads of it, security finding G1).
        kind = op.get("op")
        if kind == "clear":
            had = self.db.execute(f"SELECT 1 FROM {table} WHERE {column}=? LIMIT 1", (owner,)).fetchone()
            self.db.execute(f"DELETE FROM {table} WHERE {column}=?", (owner,))
            return [{"op": "clear"}] if had else []
        key = op.get("key")
        if not isinstance(key, str):
            return []
        row = self.db.execute(f"SELECT 1 FROM {table} WHERE {column}=? AND key=?", (owner, key)).fetchone()
        if kind == "remove":
            if row is None:
                return []
            self.db.execute(f"DELETE FROM {table} WHERE {column}=? AND key=?", (owner, key))
            return [{"op": "remove", "key": key}]
        value = op.get("value")
        if kind != "set" or not isinstance(value, str):
            return []
        size = units(key) + units(value)
        if row is not None:
            self.db.execute(f"UPDATE {table} SET value=?, size=? WHERE {column}=? AND key=?",
                            (json.dumps(value), size, owner, key))
        else:
            seq = self.db.execute(f"SELECT COALESCE(MAX(seq),0)+1 FROM {table} WHERE {column}=?", (owner,)).fetchone()[0]
            cols = "server, key, value, size, seq" if table == "view_local_storage" else \
                "scope, server, key, value, size, seq"
            vals: tuple[Any, ...] = (owner, key, json.dumps(value), size, seq) if table == "view_local_storage" else \
                (owner, view.server, key, json.dumps(value), size, seq)
            self.db.execute(f"INSERT INTO {table} ({cols}) VALUES ({','.join('?' * len(vals))})", vals)
        return [{"op": "set", "key": key, "newValue": value}]
