"""Load the demo's view documents, inlining their shared scripts and styles."""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

_INCLUDE = re.compile(r"<!--\s*@inline\s+([\w.-]+)\s*-->")


def _read(name: str) -> str:
    return resources.files(__package__).joinpath("views", name).read_text(encoding="utf-8")


def _element(name: str) -> str:
    text = _read(name)
    if name.endswith(".js"):
        # "</" would let the script text close its own element early.
        return "<script>\n" + text.replace("</", "<\\/") + "\n</script>"
    if name.endswith(".css"):
        return "<style>\n" + text.replace("</", "<\\/") + "\n</style>"
    raise ValueError(f"cannot inline {name!r}: only .js and .css files are supported")


@cache
def render(name: str) -> str:
    """Return `views/<name>` as one self-contained HTML document."""
    return _INCLUDE.sub(lambda match: _element(match.group(1)), _read(name))
