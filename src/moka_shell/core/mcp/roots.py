"""Roots: the folders the person lets one server work in (``roots/list``, ``notifications/roots/list_changed``).

A server's config entry may carry ``"roots": ["/abs/dir", ...]``. Only a server with roots configured is
told Moka supports roots: a filesystem server that sees the capability uses the roots *instead of* its
own command-line folders, so advertising an empty list would take its folders away.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import mcp_types as types

from moka_shell.config import ServerConfig
from moka_shell.errors import InvalidParamsError

MAX_ROOTS = 32


def configured_roots(config: ServerConfig) -> list[str]:
    """The folders in the server's config entry (``roots``), as given."""
    raw = (config.model_extra or {}).get("roots")
    return [r for r in raw if isinstance(r, str) and r] if isinstance(raw, list) else []


def checked_roots(paths: Any) -> list[str]:
    """Folders the person chose: absolute, existing directories, no repeats (InvalidParamsError otherwise)."""
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise InvalidParamsError("'roots' must be a list of folder paths")
    if len(paths) > MAX_ROOTS:
        raise InvalidParamsError(f"at most {MAX_ROOTS} folders per server ({len(paths)} were given)")
    out: list[str] = []
    for given in paths:
        path = Path(os.path.expanduser(given.strip()))
        if not path.is_absolute():
            raise InvalidParamsError(f"{given!r} is not an absolute path; give the whole path of the folder")
        if not path.is_dir():
            raise InvalidParamsError(f"{given!r} is not a folder that exists")
        resolved = str(path.resolve())
        if resolved not in out:
            out.append(resolved)
    return out


def roots_result(paths: list[str]) -> types.ListRootsResult:
    """The ``roots/list`` answer: each folder as a ``file://`` URI named by its last part."""
    return types.ListRootsResult(roots=[types.Root(uri=Path(p).as_uri(), name=Path(p).name or p)  # type: ignore[arg-type]
                                        for p in paths])
