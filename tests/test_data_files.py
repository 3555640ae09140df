"""The data folder and Moka's files in it are the person's alone (finding G10).

Conversations, tool results and the inspector's log were 0644 in a 0755 folder: any other local
user could read them. Now they are created owner-only whatever the umask, and an older install's
files are made owner-only when Moka starts.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from moka_shell.config import MokaConfig
from moka_shell.core.chat.store import Store
from moka_shell.paths import Paths
from moka_shell.shells.desktop.run import WindowState
from moka_shell.testing import start_app

pytestmark = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def modes(folder: Path) -> dict[str, int]:
    """Every file and folder under ``folder`` (itself as "."), with its permission bits."""
    found = {".": mode(folder)}
    for path in sorted(folder.rglob("*")):
        found[str(path.relative_to(folder))] = mode(path)
    return found


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The loosest umask a person can have: every mode Moka asks for is the mode it gets."""
    before = os.umask(0)
    try:
        yield
    finally:
        os.umask(before)


@pytest.mark.anyio
async def test_a_new_data_folder_is_owner_only_from_the_start(tmp_path: Path, open_umask: None) -> None:
    """With umask 0 every file Moka makes in a fresh data folder (and the folder itself) is 0600 / 0700."""
    paths = Paths(tmp_path / "config.json", tmp_path / "home" / "data")
    app = await start_app(paths, config=MokaConfig())
    try:
        assert app.store is not None
        cid = app.store.create_conversation("a secret conversation")
        app.store.add_message(cid, "user", "my bank PIN is 1234")
        app.inspector.record("server", {"event": "a tool result"}, server="s")
        state = WindowState(paths.state_file)
        state.update(width=900)
        state.save()
        open_now = modes(paths.data_dir)
    finally:
        await app.stop()
    assert {"moka.sqlite3", "moka.sqlite3-wal", "moka.sqlite3-shm", "moka.lock", "moka.instance.json",
            "state.json", "inspector"} <= set(open_now), open_now
    assert any(name.startswith("inspector/events-") for name in open_now), open_now
    loose = {name: oct(m) for name, m in open_now.items() if m & 0o077}
    assert loose == {}, loose
    assert open_now["."] == open_now["inspector"] == 0o700
    assert mode(tmp_path / "home") == 0o700  # a folder made on the way to it, too


@pytest.mark.anyio
async def test_an_older_install_is_made_owner_only_at_start(tmp_path: Path) -> None:
    """Files an older Moka left 0644 in a 0755 folder are 0600 / 0700 once Moka has started."""
    data = tmp_path / "data"
    (data / "inspector").mkdir(parents=True)
    db = sqlite3.connect(data / "moka.sqlite3")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE t (x)")  # left with its -wal and -shm by an open connection below
    (data / "inspector" / "events-2026-01-01.jsonl").write_text('{"old": "tool result"}\n')
    (data / "state.json").write_text("{}")
    for path in [data, data / "inspector"]:
        path.chmod(0o755)
    for path in [data / "moka.sqlite3", data / "moka.sqlite3-wal", data / "moka.sqlite3-shm",
                 data / "inspector" / "events-2026-01-01.jsonl", data / "state.json"]:
        path.chmod(0o644)
    db.close()
    (data / "moka.sqlite3").unlink()  # not a Moka database: start from a fresh one, with the old sidecars
    (data / "moka.sqlite3-wal").write_bytes(b"")
    (data / "moka.sqlite3-wal").chmod(0o644)
    # Even a command that opens no store:
    app = await start_app(Paths(tmp_path / "config.json", data), config=MokaConfig(), store=False)
    await app.stop()
    assert modes(data) == {".": 0o700, "inspector": 0o700, "inspector/events-2026-01-01.jsonl": 0o600,
                           "moka.sqlite3-wal": 0o600, "state.json": 0o600}
    store = Store(data / "moka.sqlite3")
    store.close()
    assert mode(data / "moka.sqlite3") == 0o600


def test_a_damaged_databases_copy_is_owner_only(tmp_path: Path, open_umask: None) -> None:
    """The read-only copy of a damaged database holds the same conversations: owner-only too."""
    db = tmp_path / "moka.sqlite3"
    db.write_bytes(b"SQLite format 3\x00" + b"\x00" * 84 + b"garbage" * 200)
    db.chmod(0o600)
    store = Store.damaged_copy(db)
    store.close()
    assert mode(tmp_path / "moka.sqlite3.damaged-copy") == 0o600
