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

from moka_shell.core.chat.store_health import check_integrity, connect, migrate, private_database
from moka_shell.core.chat.store_salvage import Salvage, salvaged_copy
from moka_shell.core.views.storage import MIGRATION_SQL as VIEW_STORAGE_SQL
from moka_shell.errors import StoreDamagedError, StoreError
from moka_shell.paths import ensure_dir

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
# model and system prompt), 3 view storage, 4 reliability, 6 views. A gap is fine.
# 2 (chat): a reply's state (so one cut off by a crash shows as interrupted), the conversation's own
# backend, model and system prompt, attachments kept beside their message, and one sequence number
# per message and conversation, whoever writes (duplicates from older versions are renumbered first).
_CHAT_2 = """
ALTER TABLE messages ADD COLUMN state TEXT;
ALTER TABLE conversations ADD COLUMN backend TEXT;
ALTER TABLE conversations ADD COLUMN model TEXT;
ALTER TABLE conversations ADD COLUMN system_prompt TEXT;
CREATE TABLE IF NOT EXISTS attachments (
    id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE, name TEXT NOT NULL,
    mime_type TEXT NOT NULL, size INTEGER NOT NULL, data BLOB NOT NULL, created_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS attachments_by_message ON attachments(message_id);
UPDATE messages SET seq = (SELECT r.n FROM (SELECT id, ROW_NUMBER() OVER (
    PARTITION BY conversation_id ORDER BY seq, created_at, rowid) AS n FROM messages) AS r WHERE r.id = messages.id);
DROP INDEX IF EXISTS messages_by_conversation;
CREATE UNIQUE INDEX IF NOT EXISTS messages_seq ON messages(conversation_id, seq);
CREATE INDEX IF NOT EXISTS conversations_by_update ON conversations(updated_at DESC, id DESC);
"""
# 5 (chat): the model server's own id of a tool call, kept beside Moka's (ids from a provider are
# unique within one response at most; some servers send `call_0` every time).
_CHAT_5 = """
ALTER TABLE tool_calls ADD COLUMN provider_id TEXT;
"""
# 6 (views): a call of a live view's own tool (draft spec, app-provided tools) names that view.
_VIEWS_6 = """
ALTER TABLE tool_calls ADD COLUMN app TEXT;
"""
MIGRATIONS: dict[int, str] = {1: _SCHEMA, 2: _CHAT_2, 3: VIEW_STORAGE_SQL, 5: _CHAT_5, 6: _VIEWS_6}
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

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        # Opening, checking and migrating are store_health's: nothing is changed before it is understood.
        ensure_dir(path.parent, "the data dir", private=True)
        if not read_only:
            private_database(path)
        self.path = path
        self.read_only = read_only
        self.salvage: Salvage | None = None  # on a damaged file's copy: what was recovered, what was lost
        try:
            self.db = connect(path, read_only=read_only)
        except sqlite3.Error as exc:
            raise StoreError(f"the conversation database {path} can't be used: {exc}",
                             hint="move the file aside to start fresh; Moka never deletes it") from exc
        try:
            if not read_only:
                migrate(self.db, MIGRATIONS, path)  # before WAL: a refused file stays byte for byte
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL survives a process crash
                check_integrity(self.db, path)
            self.db.execute("PRAGMA foreign_keys=ON")
        except StoreError:
            self.db.close()
            raise

    @classmethod
    def damaged_copy(cls, path: Path) -> Store:
        """A read-only store on what can be read of a damaged database (the original is left as it is)."""
        try:
            copy, report = salvaged_copy(path, lambda fresh: cls(fresh).close())
        except (OSError, StoreError) as exc:
            raise StoreDamagedError(f"the conversation database {path} is damaged, and no copy could be made to "
                                    f"read it: {getattr(exc, 'strerror', None) or exc}",
                                    hint="Moka did not change the file; free some space, or move it aside") from exc
        store = cls(copy, read_only=True)
        store.salvage = report
        return store

    def close(self) -> None:
        """Close the database."""
        self.db.close()

    # ---- conversations -----------------------------------------------------------------------

    def create_conversation(self, title: str) -> str:
        """A new, empty conversation."""
        cid, now = new_id("k"), time.time()
        self.db.execute("INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?,?,?,?)",
                        (cid, title[:120] or "New chat", now, now))
        return cid

    def has_conversation(self, cid: str) -> bool:
        """Does this conversation exist?"""
        return self.db.execute("SELECT 1 FROM conversations WHERE id=?", (cid,)).fetchone() is not None

    def list_conversations(self, query: str | None = None, limit: int = 500,
                           before: tuple[float, str] | None = None) -> list[dict[str, Any]]:
        """Newest first, one page; ``query`` matches titles and message text.

        ``before`` is the (updatedAt, id) of the last conversation of the previous page: pages are
        keyed on it, not on an offset, so a conversation updated meanwhile is neither lost nor repeated twice.
        """
        sql = ("SELECT c.id, c.title, c.updated_at, (SELECT COUNT(*) FROM messages m WHERE m.conversation_id=c.id) "
               "AS n FROM conversations c")
        where: list[str] = []
        args: list[Any] = []
        if query:
            where.append("(c.title LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM messages m WHERE "
                         "m.conversation_id=c.id AND m.content LIKE ? ESCAPE '\\'))")
            pattern = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            args += [pattern, pattern]
        if before is not None:
            where.append("(c.updated_at < ? OR (c.updated_at = ? AND c.id < ?))")
            args += [before[0], before[0], before[1]]
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY c.updated_at DESC, c.id DESC LIMIT ?"
        rows = self.db.execute(sql, [*args, max(1, min(limit, 500))]).fetchall()
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
                    data: dict[str, Any] | None = None, state: str | None = None) -> dict[str, Any]:
        """Append a message; returns it in the UI's shape.

        The sequence number is chosen inside the INSERT, which holds SQLite's write lock while it
        reads the maximum: two processes appending to one conversation can't pick the same one
        (and the unique index of schema 2 would refuse it if they did).
        """
        mid, now = new_id("m"), time.time()
        (seq,) = self.db.execute(
            "INSERT INTO messages (id, conversation_id, seq, role, content, source, error, data, created_at, state) "
            "SELECT ?, ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, NULL, ?, ?, ? FROM messages WHERE conversation_id=? "
            "RETURNING seq", (mid, cid, role, content, source, _j(data), now, state, cid)).fetchall()[0]
        self.db.execute("UPDATE conversations SET updated_at=? WHERE id=?", (now, cid))
        msg: dict[str, Any] = {"id": mid, "seq": seq, "role": role, "content": content, "createdAt": now,
                               "toolCalls": []}
        if source:
            msg["source"] = source
        if data:
            msg["data"] = data
        return msg

    def append_text(self, mid: str, text: str) -> None:
        """Add streamed text to a message (committed at once)."""
        self.db.execute("UPDATE messages SET content = content || ? WHERE id=?", (text, mid))

    def set_data(self, mid: str, data: dict[str, Any] | None) -> None:
        """Replace a message's data (what goes with it: context, app blocks, attachments)."""
        self.db.execute("UPDATE messages SET data=? WHERE id=?", (_j(data), mid))

    def set_content(self, mid: str, content: str) -> None:
        """Replace a message's text (an edited message)."""
        self.db.execute("UPDATE messages SET content=? WHERE id=?", (content, mid))

    def set_error(self, mid: str, error: str) -> None:
        """Record an error on a message; the message and its text are kept."""
        self.db.execute("UPDATE messages SET error=? WHERE id=?", (error, mid))

    def messages(self, cid: str) -> list[dict[str, Any]]:
        """All messages of a conversation with their tool calls, oldest first."""
        rows = self.db.execute("SELECT * FROM messages WHERE conversation_id=? ORDER BY seq", (cid,)).fetchall()
        return self._shaped(rows, self.db.execute("SELECT * FROM tool_calls WHERE conversation_id=? ORDER BY seq",
                                                  (cid,)))

    def messages_page(self, cid: str, *, before: int | None = None, after: int | None = None,
                      limit: int = 100) -> tuple[list[dict[str, Any]], bool]:
        """Up to ``limit`` messages oldest first, and whether more lie beyond them.

        With ``after``, the ones following that sequence number; otherwise the newest ones (before
        ``before`` when it is given). Keyed on ``seq``, so messages added meanwhile shift nothing.
        """
        sql, edge = ("seq>? ORDER BY seq", after) if after is not None else ("seq<? ORDER BY seq DESC", before)
        rows = self.db.execute(f"SELECT * FROM messages WHERE conversation_id=? AND {sql} LIMIT ?",
                               (cid, 2**62 if edge is None else edge, limit + 1)).fetchall()
        more = len(rows) > limit
        rows = rows[:limit] if after is not None else rows[:limit][::-1]
        ids = [r["id"] for r in rows]
        calls = self.db.execute(f"SELECT * FROM tool_calls WHERE message_id IN ({','.join('?' * len(ids))}) "
                                "ORDER BY seq", ids) if ids else []
        return self._shaped(rows, calls), more

    @classmethod
    def _shaped(cls, rows: list[sqlite3.Row], call_rows: Any) -> list[dict[str, Any]]:
        """Message rows in the UI's shape, each with its tool calls."""
        calls: dict[str, list[dict[str, Any]]] = {}
        for c in call_rows:
            calls.setdefault(c["message_id"], []).append(cls._call(c))
        out = []
        for r in rows:
            msg: dict[str, Any] = {"id": r["id"], "seq": r["seq"], "role": r["role"], "content": r["content"],
                                   "createdAt": r["created_at"], "toolCalls": calls.get(r["id"], [])}
            for key in ("source", "error", "state"):
                if r[key]:
                    msg[key] = r[key]
            if r["data"]:
                msg["data"] = _uj(r["data"])
            out.append(msg)
        return out

    def end_replies(self, cid: str) -> None:
        """The turn ended (done, stopped or failed): its replies are no longer being written."""
        self.db.execute("UPDATE messages SET state=NULL WHERE conversation_id=? AND state='streaming'", (cid,))

    def cut_off(self, cid: str) -> None:
        """Replies a crash cut off become errors ("interrupted"), their unanswered calls too, so the
        model is never sent a tool call without its answer."""
        self.db.execute("UPDATE messages SET state=NULL, error=COALESCE(error, 'interrupted') "
                        "WHERE conversation_id=? AND state='streaming'", (cid,))
        self.db.execute("UPDATE tool_calls SET status='error', error='interrupted: Moka stopped while this call "
                        "ran, so its result is unknown' WHERE conversation_id=? AND status IN "
                        "('streaming', 'running', 'approval')", (cid,))

    def remove_from(self, cid: str, mid: str, *, keep: bool) -> int:
        """Delete the messages after ``mid`` (and ``mid`` itself unless ``keep``); returns how many went."""
        row = self.db.execute("SELECT seq FROM messages WHERE id=? AND conversation_id=?", (mid, cid)).fetchone()
        if row is None:
            raise StoreError(f"no message {mid!r} in conversation {cid!r}")
        seq = row["seq"] if keep else row["seq"] - 1
        ids = [r["id"] for r in self.db.execute("SELECT id FROM messages WHERE conversation_id=? AND seq>?",
                                               (cid, seq))]
        for chunk in (ids[i:i + 500] for i in range(0, len(ids), 500)):
            marks = ",".join("?" * len(chunk))
            self.db.execute(f"DELETE FROM views WHERE tool_call_id IN (SELECT id FROM tool_calls WHERE "
                            f"message_id IN ({marks}))", chunk)
            self.db.execute(f"DELETE FROM tool_calls WHERE message_id IN ({marks})", chunk)
            self.db.execute(f"DELETE FROM messages WHERE id IN ({marks})", chunk)
        return len(ids)

    def message(self, mid: str) -> dict[str, Any] | None:
        """One message's role, text, data and conversation (None if it is gone)."""
        r = self.db.execute("SELECT * FROM messages WHERE id=?", (mid,)).fetchone()
        if r is None:
            return None
        return {"id": r["id"], "conversationId": r["conversation_id"], "role": r["role"], "content": r["content"],
                "source": r["source"], "data": _uj(r["data"]) or {}}

    # ---- per conversation: backend, model, system prompt ---------------------------------------

    def settings(self, cid: str) -> dict[str, Any]:
        """The conversation's own backend, model and system prompt (absent keys follow the config)."""
        r = self.db.execute("SELECT backend, model, system_prompt FROM conversations WHERE id=?", (cid,)).fetchone()
        if r is None:
            return {}
        values = {"backend": r["backend"], "model": r["model"], "systemPrompt": r["system_prompt"]}
        return {k: v for k, v in values.items() if v}

    def set_settings(self, cid: str, **values: str | None) -> None:
        """Change the conversation's backend, model or systemPrompt (None or "" clears one)."""
        columns = {"backend": "backend", "model": "model", "systemPrompt": "system_prompt"}
        for key, value in values.items():
            self.db.execute(f"UPDATE conversations SET {columns[key]}=? WHERE id=?", (value or None, cid))

    # ---- attachments ---------------------------------------------------------------------------

    def add_attachment(self, cid: str, mid: str, name: str, mime_type: str, data: bytes) -> dict[str, Any]:
        """Keep a file the person attached to a message; returns its description (no contents)."""
        aid = new_id("a")
        self.db.execute("INSERT INTO attachments (id, conversation_id, message_id, name, mime_type, size, data, "
                        "created_at) VALUES (?,?,?,?,?,?,?,?)",
                        (aid, cid, mid, name, mime_type, len(data), data, time.time()))
        return {"id": aid, "name": name, "mimeType": mime_type, "size": len(data)}

    def attachment(self, aid: str) -> tuple[dict[str, Any], bytes] | None:
        """An attachment's description and bytes."""
        r = self.db.execute("SELECT * FROM attachments WHERE id=?", (aid,)).fetchone()
        if r is None:
            return None
        return ({"id": r["id"], "name": r["name"], "mimeType": r["mime_type"], "size": r["size"],
                 "messageId": r["message_id"]}, bytes(r["data"]))

    def attachments_of(self, mid: str) -> list[tuple[dict[str, Any], bytes]]:
        """A message's attachments, in the order they were added."""
        rows = self.db.execute("SELECT * FROM attachments WHERE message_id=? ORDER BY created_at, rowid", (mid,))
        return [({"id": r["id"], "name": r["name"], "mimeType": r["mime_type"], "size": r["size"]}, bytes(r["data"]))
                for r in rows]

    # ---- tool calls and views ----------------------------------------------------------------

    def add_call(self, cid: str, mid: str, call: dict[str, Any]) -> None:
        """Record a tool call as soon as the model starts it."""
        seq = self.db.execute("SELECT COUNT(*) FROM tool_calls WHERE message_id=?", (mid,)).fetchone()[0]
        self.db.execute("INSERT INTO tool_calls (id, conversation_id, message_id, seq, server, tool, model_name, "
                        "arguments, status, view_record, provider_id, app) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                        (call["id"], cid, mid, seq, call["server"], call["tool"], call["modelName"],
                         _j(call.get("arguments")), call["status"], call.get("recordId"), call.get("providerId"),
                         _j(call.get("app"))))

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
        if c["provider_id"]:
            call["providerId"] = c["provider_id"]
        if c["app"]:
            call["app"] = _uj(c["app"])
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
