"""Where Moka keeps its config and data (platformdirs, with overrides)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

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


def ensure_dir(path: Path, what: str) -> Path:
    """Create the folder ``path`` (with its parents), or raise a DataDirError that says what is in the way."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            return path
    except OSError as exc:
        if not isinstance(exc, (FileExistsError, NotADirectoryError)):
            raise DataDirError(str(path), f"{what} can't be created: {exc.strerror or exc}",
                               hint="check the folder's permissions, or pass another --data-dir / --config") from exc
    blocker = next((p for p in [path, *path.parents] if p.exists() and not p.is_dir()), path)
    raise DataDirError(str(path), f"{what} can't be created: {blocker} is a file, not a folder",
                       hint=f"move {blocker} aside (Moka never deletes it), or pass another --data-dir / --config")
