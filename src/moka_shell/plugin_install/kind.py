"""Where plugins go for this Moka, and the plugin folder put on ``sys.path`` at start (kept light: Moka's start imports it).

A Moka running from a venv or a pipx environment has pip beside it: plugins go there, as
``llm install`` puts them into llm's environment however llm was installed. A frozen app, or an
environment without pip (``uv tool install``), uses the per-user plugin folder instead.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Literal

Kind = Literal["environment", "folder"]


def install_kind() -> Kind:
    """``environment`` when pip can install into the Python running Moka, else ``folder``."""
    if getattr(sys, "frozen", False):
        return "folder"
    return "environment" if importlib.util.find_spec("pip") is not None else "folder"


def activate(root: Path) -> list[str]:
    """Put every installed distribution of the folder on ``sys.path`` (after the app's own packages)."""
    added: list[str] = []
    try:
        subs = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:  # no folder yet, or unreadable: no plugins from it, and Moka still starts
        return added
    for sub in subs:
        entry = str(sub)
        if entry not in sys.path:
            sys.path.append(entry)
            added.append(entry)
    if added:
        importlib.invalidate_caches()
    return added
