"""Whether ``moka check`` launches the browser before it knows it has a view to render.

Chromium launches while the core and the server start: that hides most of its start behind
theirs in a check with views (§18 of docs/performance.md), but a check with nothing to render paid
the whole launch for nothing, about twice a bare client's listing (§19). The check cannot know
before the server lists its tools, so it remembers, per server, which tools had a UI when it last
listed them. When that memory says there is nothing to render, the browser is not launched early;
if the listing then shows a UI tool after all (the server changed), it is launched then: slower,
never wrong. No memory, or an unreadable one, means launching early, as before.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

HINTS_FILE = "check-hints.json"
MAX_HINT_SERVERS = 200  # servers remembered; the ones checked longest ago are forgotten first
MAX_HINT_BYTES = 256 * 1024  # a larger file is not read (and is rewritten on the next check)
MAX_HINT_TOOLS = 100  # UI tool names kept per server; past that only "it has UI tools" is kept
MANY = "*"  # in place of the names: the server has many UI tools, so expect views whatever the tool


def _read(data_dir: Path) -> dict[str, Any]:
    path = data_dir / HINTS_FILE
    try:
        if path.stat().st_size > MAX_HINT_BYTES:
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # missing, unreadable or damaged: no memory, launch early
        return {}
    return data if isinstance(data, dict) else {}


def expects_views(data_dir: Path, server: str, tool: str | None) -> bool:
    """True unless the last listing of ``server`` showed nothing this check would render."""
    entry = _read(data_dir).get(server)
    ui = entry.get("ui") if isinstance(entry, dict) else None
    if not isinstance(ui, list):
        return True  # not remembered, or MANY
    return tool in ui if tool else bool(ui)


def remember(data_dir: Path, server: str, ui_tools: list[str]) -> None:
    """Note which tools of ``server`` have a UI now; a failed write only costs the next check its hint."""
    hints = _read(data_dir)
    hints.pop(server, None)
    # Last in the dict: the most recently checked.
    hints[server] = {"ui": sorted(ui_tools) if len(ui_tools) <= MAX_HINT_TOOLS else MANY}
    while len(hints) > MAX_HINT_SERVERS:
        hints.pop(next(iter(hints)))
    path = data_dir / HINTS_FILE
    tmp = path.with_name(f".{HINTS_FILE}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(hints), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:  # a full disk or a read-only data dir: the check itself is not affected
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
