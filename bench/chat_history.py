"""A 10,000-message conversation opened in the Chat screen: first messages painted, and the page's longest block.

The conversation is written through the real ``Store`` on the core's loop; the page is Moka's UI in
Playwright's Chromium. Everything is timed inside the page (``performance.now()``): from the click on
the conversation in the sidebar until the frame after its newest message is on screen, and, meanwhile
and for a second after, the longest the main thread was busy (a ``setTimeout`` chain notes the largest
gap between its turns; Chromium's long-task entries are kept beside it). Then the thread is scrolled
up a few screens at a time, the way a person reads back, with the same probe running. The probe
also runs for as long over the page left idle: on a shared machine the operating system alone
keeps the page's thread waiting now and then, and that floor is the reference for both blocks.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from moka_shell.paths import Paths

from bench.harness import Chromium, Core

MESSAGES = 10_000

# The probe: a chain of setTimeout(0) (4 ms apart once nested) whose largest gap, less that 4 ms,
# is the longest time the page could not run a task. Started by `start`, read by `stop`.
PROBE = """
window.__blockProbe = {
  start() {
    const p = { worst: 0, last: performance.now(), on: true, long: 0 };
    const tick = () => {
      const now = performance.now();
      p.worst = Math.max(p.worst, now - p.last - 4);
      p.last = now;
      if (p.on) setTimeout(tick, 0);
    };
    setTimeout(tick, 0);
    try {
      p.obs = new PerformanceObserver((list) => {
        for (const e of list.getEntries()) p.long = Math.max(p.long, e.duration);
      });
      p.obs.observe({ type: "longtask" });
    } catch {}
    this.p = p;
  },
  stop() {
    const p = this.p;
    p.on = false;
    p.obs?.disconnect();
    return { worst: Math.max(0, p.worst), long: p.long };
  },
};
"""


async def fill(app: Any, messages: int) -> str:
    """A conversation of ``messages`` messages (every 20th has a finished tool call); its id."""
    store = app.store
    cid = store.create_conversation("10k messages")
    store.db.execute("BEGIN")
    for i in range(messages):
        role = "user" if i % 2 == 0 else "assistant"
        msg = store.add_message(cid, role, f"message {i}: lorem ipsum *dolor* sit amet, `code` " * 3)
        if role == "assistant" and i % 20 == 1:
            call = {"id": f"t{i}", "server": "moka-demo", "tool": "roll_dice", "modelName": "roll_dice",
                    "arguments": {"sides": 6}, "status": "running"}
            store.add_call(cid, msg["id"], call)
            store.update_call(call["id"], status="done", result={"content": [{"type": "text", "text": "4"}]})
    store.db.execute("COMMIT")
    return cid


@contextmanager
def filled_core(messages: int = MESSAGES) -> Iterator[tuple[Core, str]]:
    """A core on its own thread (browser mode, no servers) whose store holds one long conversation."""
    with tempfile.TemporaryDirectory(prefix="moka-bench-chat-") as tmp:
        (Path(tmp) / "config.json").write_text('{"mcpServers": {}}', encoding="utf-8")
        core = Core.start(Paths(Path(tmp) / "config.json", Path(tmp) / "data"))
        try:
            yield core, core.run(fill(core.app, messages), 300)
        finally:
            core.stop()


def _open_timed(cid: str, newest: int, limit_ms: int) -> str:
    """Page function: click the conversation, resolve {painted, worst, long} in ms (painted -1 past the limit)."""
    return f"""async () => {{
  const shown = () => {{
    const el = [...document.querySelectorAll('.thread[data-conv-id="{cid}"] .msg')].pop();
    if (!el || !el.textContent.includes("message {newest}:")) return false;
    const r = el.getBoundingClientRect(), s = document.getElementById("chat-scroll").getBoundingClientRect();
    return r.bottom > s.top && r.top < s.bottom;
  }};
  window.__blockProbe.start();
  const t0 = performance.now();
  document.querySelector('.conv-item[data-conv-id="{cid}"] .conv-open').click();
  const painted = await new Promise((resolve) => {{
    const tick = () => {{
      if (shown()) {{ requestAnimationFrame(() => resolve(performance.now() - t0)); return; }}
      if (performance.now() - t0 > {limit_ms}) {{ resolve(-1); return; }}
      requestAnimationFrame(tick);
    }};
    tick();
  }});
  await new Promise((r) => setTimeout(r, 1000));
  return {{ painted, ...window.__blockProbe.stop() }};
}}"""


# Scroll up by most of a screen each frame for `ms`, as a person flicking back through the thread.
SCROLL_BACK = """async (ms) => {
  const s = document.getElementById("chat-scroll");
  window.__blockProbe.start();
  const t0 = performance.now();
  await new Promise((resolve) => {
    const tick = () => {
      s.scrollTop -= s.clientHeight * 0.8;
      if (performance.now() - t0 > ms) return resolve();
      requestAnimationFrame(tick);
    };
    tick();
  });
  await new Promise((r) => setTimeout(r, 500));
  const shown = document.querySelectorAll("#chat-scroll .thread:not([hidden]) .msg").length;
  return { ...window.__blockProbe.stop(), shown };
}"""


# The same probe over a page doing nothing, in the same run: what the machine's scheduling alone costs.
IDLE = """async (ms) => {
  window.__blockProbe.start();
  await new Promise((r) => setTimeout(r, ms));
  return window.__blockProbe.stop();
}"""


def timings(core: Core, cid: str, repeat: int, *, messages: int = MESSAGES,
            limit_ms: int = 120_000) -> dict[str, list[float]]:
    """Per fresh page load: click → newest painted, the longest block then, idle, and while scrolling back."""
    browser = Chromium()
    browser.page.add_init_script(PROBE)
    out: dict[str, list[float]] = {"painted": [], "worst": [], "long": [], "scroll_worst": [], "shown": [],
                                   "idle_worst": []}
    try:
        page = browser.page
        page.set_default_timeout(limit_ms + 30_000)
        for _ in range(repeat):
            page.goto("about:blank")
            browser.open(core.web.url + "#chat")
            page.wait_for_selector(f'.conv-item[data-conv-id="{cid}"]', timeout=30_000)
            page.wait_for_timeout(300)  # let the screen settle first
            opened = page.evaluate(_open_timed(cid, messages - 1, limit_ms))
            for key in ("painted", "worst", "long"):
                out[key].append(opened[key])
            if opened["painted"] < 0:
                continue  # never painted: scrolling back would measure the same block again
            out["idle_worst"].append(page.evaluate(IDLE, 3000)["worst"])
            back = page.evaluate(SCROLL_BACK, 3000)
            out["scroll_worst"].append(back["worst"])
            out["shown"].append(back["shown"])
        return out
    finally:
        browser.close()
