"""Conversations in SQLite (WAL, versioned schema): messages, tool calls and views.

Every change is committed before the UI is told about it, so a crash or ``kill -9``
mid-turn loses nothing that had been shown.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from pathlib import Path
from typing import Any

from moka_shell.errors import StoreError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS messages (
    id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL DEFAULT '', source TEXT,
    error TEXT, data TEXT, created_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS messages_by_conversation ON messages(conversation_id, seq);
CREATE TABLE IF NOT EXISTS tool_calls (
    id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    message_id TEXT NOT NULL, seq INTEGER NOT NULL, server TEXT NOT NULL, tool TEXT NOT NULL,
    model_name TEXT NOT NULL, arguments TEXT, status TEXT NOT NULL, result TEXT, error TEXT, view_record TEXT);
CREATE INDEX IF NOT EXISTS tool_calls_by_message ON tool_calls(message_id, seq);
CREATE TABLE IF NOT EXISTS views (
    id TEXT PRIMARY KEY, conversation_id TEXT REFERENCES conversations(id) ON DELETE CASCADE,
    tool_call_id TEXT, server TEXT NOT NULL, tool TEXT NOT NULL, resource_uri TEXT NOT NULL,
    arguments TEXT, result TEXT, cancelled TEXT, model_context TEXT, created_at REAL NOT NULL);
"""

# Each later version's SQL, applied in order to a database at an older version. Numbers are
# reserved per area so that work in parallel cannot collide: 2 chat (branches, per-conversation
# model and system prompt), 3 view storage, 4 reliability. A gap is fine.
MIGRATIONS: dict[int, str] = {1: _SCHEMA}
SCHEMA_VERSION = max(MIGRATIONS)


def new_id(prefix: str) -> str:
    """A short random id with a readable prefix."""
    return prefix + secrets.token_hex(8)


def _j(value: Any) -> str | None:
    return None if value is None else json.dumps(value, default=str)


def _uj(text: str | None) -> Any:
    return None if text is None else json.loads(text)


class Store:
    """The conversation database."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
            self.db.row_factory = sqlite3.Row
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL survives a process crash
            self.db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"the conversation database {path} can't be used: {exc}",
                             hint="move the file aside to start fresh; Moka never deletes it") from exc

    def _migrate(self) -> None:
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(f"the database was written by a newer Moka (schema {version}); update Moka")
        for number in sorted(MIGRATIONS):
            if version < number:
                self.db.executescript(MIGRATIONS[number])
                self.db.execute(f"PRAGMA user_version={number}")

    def close(self) -> None:
        """Close the database."""
        self.db.close()

    # ---- conversations -----------------------------------------------------------------------

    def create_conversation(self, title: str) -> str:
        """A new, empty conversation."""
        cid, now = new_id("k"), time.time()
        self.db.execute("INSERT INTO conversations VALUES (?,?,?,?)", (cid, title[:120] or "New chat", now, now))
        return cid

    def has_conversation(self, cid: str) -> bool:
        """Does this conversation exist?"""
        return self.db.execute("SELECT 1 FROM conversations WHERE id=?", (cid,)).fetchone() is not None

    def list_conversations(self, query: str | None = None, limit: int = 500) -> list[dict[str, Any]]:
        """Newest first; ``query`` matches titles and message text."""
        sql = ("SELECT c.id, c.title, c.updated_at, (SELECT COUNT(*) FROM messages m WHERE m.conversation_id=c.id) "
               "AS n FROM conversations c")
        args: list[Any] = []
        if query:
            sql += (" WHERE c.title LIKE ? OR EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id=c.id "
                    "AND m.content LIKE ?)")
            args += [f"%{query}%", f"%{query}%"]
        sql += " ORDER BY c.updated_at DESC LIMIT ?"
        rows = self.db.execute(sql, [*args, limit]).fetchall()
        return [{"id": r["id"], "title": r["title"], "updatedAt": r["updated_at"], "messageCount": r["n"]}
                for r in rows]

    def rename(self, cid: str, title: str) -> None:
        """Give a conversation a new title."""
        self.db.execute("UPDATE conversations SET title=? WHERE id=?", (title.strip()[:120] or "Untitled", cid))

    def delete(self, cid: str) -> None:
        """Delete a conversation and everything in it."""
        self.db.execute("DELETE FROM conversations WHERE id=?", (cid,))

    def title(self, cid: str) -> str:
        """The conversation's title."""
        row = self.db.execute("SELECT title FROM conversations WHERE id=?", (cid,)).fetchone()
        return row["title"] if row else ""

    # ---- messages ----------------------------------------------------------------------------

    def add_message(self, cid: str, role: str, content: str = "", *, source: str | None = None,
                    data: dict[str, Any] | None = None) -> dict[str, Any]:
        """Append a message; returns it in the UI's shape."""
        mid, now = new_id("m"), time.time()
        seq = self.db.execute("SELECT COALESCE(MAX(seq),0)+1 FROM messages WHERE conversation_id=?", (cid,)).fetchone()[0]
        self.db.execute("INSERT INTO messages VALUES (?,?,?,?,?,?,?,?,?)",
                        (mid, cid, seq, role, content, source, None, _j(data), now))
        self.db.execute("UPDATE conversations SET updated_at=? WHERE id=?", (now, cid))
        msg = {"id": mid, "role": role, "content": content, "createdAt": now, "toolCalls": []}
        if source:
            msg["source"] = source
        if data:
            msg["data"] = data
        return msg

    def append_text(self, mid: str, text: str) -> None:
        """Add streamed text to a message (committed at once)."""
        self.db.execute("UPDATE messages SET content = content || ? WHERE id=?", (text, mid))

    def set_error(self, mid: str, error: str) -> None:
        """Record an error on a message; the message and its text are kept."""
        self.db.execute("UPDATE messages SET error=? WHERE id=?", (error, mid))

    def messages(self, cid: str) -> list[dict[str, Any]]:
        """All messages of a conversation with their tool calls, oldest first."""
        rows = self.db.execute("SELECT * FROM messages WHERE conversation_id=? ORDER BY seq", (cid,)).fetchall()
        calls: dict[str, list[dict[str, Any]]] = {}
        for c in self.db.execute("SELECT * FROM tool_calls WHERE conversation_id=? ORDER BY seq", (cid,)):
            calls.setdefault(c["message_id"], []).append(self._call(c))
        out = []
        for r in rows:
            msg: dict[str, Any] = {"id": r["id"], "role": r["role"], "content": r["content"],
                                   "createdAt": r["created_at"], "toolCalls": calls.get(r["id"], [])}
            for key in ("source", "error"):
                if r[key]:
                    msg[key] = r[key]
            if r["data"]:
                msg["data"] = _uj(r["data"])
            out.append(msg)
        return out

    # ---- tool calls and views ----------------------------------------------------------------

    def add_call(self, cid: str, mid: str, call: dict[str, Any]) -> None:
        """Record a tool call as soon as the model starts it."""
        seq = self.db.execute("SELECT COUNT(*) FROM tool_calls WHERE message_id=?", (mid,)).fetchone()[0]
        self.db.execute("INSERT INTO tool_calls VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                        (call["id"], cid, mid, seq, call["server"], call["tool"], call["modelName"],
                         _j(call.get("arguments")), call["status"], None, None, call.get("recordId")))

    def update_call(self, call_id: str, **fields: Any) -> None:
        """Update a tool call's status, arguments, result or error."""
        cols = {"status": fields.get("status"), "arguments": _j(fields.get("arguments")),
                "result": _j(fields.get("result")), "error": fields.get("error"), "view_record": fields.get("recordId")}
        sets = [(k, v) for k, v in cols.items() if (k in fields or {"arguments": "arguments", "result": "result",
                                                                       "view_record": "recordId"}.get(k) in fields)]
        if sets:
            self.db.execute(f"UPDATE tool_calls SET {', '.join(k + '=?' for k, _ in sets)} WHERE id=?",
                            [v for _, v in sets] + [call_id])

    @staticmethod
    def _call(c: sqlite3.Row) -> dict[str, Any]:
        call: dict[str, Any] = {"id": c["id"], "server": c["server"], "tool": c["tool"], "modelName": c["model_name"],
                                "arguments": _uj(c["arguments"]) or {}, "status": c["status"]}
        if c["result"]:
            call["result"] = _uj(c["result"])
        if c["error"]:
            call["error"] = c["error"]
        if c["view_record"]:
            call["recordId"] = c["view_record"]
        return call

    def add_view(self, record_id: str, cid: str | None, call_id: str | None, server: str, tool: str, uri: str) -> None:
        """Remember a view so reopening the conversation can render it again."""
        self.db.execute("INSERT OR IGNORE INTO views VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                        (record_id, cid, call_id, server, tool, uri, None, None, None, None, time.time()))

    def update_view(self, record_id: str, **fields: Any) -> None:
        """Store a view's input, result, cancellation or model context."""
        for key in ("arguments", "result", "cancelled", "model_context"):
            if key in fields:
                value = fields[key] if key == "cancelled" else _j(fields[key])
                self.db.execute(f"UPDATE views SET {key}=? WHERE id=?", (value, record_id))

    def view(self, record_id: str) -> dict[str, Any] | None:
        """A stored view record."""
        r = self.db.execute("SELECT * FROM views WHERE id=?", (record_id,)).fetchone()
        if r is None:
            return None
        return {"id": r["id"], "conversationId": r["conversation_id"], "toolCallId": r["tool_call_id"],
                "server": r["server"], "tool": r["tool"], "resourceUri": r["resource_uri"],
                "arguments": _uj(r["arguments"]), "result": _uj(r["result"]), "cancelled": r["cancelled"],
                "modelContext": _uj(r["model_context"])}
