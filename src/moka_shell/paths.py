"""Where Moka keeps its config and data (platformdirs, with overrides)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

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
