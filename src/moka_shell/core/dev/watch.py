"""Watching an app's files for ``moka dev``: a polling watcher over modification times, no dependency.

Polling works the same on every platform and file system (network drives, containers' bind mounts,
editors that save by renaming a temporary file), and a project of a few thousand files is scanned
in milliseconds. What an author does not edit is skipped: ``.git``, ``node_modules``,
``__pycache__`` and every dotfile and dot-folder (``.venv``, an editor's swap files). A burst of
saves (a formatter rewriting ten files, an editor's write-then-rename) is one change: the watcher
waits until the files have been quiet for ``quiet`` seconds before it reports them.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

POLL = 0.2  # seconds between scans
QUIET = 0.15  # seconds without a further change before a burst is reported
MAX_FILES = 20_000  # a folder bigger than this is watched only as far as this many files
SKIPPED_DIRS = frozenset({"node_modules", "__pycache__"})
SKIPPED_SUFFIXES = (".pyc", ".pyo", "~", ".swp", ".tmp")

Snapshot = dict[str, tuple[int, int]]  # path -> (mtime_ns, size)


def skipped(name: str, *, is_dir: bool) -> bool:
    """Is this file or folder one an author does not edit (dotfiles, caches, dependencies)?"""
    if name.startswith("."):
        return True
    return name in SKIPPED_DIRS if is_dir else name.endswith(SKIPPED_SUFFIXES)


def scan(roots: Sequence[Path], limit: int = MAX_FILES) -> Snapshot:
    """Every watched file under ``roots`` (a root may be a single file) with its mtime and size."""
    found: Snapshot = {}
    stack = [str(r) for r in roots]
    while stack and len(found) < limit:
        top = stack.pop()
        try:
            if not os.path.isdir(top):
                st = os.stat(top)
                found[top] = (st.st_mtime_ns, st.st_size)
                continue
            with os.scandir(top) as entries:
                for entry in entries:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    if skipped(entry.name, is_dir=is_dir):
                        continue
                    if is_dir:
                        stack.append(entry.path)
                    elif entry.is_file():
                        st = entry.stat()
                        found[entry.path] = (st.st_mtime_ns, st.st_size)
        except OSError:
            continue  # gone between listing and reading (a save by rename): the next scan sees it
    return found


def changed_paths(old: Snapshot, new: Snapshot) -> set[str]:
    """Files added, removed or changed between two scans."""
    return {p for p in old.keys() | new.keys() if old.get(p) != new.get(p)}


class FileWatch:
    """Reports each burst of changes under some folders, as the set of paths that changed."""

    def __init__(self, roots: Sequence[Path], *, poll: float = POLL, quiet: float = QUIET,
                 limit: int = MAX_FILES) -> None:
        self.roots = [Path(r) for r in roots]
        self.poll, self.quiet, self.limit = poll, quiet, limit
        self._last: Snapshot | None = None

    async def _scan(self) -> Snapshot:
        # In a thread: a big tree on a slow disk must not hold up the core loop.
        return await asyncio.to_thread(scan, self.roots, self.limit)

    async def start(self) -> int:
        """Take the first scan (what is there now is not a change); returns how many files are watched."""
        self._last = await self._scan()
        return len(self._last)

    async def next_change(self) -> list[str]:
        """Wait for the next burst of changes and return its paths, sorted."""
        if self._last is None:
            await self.start()
        assert self._last is not None
        while True:
            await asyncio.sleep(self.poll)
            now = await self._scan()
            changed = changed_paths(self._last, now)
            if not changed:
                continue
            # Settle: keep scanning until a scan a quiet interval later sees nothing new.
            while True:
                await asyncio.sleep(self.quiet)
                later = await self._scan()
                more = changed_paths(now, later)
                now = later
                if not more:
                    break
                changed |= more
            self._last = now
            return sorted(changed)

    async def changes(self) -> AsyncIterator[list[str]]:
        """Every burst of changes, for as long as the caller iterates."""
        while True:
            yield await self.next_change()
