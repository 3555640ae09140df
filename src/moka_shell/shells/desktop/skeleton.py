"""The page the desktop window shows while the core starts: Moka's frame, drawn at once.

The window opens before the core (the database, plugins, the web server) is up, so the person
sees Moka's rail and top bar within a bare window's start-up time instead of a blank rectangle;
the real page replaces it as soon as the core serves it. Colours follow the saved light/dark
choice, read straight from the config file (a bad or missing file just means "system").
"""

from __future__ import annotations

import json
from pathlib import Path

LIGHT = {"rail": "#ece8e2", "bg": "#f6f4f1", "surface": "#ffffff", "border": "#e3ded7", "fg": "#221d19",
         "muted": "#8a827a", "accent": "#a3542c", "shimmer": "#ece8e2"}
DARK = {"rail": "#141211", "bg": "#191715", "surface": "#221f1d", "border": "#35312e", "fg": "#eee9e4",
        "muted": "#8f8780", "accent": "#e29a66", "shimmer": "#2a2725"}


def saved_mode(config_file: Path) -> str:
    """``light``, ``dark`` or ``system``, as the config file says; ``system`` when it says nothing."""
    try:
        data = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "system"
    theme = data.get("theme") if isinstance(data, dict) else None
    mode = theme.get("mode") if isinstance(theme, dict) else None
    return mode if mode in ("light", "dark") else "system"


def _vars(colours: dict[str, str]) -> str:
    return "".join(f"--{k}:{v};" for k, v in colours.items())


def skeleton_html(mode: str = "system") -> str:
    """A self-contained page (no scripts, no requests) that looks like Moka starting."""
    if mode == "dark":
        palette = f":root{{{_vars(DARK)}color-scheme:dark}}"
    elif mode == "light":
        palette = f":root{{{_vars(LIGHT)}color-scheme:light}}"
    else:
        palette = (f":root{{{_vars(LIGHT)}color-scheme:light dark}}"
                   f"@media (prefers-color-scheme: dark){{:root{{{_vars(DARK)}}}}}")
    rows = "".join(f'<div class="line" style="width:{w}%"></div>' for w in (62, 48, 70, 36))
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>Moka</title><style>
{palette}
*{{box-sizing:border-box}}html,body{{margin:0;height:100%;background:var(--bg);color:var(--fg);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Ubuntu,sans-serif;overflow:hidden}}
.app{{display:grid;grid-template-columns:76px 1fr;height:100vh}}
.rail{{display:flex;flex-direction:column;align-items:center;gap:14px;padding:14px 0;background:var(--rail);
border-right:1px solid var(--border)}}
.brand{{width:40px;height:40px;border-radius:12px;background:var(--accent)}}
.nav{{width:36px;height:36px;border-radius:10px;background:var(--shimmer)}}
.main{{display:flex;flex-direction:column;min-width:0}}
.top{{height:52px;display:flex;align-items:center;padding:0 20px;border-bottom:1px solid var(--border);
background:var(--surface);font-weight:650;font-size:15px}}
.body{{flex:1;display:flex;flex-direction:column;align-items:center;justify-content:center;gap:12px}}
.card{{width:min(560px,80%);padding:22px;border:1px solid var(--border);border-radius:14px;background:var(--surface)}}
.line{{height:11px;margin:10px 0;border-radius:6px;background:var(--shimmer);animation:pulse 1.4s ease-in-out infinite}}
.status{{color:var(--muted);font-size:13px}}
@keyframes pulse{{50%{{opacity:.45}}}}
@media (prefers-reduced-motion: reduce){{.line{{animation:none}}}}
</style></head><body><div class="app" aria-busy="true">
<nav class="rail"><div class="brand"></div><div class="nav"></div><div class="nav"></div><div class="nav"></div>
<div class="nav"></div><div class="nav"></div></nav>
<div class="main"><div class="top">Moka</div><div class="body"><div class="card">{rows}</div>
<div class="status" role="status">Starting Moka…</div></div></div></div></body></html>"""
