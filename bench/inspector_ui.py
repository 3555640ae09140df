"""The Inspector screen with many events in Chromium: first rows painted, and a search.

The core is filled through the real ``Inspector.record`` on its own loop; the page is Moka's UI.
Both figures are timed inside the page (``performance.now()``), until the frame after the
expected rows are in the DOM.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from moka_shell.inspector import EventFilter, Inspector
from moka_shell.paths import Paths

from bench.harness import Chromium, Core

NEEDLE = "zebra"
EVERY = 1000  # one event in this many carries NEEDLE


def _timed(action: str, ready: str, limit_ms: int = 60000) -> str:
    """Page function: run `action`, poll each animation frame until `ready` holds, resolve one frame later.

    That frame was painted with the rows in it. Resolves to ms, or -1 after ``limit_ms``. The
    snippets are inlined (not passed to `new Function`): the UI page's CSP forbids eval.
    """
    return f"""async () => {{
  const ok = () => {{ {ready} }};
  const t0 = performance.now();
  {action}
  return await new Promise((resolve) => {{
    const tick = () => {{
      if (ok()) {{ requestAnimationFrame(() => resolve(performance.now() - t0)); return; }}
      if (performance.now() - t0 > {limit_ms}) {{ resolve(-1); return; }}
      requestAnimationFrame(tick);
    }};
    tick();
  }});
}}"""


def ui_event(i: int) -> tuple[str, dict[str, Any], str, str]:
    """A ui.rpc tools/call event: channel, message, direction, view; every EVERY-th mentions NEEDLE."""
    note = "x" * 60 + (f" {NEEDLE} " if i % EVERY == EVERY - 1 else " ") + "y" * 40
    message = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
               "params": {"name": "ping", "arguments": {"i": i, "note": note}}}
    return "ui.rpc", message, "in" if i % 2 else "out", f"v{i % 50:011x}"


async def fill(inspector: Inspector, count: int) -> None:
    """Record ``count`` events (run on the core loop, where events are recorded in the app)."""
    for i in range(count):
        channel, message, direction, view = ui_event(i)
        inspector.record(channel, message, direction=direction, server="bench", view=view)


def _row_with(seq: int) -> str:
    return f'return !!document.querySelector(\'#inspector-list .insp-row[data-seq="{seq}"]\');'


def _only_matches(seq: int) -> str:
    return ("const rows = [...document.querySelectorAll('#inspector-list .insp-row')];"
            f"return rows.length > 0 && rows.every((r) => r.textContent.includes({json.dumps(NEEDLE)}))"
            f" && rows.some((r) => r.dataset.seq === '{seq}');")


@contextmanager
def filled_core(events: int) -> Iterator[Core]:
    """A core on its own thread (browser mode, no servers) whose inspector holds ``events`` events."""
    with tempfile.TemporaryDirectory(prefix="moka-bench-insp-") as tmp:
        (Path(tmp) / "config.json").write_text('{"mcpServers": {}}', encoding="utf-8")
        core = Core.start(Paths(Path(tmp) / "config.json", Path(tmp) / "data"), store=False)
        try:
            core.run(fill(core.app.inspector, events), 300)
            yield core
        finally:
            core.stop()


def screen_timings(core: Core, repeat: int) -> dict[str, list[float]]:
    """ms from #inspector to the newest rows painted, and from typing a search to its rows painted."""
    newest = core.app.inspector.query(EventFilter(), limit=1)[-1]["seq"]
    match = core.app.inspector.query(EventFilter(text=NEEDLE), limit=1)[-1]["seq"]
    browser = Chromium()
    try:
        first, search = [], []
        page = browser.page
        for _ in range(repeat):
            page.goto("about:blank")  # a fresh document each time (a new hash alone would not load one)
            browser.open(core.web.url + "#chat")
            page.wait_for_selector('#conn[data-status="online"]', timeout=30000)
            page.wait_for_timeout(300)  # let the chat screen settle first
            first.append(page.evaluate(_timed('location.hash = "#inspector";', _row_with(newest))))
            typed = ("const i = document.querySelector('#inspector-filter-text');"
                     f"i.value = {json.dumps(NEEDLE)}; i.dispatchEvent(new Event('input', {{bubbles: true}}));")
            search.append(page.evaluate(_timed(typed, _only_matches(match))))
        return {"first_rows": first, "search": search}
    finally:
        browser.close()
