"""The polling watcher `moka dev` reloads on (core/dev/watch.py), on real files in tmp_path."""

from __future__ import annotations

import asyncio
from pathlib import Path

from moka_shell.core.dev.watch import FileWatch, scan


def tree(root: Path) -> None:
    for rel in ["server.py", "ui/view.html", ".git/HEAD", "node_modules/x/index.js", "__pycache__/server.cpython.pyc",
                ".venv/lib/site.py", ".env", "server.py~", "ui/.view.html.swp"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("0")


def test_scan_skips_what_an_author_does_not_edit(tmp_path: Path) -> None:
    tree(tmp_path)
    assert sorted(Path(p).relative_to(tmp_path).as_posix() for p in scan([tmp_path])) == ["server.py", "ui/view.html"]
    assert len(scan([tmp_path], limit=1)) == 1  # bounded: a huge folder is watched only so far
    assert list(scan([tmp_path / "server.py"])) == [str(tmp_path / "server.py")]  # a root may be one file


def test_an_edit_is_reported_and_ignored_files_never_are(tmp_path: Path) -> None:
    tree(tmp_path)
    watch = FileWatch([tmp_path], poll=0.05, quiet=0.05)

    async def go() -> list[list[str]]:
        await watch.start()
        # Files an author does not edit change first: were they seen, they would be the first change.
        for rel in [".git/HEAD", "node_modules/x/index.js", "__pycache__/server.cpython.pyc", ".env", "server.py~"]:
            (tmp_path / rel).write_text("changed")
        (tmp_path / "ui" / "view.html").write_text("<h1>new</h1>")
        first = await asyncio.wait_for(watch.next_change(), 30)
        (tmp_path / "ui" / "view.html").unlink()  # a removal is a change too
        second = await asyncio.wait_for(watch.next_change(), 30)
        return [first, second]

    first, second = asyncio.run(go())
    assert first == [str(tmp_path / "ui" / "view.html")]
    assert second == [str(tmp_path / "ui" / "view.html")]


def test_a_burst_of_saves_is_one_change(tmp_path: Path) -> None:
    tree(tmp_path)
    # A quiet interval far longer than writing five files takes: they are one burst.
    watch = FileWatch([tmp_path], poll=0.05, quiet=1.0)

    async def go() -> list[str]:
        await watch.start()
        for i in range(5):
            (tmp_path / f"module{i}.py").write_text(str(i))
        (tmp_path / "server.py").write_text("1")
        return await asyncio.wait_for(watch.next_change(), 30)

    got = asyncio.run(go())
    assert got == sorted([str(tmp_path / f"module{i}.py") for i in range(5)] + [str(tmp_path / "server.py")])
