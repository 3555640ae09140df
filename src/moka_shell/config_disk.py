"""The config file on disk, shared with writers who take no lock (a person's editor): read whole, replace safely.

Two rules keep a hand edit from being lost while Moka writes (reliability finding N7):

- **A read waits out a half-written file.** An editor that writes in place (``open("w")``) leaves the
  file empty or cut short for a moment; a read that does not parse is tried again for up to
  ``SETTLE_SECONDS`` before it counts as broken.
- **A write never replaces what it has not read.** Moka's new file is swapped in with an atomic
  exchange (``renameat2(RENAME_EXCHANGE)`` on Linux), which hands back the file it displaced. If that
  is not the file Moka read and merged, someone wrote in between: theirs is swapped straight back,
  read, merged and the write tried again. Where the system has no exchange, the file is compared
  just before an ordinary ``os.replace`` (the gap left is a few system calls long).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

T = TypeVar("T")
Stamp = tuple[int, int, int]  # inode, mtime in ns, size: cheap to compare, changes with any write
SETTLE_SECONDS = 0.5  # how long a file that does not parse may still be on its way to disk
_SETTLE_STEP = 0.01


class Unsettled(Exception):
    """The file does not parse: ``error`` says why; ``final``: not worth reading again (not JSON cut short).

    ``read_settled`` raises it with ``stamp``, the identity of the file that did not parse.
    """

    def __init__(self, error: Exception, *, final: bool = False) -> None:
        super().__init__(str(error))
        self.error = error
        self.final = final
        self.stamp: Stamp | None = None


def stamp_of(path: Path) -> Stamp | None:
    """The file's identity now, or None when there is none."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def read_settled(path: Path, parse: Callable[[bytes], T], *,
                 settle: float = SETTLE_SECONDS) -> tuple[T, bytes, Stamp | None]:
    """Read and parse the file, trying again while it does not parse, for up to ``settle`` seconds.

    ``parse`` raises ``Unsettled`` for bytes that do not parse; it reaches the caller (with the
    file's stamp) when they are final or the file stays that way. OSError from reading does too.
    """
    deadline = time.monotonic() + settle
    while True:
        stamp = stamp_of(path)  # before the read: a write after it makes the stamp differ, never hides
        data = path.read_bytes()
        try:
            return parse(data), data, stamp
        except Unsettled as exc:
            if exc.final or time.monotonic() >= deadline:
                exc.stamp = stamp
                raise
        time.sleep(_SETTLE_STEP)


def write_temp(path: Path, data: bytes) -> tuple[str, Stamp]:
    """Write ``data`` to a new temp file beside ``path``; its name and identity (which the rename keeps)."""
    # A temp file of our own: two writers sharing one temp name replaced each other's.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            st = os.fstat(fh.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp, (st.st_ino, st.st_mtime_ns, st.st_size)


def swap_in(tmp: str, path: Path, *, expected: bytes | None, ours: bytes) -> bool:
    """Put ``tmp`` (holding ``ours``) at ``path`` if what is there is ``expected`` (None: no file).

    False when someone else's file was there: it is left at ``path`` (or put back within a moment),
    for the caller to read and merge. ``tmp`` is gone either way.
    """
    try:
        if expected is None:
            return _create(tmp, path)
        try:
            if _exchange(tmp, path):
                return _verify_exchanged(tmp, path, expected, ours)
        except FileNotFoundError:  # the file went away meanwhile
            return False
        # No exchange on this system: compare, then replace (a gap of a few system calls remains).
        if _read_or_none(path) != expected:
            return False
        os.replace(tmp, path)
        return True
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _create(tmp: str, path: Path) -> bool:
    try:
        os.link(tmp, path)  # fails if someone created the file meanwhile: theirs stays
    except FileExistsError:
        return False
    return True


def _verify_exchanged(tmp: str, path: Path, expected: bytes, ours: bytes) -> bool:
    if _read_or_none(Path(tmp)) == expected:  # tmp now holds the file we displaced
        return True
    # Written since we read it: put theirs back at once, so ours (without their edit) shows for a
    # moment only; the caller reads it from where it belongs (an editor writing in place may not be done).
    _exchange(tmp, path)
    if _read_or_none(Path(tmp)) != ours:  # a third writer replaced ours within that moment: the newest stays
        _exchange(tmp, path)
    return False


def _read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


# ---- the atomic exchange ---------------------------------------------------------------------------

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_renameat2: Callable[..., int] | None = None
_exchange_works = sys.platform.startswith("linux")


def _exchange(a: str, b: Path) -> bool:
    """Swap two names atomically; False where the system or the file system can't (then nothing happened)."""
    global _renameat2, _exchange_works
    if not _exchange_works:
        return False
    if _renameat2 is None:
        try:
            fn = ctypes.CDLL(None, use_errno=True).renameat2  # glibc 2.28 and later
        except (OSError, AttributeError):
            _exchange_works = False
            return False
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        fn.restype = ctypes.c_int
        _renameat2 = fn
    if _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EPERM):  # e.g. a file system without it
        _exchange_works = False
        return False
    raise OSError(err, os.strerror(err), str(b))


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the config's lock file across read-merge-write, so writers that lock take turns."""
    try:
        fh = open(path.with_name(f".{path.name}.lock"), "a")  # noqa: SIM115 (held below)
    except OSError:
        fh = None  # a read-only or missing directory: nobody can write there, so nobody races us
    # Windows has no flock: writes there still never replace a file they have not read (swap_in).
    if fh is None or fcntl is None:
        yield
        return
    with fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
