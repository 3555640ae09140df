"""Moka's own UI files, answered from memory: the page's ~70 requests are most of its boot.

Starlette's ``StaticFiles`` stats and reads every file on a worker thread, two thread hops per
request; with the page's 57 modules and 9 style sheets that was most of the 290 ms from the
index to the page's socket in the desktop start (docs/performance.md §13). Here a file is read
once and kept while its size and modification time stay the same (one ``stat`` on the loop per
request, so an edited file is served fresh), and each answer is a single send. Only files under
the static directory are served, never through a symlink out of it, and what is kept is bounded.
"""

from __future__ import annotations

import mimetypes
import os
from dataclasses import dataclass
from email.utils import formatdate
from pathlib import Path

from moka_shell.web.hygiene import Receive, Scope, Send

MAX_FILE = 2 * 1024 * 1024  # bytes: a larger file is read from disk each time (none of Moka's is near this)
MAX_KEPT = 16 * 1024 * 1024  # bytes kept in all; past it, files are read from disk each time
TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
         ".html": "text/html; charset=utf-8", ".svg": "image/svg+xml", ".json": "application/json",
         ".md": "text/markdown; charset=utf-8", ".png": "image/png"}


@dataclass(frozen=True)
class _Kept:
    """One file as read: its stamp (size, mtime) and the bytes and headers of its answer."""

    stamp: tuple[int, int]
    body: bytes
    etag: bytes
    headers: list[tuple[bytes, bytes]]


class StaticFilesInMemory:
    """ASGI app serving one directory's files (GET and HEAD), each kept in memory after its first read."""

    def __init__(self, directory: Path) -> None:
        self.root = directory.resolve()
        self._kept: dict[str, _Kept] = {}
        self._kept_bytes = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one request under the mount (``scope["path"]`` relative to it)."""
        if scope["type"] != "http":
            return
        if scope["method"] not in ("GET", "HEAD"):
            await _plain(send, 405, b"method not allowed", [(b"allow", b"GET, HEAD")])
            return
        kept = self._file(_relative(scope))
        if kept is None:
            await _plain(send, 404, b"not found")
            return
        if _header(scope, b"if-none-match") == kept.etag:
            await send({"type": "http.response.start", "status": 304, "headers": [(b"etag", kept.etag)]})
            await send({"type": "http.response.body", "body": b""})
            return
        await send({"type": "http.response.start", "status": 200, "headers": kept.headers})
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else kept.body})

    def _file(self, relative: str) -> _Kept | None:
        """The file's answer, read again only when it changed; None when there is no such file here."""
        path = (self.root / relative).resolve()
        if not relative or self.root not in path.parents:
            return None  # outside the directory (``..`` or a symlink out of it)
        try:
            info = path.stat()
        except (OSError, ValueError):
            return None
        if not path.is_file():
            return None
        stamp = (info.st_size, info.st_mtime_ns)
        kept = self._kept.get(relative)
        if kept is not None and kept.stamp == stamp:
            return kept
        try:
            body = path.read_bytes()
        except OSError:
            return None
        etag = f'"{info.st_mtime_ns:x}-{info.st_size:x}"'.encode()
        kind = TYPES.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        headers = [(b"content-type", kind.encode()), (b"content-length", str(len(body)).encode()),
                   (b"etag", etag), (b"last-modified", formatdate(info.st_mtime, usegmt=True).encode())]
        fresh = _Kept(stamp, body, etag, headers)
        old = self._kept.pop(relative, None)
        self._kept_bytes -= len(old.body) if old is not None else 0
        if len(body) <= MAX_FILE and self._kept_bytes + len(body) <= MAX_KEPT:
            self._kept[relative] = fresh
            self._kept_bytes += len(body)
        return fresh


def _relative(scope: Scope) -> str:
    """The request's path below the mount, without a leading slash (Starlette's Mount sets root_path)."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root):]
    return os.path.normpath(path.lstrip("/")) if path.strip("/") else ""


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value)
    return None


async def _plain(send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), *(extra or [])]})
    await send({"type": "http.response.body", "body": body})
