"""Moka's own user docs, served at ``/docs/`` from the install's files (Help → Documentation).

A wheel carries them as ``moka_shell/docs/*.md`` (setup.py copies them at build time); a source
checkout has them in its ``docs/`` folder. Only the pages found there are served, by name: a request
for anything else is a 404, never a path joined onto the folder.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

PACKAGED = Path(str(resources.files("moka_shell"))) / "docs"
CHECKOUT = Path(__file__).resolve().parents[3] / "docs"  # src/moka_shell/web/ → the repository
PAGE_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")


def docs_folder() -> Path | None:
    """Where this install's docs are: packaged first, then a source checkout's, else None."""
    for folder in (PACKAGED, CHECKOUT):
        if folder.is_dir() and any(folder.glob("*.md")):
            return folder
    return None


def doc_pages() -> list[dict[str, str]]:
    """Each page as ``{"name", "title"}``, the title read from its first heading, in name order."""
    folder = docs_folder()
    if folder is None:
        return []
    pages = []
    for path in sorted(folder.glob("*.md")):
        if PAGE_NAME.fullmatch(path.stem):
            pages.append({"name": path.stem, "title": _title(path)})
    return pages


def doc_text(name: str) -> str | None:
    """The Markdown of page ``name``, or None when no page has that name."""
    if not PAGE_NAME.fullmatch(name) or name not in {page["name"] for page in doc_pages()}:
        return None
    folder = docs_folder()
    assert folder is not None  # a listed page has a folder
    return (folder / f"{name}.md").read_text(encoding="utf-8")


def _title(path: Path) -> str:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.startswith("# "):
                return line[2:].strip().replace("`", "")  # a title, not Markdown
    return path.stem.replace("-", " ").capitalize()
