"""One writer per data dir: a lock file that a second Moka finds taken, and a way to wake the first.

``moka.lock`` in the data dir is locked (``fcntl.flock`` / ``msvcrt.locking``) for as long as the
instance that holds it runs; the OS drops the lock when that process ends, even by ``kill -9``, so a
stale file never locks anyone out. Next to the lock, ``moka.instance.json`` says who holds it (pid,
UI URL if any) and where it listens for a "focus" request: a loopback port plus a random secret, so
a second desktop launch can bring the first window forward instead of starting another writer.
The instance file is readable by its owner only: the secret is in it.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from moka_shell.errors import InstanceRunningError, MokaError
from moka_shell.paths import ensure_dir, open_private

LOCK_NAME = "moka.lock"
INFO_NAME = "moka.instance.json"


def _try_lock(fh: IO[bytes]) -> bool:
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        try:
            msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False
    import fcntl

    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False


def read_holder(data_dir: Path) -> dict[str, Any]:
    """What the running instance wrote about itself ({} if nothing readable)."""
    try:
        value = json.loads((data_dir / INFO_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


class InstanceLock:
    """The data dir's writer lock, held until ``release()`` or the end of the process."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self._fh: IO[bytes] | None = None
        self._server: socket.socket | None = None
        self._secret = secrets.token_urlsafe(16)
        self.info: dict[str, Any] = {"pid": os.getpid()}  # what a second instance is told (describe())

    @property
    def held(self) -> bool:
        """True while this process holds the lock."""
        return self._fh is not None

    def acquire(self) -> None:
        """Take the lock or raise ``InstanceRunningError`` naming the holder (a MokaError)."""
        ensure_dir(self.data_dir, "the data dir", private=True)
        try:
            fh = open_private(self.data_dir / LOCK_NAME, "a+b")  # held open: the lock lives with it
        except OSError as exc:
            raise MokaError(f"can't create the lock file in the data dir {self.data_dir}: {exc.strerror or exc}",
                            hint="check the folder's permissions, or pass another --data-dir") from exc
        if not _try_lock(fh):
            fh.close()
            raise InstanceRunningError(str(self.data_dir), read_holder(self.data_dir))
        self._fh = fh
        self._write_info()

    def describe(self, **values: Any) -> None:
        """Add to what a second instance is told about this one (e.g. ``url=``)."""
        self.info.update(values)
        if self.held:
            self._write_info()

    def listen_for_focus(self, on_focus: Callable[[], None]) -> None:
        """Call ``on_focus()`` (on a small thread) whenever another launch asks this one to come forward."""
        if not self.held or self._server is not None:
            return
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        self._server = server
        self.describe(focusPort=server.getsockname()[1], focusSecret=self._secret)

        def serve() -> None:
            while True:
                try:
                    conn, _addr = server.accept()
                except OSError:  # closed by release()
                    return
                with conn:
                    conn.settimeout(2)
                    try:
                        said = conn.recv(256).decode("ascii", "replace").strip()
                    except OSError:
                        continue
                    if secrets.compare_digest(said, f"focus {self._secret}"):
                        with contextlib.suppress(Exception):  # the window may be gone; never kill the listener
                            on_focus()
                        with contextlib.suppress(OSError):
                            conn.sendall(b"ok\n")

        threading.Thread(target=serve, name="moka-focus", daemon=True).start()

    def release(self) -> None:
        """Stop listening and drop the lock (the instance file goes too)."""
        if self._server is not None:
            with contextlib.suppress(OSError):
                self._server.close()
            self._server = None
        if self._fh is not None:
            with contextlib.suppress(OSError):
                (self.data_dir / INFO_NAME).unlink()
            self._fh.close()  # closing the file releases the lock
            self._fh = None

    def _write_info(self) -> None:
        path = self.data_dir / INFO_NAME
        tmp = path.with_name(f".{INFO_NAME}.{os.getpid()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(self.info, out)
            os.replace(tmp, path)
        except OSError:  # only the courtesy message to a second instance is lost
            with contextlib.suppress(OSError):
                tmp.unlink()


def request_focus(data_dir: Path, timeout: float = 3.0) -> bool:
    """Ask the instance holding ``data_dir`` to bring its window forward; True if it said it did."""
    holder = read_holder(data_dir)
    port, secret = holder.get("focusPort"), holder.get("focusSecret")
    if not isinstance(port, int) or not isinstance(secret, str):
        return False
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
            conn.sendall(f"focus {secret}\n".encode("ascii"))
            return conn.recv(16).startswith(b"ok")
    except OSError:
        return False
