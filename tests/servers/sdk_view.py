"""The official view SDK (`@modelcontextprotocol/ext-apps`, from tests/npm) inlined into a view document.

A fixture server's view built on it behaves as the published apps do (the SDK's own handshake,
validation, handlers and tool registry), without a bundler: the SDK's ES module is inlined and
its exports are put on ``window.ExtApps`` for the page's own module script.
"""

from __future__ import annotations

import re
from pathlib import Path

SDK = (Path(__file__).resolve().parents[1] / "npm" / "node_modules" / "@modelcontextprotocol" / "ext-apps"
       / "dist" / "src" / "app-with-deps.js")
_EXPORT = re.compile(r"export\{([^}]*)\};?\s*$")


def sdk_script() -> str:
    """A module script that runs the SDK and sets ``window.ExtApps`` to its exports."""
    if not SDK.exists():
        raise SystemExit(f"{SDK} is missing: scripts/setup.sh installs the npm packages of tests/npm")
    code = SDK.read_text(encoding="utf-8")
    found = _EXPORT.search(code)
    if found is None:
        raise SystemExit(f"{SDK} does not end in an export list; the SDK's bundle changed shape")
    pairs = [p.strip().split(" as ") for p in found.group(1).split(",") if p.strip()]
    exports = ",".join(f"{(p[1] if len(p) == 2 else p[0]).strip()}:{p[0].strip()}" for p in pairs)
    return f"<script type=\"module\">{code[:found.start()]}\nwindow.ExtApps={{{exports}}};</script>"


def sdk_page(title: str, body: str, script: str) -> str:
    """A view document: ``body``, the SDK, then ``script`` (a module that reads ``window.ExtApps``)."""
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head><body>{body}"
            f"{sdk_script()}<script type=\"module\">{script}</script></body></html>")
