"""Long histories: the conversation list pages past 500 (listing and search reach every one), and two
processes appending to one conversation never take the same sequence number. Real SQLite, real
processes, the real Bridge."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from moka_shell.bridge import Bridge
from moka_shell.config import MokaConfig
from moka_shell.core.chat.store import Store
from moka_shell.paths import Paths
from moka_shell.testing import start_app

WRITER = """
import sys, time
from pathlib import Path
from moka_shell.core.chat.store import Store
store = Store(Path(sys.argv[1]))
cid, count, start = sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
while time.time() < start:  # both writers begin together
    time.sleep(0.001)
for i in range(count):
    store.add_message(cid, "user", f"{sys.argv[5]}-{i}")
store.close()
"""


def fill(store: Store, n: int) -> list[str]:
    """n conversations, the oldest first; some share an updated_at, as a fast import would make them."""
    ids = []
    store.db.execute("BEGIN")
    for i in range(n):
        cid = store.create_conversation(f"conversation {i:04d}" + (" needle" if i == 3 else ""))
        store.db.execute("UPDATE conversations SET updated_at=? WHERE id=?", (1_000_000 + i // 3, cid))
        ids.append(cid)
    store.db.execute("COMMIT")
    return ids


@pytest.mark.anyio
async def test_paging_reaches_every_conversation(paths: Paths) -> None:
    """1,234 conversations: pages of 200 with `before` list each exactly once, newest first; search finds the oldest."""
    store = Store(paths.database)
    ids = fill(store, 1234)
    store.close()
    app = await start_app(paths, config=MokaConfig(mcpServers={}))
    bridge = Bridge(app)
    try:
        seen: list[dict[str, object]] = []
        before = None
        while True:
            params: dict[str, object] = {"limit": 200, **({"before": before} if before else {})}
            page = (await bridge.handle({"id": 1, "method": "conversations.list", "params": params}))["result"]
            seen += page
            if len(page) < 200:
                break
            before = {"updatedAt": page[-1]["updatedAt"], "id": page[-1]["id"]}
        found = (await bridge.handle({"id": 2, "method": "conversations.list", "params": {"query": "needle"}}))["result"]
        literal = (await bridge.handle({"id": 3, "method": "conversations.list", "params": {"query": "%"}}))["result"]
        too_many = await bridge.handle({"id": 4, "method": "conversations.list", "params": {"limit": 5000}})
    finally:
        await app.stop()
    assert len(seen) == 1234 and {c["id"] for c in seen} == set(ids)
    stamps = [c["updatedAt"] for c in seen]
    assert stamps == sorted(stamps, reverse=True)
    assert [c["id"] for c in found] == [ids[3]]  # the 4th oldest, far past the first 500
    assert literal == []  # "%" is a character to find, not a wildcard
    assert "limit" in too_many["error"]["message"]


def test_two_processes_never_take_the_same_sequence_number(tmp_path: Path) -> None:
    """Two processes append 300 messages each to one conversation at the same moment: 600 distinct seqs."""
    db = tmp_path / "data" / "moka.db"
    store = Store(db)
    cid = store.create_conversation("shared")
    store.close()
    start = time.time() + 1.5
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(db), cid, "300", str(start), name],
                              stderr=subprocess.PIPE, text=True) for name in ("a", "b")]
    for p in procs:
        _out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    store = Store(db)
    rows = store.db.execute("SELECT seq, content FROM messages WHERE conversation_id=? ORDER BY seq", (cid,)).fetchall()
    store.close()
    seqs = [r["seq"] for r in rows]
    assert len(rows) == 600 and seqs == list(range(1, 601))
    for name in ("a", "b"):  # each writer's own messages stay in its order
        mine = [int(r["content"].split("-")[1]) for r in rows if r["content"].startswith(name + "-")]
        assert mine == list(range(300))
