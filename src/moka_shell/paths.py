"""Where Moka keeps its config and data (platformdirs, with overrides)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import platformdirs

from moka_shell.errors import DataDirError

APP_NAME = "moka"


@dataclass(frozen=True)
class Paths:
    """The config file and the data directory in use."""

    config_file: Path
    data_dir: Path

    @property
    def inspector_dir(self) -> Path:
        """Folder of the inspector's JSONL files (one per day)."""
        return self.data_dir / "inspector"

    @property
    def database(self) -> Path:
        """The SQLite file with conversations."""
        return self.data_dir / "moka.sqlite3"

    @property
    def plugin_folder(self) -> Path:
        """Where a frozen Moka keeps the plugins ``moka plugins install`` added (one folder each)."""
        return self.data_dir / "plugins"

    @property
    def state_file(self) -> Path:
        """Small UI state (window geometry)."""
        return self.data_dir / "state.json"


def resolve_paths(config: str | None = None, data_dir: str | None = None) -> Paths:
    """Flags win over environment variables, which win over the platform defaults."""
    cfg = config or os.environ.get("MOKA_CONFIG")
    data = data_dir or os.environ.get("MOKA_DATA_DIR")
    cfg_path = Path(cfg).expanduser() if cfg else Path(platformdirs.user_config_dir(APP_NAME)) / "config.json"
    data_path = Path(data).expanduser() if data else Path(platformdirs.user_data_dir(APP_NAME))
    return Paths(cfg_path.resolve(), data_path.resolve())


# The data folder holds conversations, tool results, the inspector's log and maybe sign-in tokens:
# it is the person's alone (finding G10). Files are created owner-only (an explicit mode, whatever
# the umask), and what an older Moka left readable is made owner-only when it is next opened.
PRIVATE_DIR, PRIVATE_FILE = 0o700, 0o600
POSIX = os.name == "posix"


def owner_only(path: Path, mode: int = PRIVATE_FILE) -> None:
    """Take group and other access away from ``path`` if it is ours and has any (no error if it can't)."""
    if not POSIX:
        return  # Windows: the user's profile folder is already the user's
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode) or st.st_uid != os.getuid() or path == Path.home():
            return  # never through a link, never another's file, never the home folder itself
        if stat.S_IMODE(st.st_mode) & 0o077:
            os.chmod(path, stat.S_IMODE(st.st_mode) & mode)
    except OSError:
        pass  # gone meanwhile, or on a file system without modes: nothing to tighten


def secure_data_dir(data_dir: Path) -> None:
    """Make an existing data folder and Moka's files in it owner-only (what an older Moka left 0755/0644)."""
    if not POSIX or not data_dir.is_dir():
        return
    owner_only(data_dir, PRIVATE_DIR)
    ours = [p for p in data_dir.iterdir() if p.name.startswith(("moka.", ".moka.", ".oauth-"))
            or p.name in ("state.json", "oauth-tokens.json")]
    inspector = data_dir / "inspector"
    if inspector.is_dir():
        owner_only(inspector, PRIVATE_DIR)
        ours += [p for p in inspector.iterdir() if p.name.startswith("events-")]
    for path in ours:
        owner_only(path)


def open_private(path: Path, mode: str = "ab") -> IO[Any]:
    """Open ``path`` (``"ab"``, ``"a+b"``, ``"wb"`` or ``"w"``), creating it owner-only (0600)."""
    flags = {"ab": os.O_WRONLY | os.O_APPEND, "a+b": os.O_RDWR | os.O_APPEND,
             "wb": os.O_WRONLY | os.O_TRUNC, "w": os.O_WRONLY | os.O_TRUNC}[mode]
    fd = os.open(path, flags | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), PRIVATE_FILE)
    try:
        owner_only(path)  # made by an older Moka with the umask's mode
        return os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8")
    except BaseException:
        os.close(fd)
        raise


def ensure_dir(path: Path, what: str, *, private: bool = False) -> Path:
    """Create the folder ``path`` (with its parents), or raise a DataDirError that says what is in the way.

    ``private``: the folder is created owner-only (0700), and an existing one loses group and other access.
    """
    try:
        if private:  # every folder made on the way is owner-only too (mkdir's parents=True would not be)
            for folder in reversed([p for p in [path, *path.parents] if not p.exists()]):
                folder.mkdir(mode=PRIVATE_DIR, exist_ok=True)
        path.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            if private:
                owner_only(path, PRIVATE_DIR)
            return path
    except OSError as exc:
        if not isinstance(exc, (FileExistsError, NotADirectoryError)):
            raise DataDirError(str(path), f"{what} can't be created: {exc.strerror or exc}",
                               hint="check the folder's permissions, or pass another --data-dir / --config") from exc
    raise folder_blocked(path, what, "created", file_in_the_way(path) or path)


def file_in_the_way(path: Path) -> Path | None:
    """The file (not folder) at ``path`` or at one of its parents, if there is one."""
    return next((p for p in [path, *path.parents] if p.exists() and not p.is_dir()), None)


def folder_blocked(path: Path, what: str, verb: str, blocker: Path) -> DataDirError:
    """The error for a folder that can't be ``verb`` (created, read) because ``blocker`` is a file."""
    return DataDirError(str(path), f"{what} can't be {verb}: {blocker} is a file, not a folder",
                        hint=f"move {blocker} aside (Moka never deletes it), or pass another --data-dir / --config")
