"""Chat streaming overhead: a model's chunk leaving the provider's socket → its text painted.

The provider is the fake OpenAI-compatible server of ``moka_shell.testing`` (the real wire
format), subclassed here only to note, per chunk, the moment its bytes are handed to Starlette,
whose next step is writing them to the socket. (Noting it after the generator resumes, once
``send`` returned, read up to ~4 ms late on a loaded machine, later than the core got it.) Every
chunk carries a numbered token (`` k007``). In Moka's page (browser mode, Playwright's
Chromium) a MutationObserver notes when a token appears in the streaming message and the
next animation frame notes when it is painted. The reference is the provider's own stream:
the same turn read by a bare HTTP client in this process, each token noted on arrival.
The core's share is split off by an
event listener of the bench's own that notes when the core emits the token's ``chat.delta``.
Turns alternate between Moka and the reference. Clocks: Python's ``time.time()`` and the
page's ``performance.timeOrigin + now()``, corrected by the page's ``Date.now()`` offset.
"""

from __future__ import annotations

import http.client
import json
import re
import statistics
import time
from collections.abc import AsyncIterator
from typing import Any

from moka_shell.testing.fake_openai import FakeOpenAIServer, Text, TurnPlan
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from bench.context import Context
from bench.env import workspace
from bench.harness import Chromium, Core
from bench.stats import Result, Target

TOKEN = re.compile(rb"k(\d{3})")
TARGET = Target(5, "≤ 5 ms median added over the provider's own stream")
# Runs in Moka's page: per token, when it showed up in the DOM and when the frame with it was painted.
# "Painted" is a task posted from the first animation-frame callback of the frame that shows the
# token: it runs once that frame's style, layout and paint are done. A token written between
# frames (Moka's usual path) waits for the next frame; one written inside a frame callback (a fast
# run of deltas batched by frame) is in that frame, which FRAME_FLAG (added before the page loads)
# tells by marking the time from a frame's first callback until its paint is done.
WATCH = """(() => {
  const now = () => performance.timeOrigin + performance.now();
  const all = () => document.querySelectorAll('.msg[data-role="assistant"]');
  const before = all().length;  // only this turn's new message counts
  const s = window.__benchStream = { dom: {}, painted: {}, offset: Date.now() - now() };
  window.__benchWs = {};
  const stamp = (keys) => { const p = now(); for (const k of keys) if (!(k in s.painted)) s.painted[k] = p; };
  const scan = () => {
    const msgs = all();
    if (msgs.length <= before) return;
    const t = now();
    const fresh = [];
    for (const m of msgs[msgs.length - 1].textContent.matchAll(/k(\\d{3})/g)) {
      if (!(m[1] in s.dom)) { s.dom[m[1]] = t; fresh.push(m[1]); }
    }
    if (!fresh.length) return;
    if (window.__benchInFrame) { window.__benchAfterPaint.push(...fresh); return; }
    window.__benchRaf(() => { const ch = new MessageChannel(); ch.port1.onmessage = () => stamp(fresh); ch.port2.postMessage(0); });
  };
  window.__benchStamp = stamp;
  s.observer = new MutationObserver(scan);
  s.observer.observe(document.body, { childList: true, subtree: true, characterData: true });
  return true;
})()"""
# Before the page loads: while a frame's callbacks run (and until its paint is done) the page
# knows it is inside a frame; tokens written then are stamped once that frame is painted.
FRAME_FLAG = """(() => {
  if (window.top !== window) return;
  const raf = window.requestAnimationFrame.bind(window);
  window.__benchRaf = raf;
  window.__benchInFrame = false;
  window.__benchAfterPaint = [];
  const done = new MessageChannel();
  done.port1.onmessage = () => {
    window.__benchInFrame = false;
    const keys = window.__benchAfterPaint.splice(0);
    if (keys.length && window.__benchStamp) window.__benchStamp(keys);
  };
  window.requestAnimationFrame = (cb) => raf((t) => {
    if (!window.__benchInFrame) { window.__benchInFrame = true; done.port2.postMessage(0); }
    cb(t);
  });
})();"""
COLLECT = """(() => { const s = window.__benchStream; s.observer.disconnect();
  return { dom: s.dom, painted: s.painted, offset: s.offset, ws: window.__benchWs || {} }; })()"""
# Before the page loads: every WebSocket the page opens gets a first message listener that notes
# when each token arrived in the page's JavaScript (before Moka's own listener runs).
WS_PROBE = """(() => {
  if (window.top !== window) return;
  const Orig = window.WebSocket;
  const Probed = function (...args) {
    const ws = new Orig(...args);
    ws.addEventListener("message", (e) => {
      if (typeof e.data !== "string" || !window.__benchWs) return;
      const t = performance.timeOrigin + performance.now();
      for (const m of e.data.matchAll(/k(\\d{3})/g)) if (!(m[1] in window.__benchWs)) window.__benchWs[m[1]] = t;
    });
    return ws;
  };
  Probed.prototype = Orig.prototype;
  Object.setPrototypeOf(Probed, Orig);
  window.WebSocket = Probed;
})();"""
FRAMES = """new Promise((done) => { const t = []; const tick = (now) => { t.push(now);
  if (t.length < 31) requestAnimationFrame(tick); else done(t.slice(1).map((x, i) => x - t[i])); };
  requestAnimationFrame(tick); })"""  # 30 animation-frame intervals of the page, ms
SEND = """(text) => { const c = document.getElementById("composer"); c.value = text;
  c.dispatchEvent(new Event("input")); document.getElementById("send").click(); }"""


# The painted reference: a bare page on the provider's own origin that streams the same turn with
# fetch() and appends each delta's text to one element, the least any page showing the stream does.
BARE_PAGE = """<!doctype html><meta charset="utf-8"><title>bare stream</title>
<style>body { font: 15px system-ui, sans-serif; margin: 24px; }</style><body><script>
window.__runBare = async () => {
  const el = document.createElement("div");
  el.className = "msg"; el.dataset.role = "assistant";
  document.body.append(el);
  const body = { model: "fake-model", stream: true, messages: [{ role: "user", content: "go" }] };
  const reply = await fetch("/v1/chat/completions", { method: "POST", body: JSON.stringify(body),
                                                     headers: { "content-type": "application/json" } });
  const reader = reply.body.pipeThrough(new TextDecoderStream()).getReader();
  let rest = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const lines = (rest + value).split("\\n");
    rest = lines.pop();
    for (const line of lines) {
      if (!line.startsWith("data: {")) continue;
      const text = JSON.parse(line.slice(6)).choices?.[0]?.delta?.content;
      if (text) el.textContent += text;
    }
  }
  window.__bareDone = true;
};
</script></body>"""


class StampedOpenAI(FakeOpenAIServer):
    """The fake provider, noting time.time() as each chunk's bytes go to Starlette to be sent."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: dict[str, float] = {}

    def routes(self) -> list[Route]:
        """The provider's routes, and the bare page that paints its stream (the reference)."""
        async def bare(request: Request) -> Response:
            return HTMLResponse(BARE_PAGE)
        return [*super().routes(), Route("/bench/bare", bare)]

    async def _sse(self, plan: TurnPlan, model: str, include_usage: bool) -> AsyncIterator[bytes]:
        async for data in super()._sse(plan, model, include_usage):
            found = TOKEN.search(data)
            if found:  # the chunk is encoded; the next thing Starlette does is send() it
                self.sent[found.group(1).decode()] = time.time()
            yield data


def turn(chunks: int, gap: float) -> list[Text]:
    """A turn of ``chunks`` numbered tokens, ``gap`` seconds apart (a model's pace)."""
    return [Text(f" k{i:03d}", delay=gap) for i in range(chunks)]


def direct_turn(srv: StampedOpenAI, chunks: int, gap: float) -> dict[str, float]:
    """The provider's own stream: one streamed turn read by a bare HTTP client; token → arrival."""
    srv.sent.clear()
    srv.enqueue(turn(chunks, gap))
    arrived: dict[str, float] = {}
    body = {"model": "fake-model", "stream": True, "messages": [{"role": "user", "content": "go"}]}
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
    try:
        conn.request("POST", "/v1/chat/completions", json.dumps(body), {"content-type": "application/json"})
        reply = conn.getresponse()
        while line := reply.readline():
            found = TOKEN.search(line)
            if found:
                arrived.setdefault(found.group(1).decode(), time.time())
    finally:
        conn.close()
    return {k: (arrived[k] - srv.sent[k]) * 1000 for k in arrived if k in srv.sent}


def painted_ms(srv: StampedOpenAI, seen: dict[str, Any], key: str) -> dict[str, float]:
    """token → ms from leaving the provider to the page's stamp ``key`` (page clock → wall clock)."""
    offset = float(seen["offset"])
    return {k: ((t + offset) / 1000 - srv.sent[k]) * 1000 for k, t in seen[key].items() if k in srv.sent}


def bare_turn(page: Any, srv: StampedOpenAI, chunks: int, gap: float) -> tuple[dict[str, float], dict[str, float]]:
    """The same turn painted by the bare page: token → ms to (in its DOM, painted)."""
    srv.sent.clear()
    srv.enqueue(turn(chunks, gap))
    page.evaluate("window.__bareDone = false")
    page.evaluate(WATCH)
    page.evaluate("window.__runBare()")
    until(page, f"'{chunks - 1:03d}' in window.__benchStream.painted && window.__bareDone", 60)
    seen = page.evaluate(COLLECT)
    return painted_ms(srv, seen, "dom"), painted_ms(srv, seen, "painted")


def until(page: Any, expression: str, timeout: float) -> None:
    """Poll an expression in the page (the page's CSP has no eval, which wait_for_function needs)."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise TimeoutError(f"never true in {timeout:g} s: {expression}")
        time.sleep(0.02)


def core_stamps(core: Core) -> dict[str, float]:
    """token → time.time() when the core emitted its chat.delta (a listener after the web server's)."""
    stamps: dict[str, float] = {}

    def listen(event: str, data: Any) -> None:
        if event == "chat.delta":
            for found in TOKEN.finditer(str(data.get("text", "")).encode()):
                stamps.setdefault(found.group(1).decode(), time.time())

    core.app.subscribe(listen)
    return stamps


def moka_turn(browser: Chromium, srv: StampedOpenAI, chunks: int, gap: float,
              emitted: dict[str, float]) -> tuple[dict[str, float], ...]:
    """One chat turn in Moka's page: token → ms after leaving the provider to (emitted by the core,
    arrived in the page's JavaScript, in the DOM, painted)."""
    srv.sent.clear()
    emitted.clear()
    srv.enqueue(turn(chunks, gap))
    page = browser.page
    page.evaluate(WATCH)
    page.evaluate(SEND, "go")
    last = f"{chunks - 1:03d}"
    until(page, f"'{last}' in window.__benchStream.painted", 60)
    seen = page.evaluate(COLLECT)
    offset = float(seen["offset"])  # page clock → wall clock (what time.time() reads)
    dom = {k: (t + offset) / 1000 - srv.sent[k] for k, t in seen["dom"].items() if k in srv.sent}
    painted = {k: (t + offset) / 1000 - srv.sent[k] for k, t in seen["painted"].items() if k in srv.sent}
    until(page, "document.getElementById('stop').hidden", 30)  # the turn has ended
    ws = {k: (t + offset) / 1000 - srv.sent[k] for k, t in seen["ws"].items() if k in srv.sent}
    core = {k: (t - srv.sent[k]) * 1000 for k, t in emitted.items() if k in srv.sent}
    return (core, {k: v * 1000 for k, v in ws.items()}, {k: v * 1000 for k, v in dom.items()},
            {k: v * 1000 for k, v in painted.items()})


def run(ctx: Context) -> list[Result]:
    """Turns in turn: a bare HTTP client, a bare page painting the stream, and Moka's page."""
    turns, chunks, gap = ctx.pick(1, 5), ctx.pick(20, 40), 0.03
    direct: list[float] = []
    bare_dom: list[float] = []
    bare_painted: list[float] = []
    dom: list[float] = []
    painted: list[float] = []
    emitted: list[float] = []
    arrived: list[float] = []
    frames: list[float] = []
    with StampedOpenAI() as srv, workspace({}) as ws:
        config = {"mcpServers": {}, "agent": {"backend": "ollama", "model": "fake-model",
                                               "baseUrls": {"ollama": srv.base_url}}}
        ws.paths.config_file.write_text(json.dumps(config), encoding="utf-8")
        ctx.log(f"streaming: {turns} turn(s) of {chunks} chunks; a bare client, a bare page and Moka's page in turns")
        core = Core.start(ws.paths)
        browser = None
        try:
            browser = Chromium()
            browser.page.add_init_script(WS_PROBE)
            browser.page.add_init_script(FRAME_FLAG)
            browser.open(core.web.url + "#chat")
            core.wait_hello()
            browser.page.wait_for_selector("#composer", state="visible", timeout=30000)
            frames = browser.page.evaluate(FRAMES)
            bare = browser.browser.new_page(viewport=browser.page.viewport_size)
            bare.add_init_script(FRAME_FLAG)
            bare.goto(srv.url + "/bench/bare", wait_until="load")
            stamps = core_stamps(core)
            direct_turn(srv, 3, 0.0)  # warm-up of every path, not counted
            bare.bring_to_front()
            bare_turn(bare, srv, 3, gap)
            browser.page.bring_to_front()
            moka_turn(browser, srv, 3, gap, stamps)
            for _ in range(turns):
                direct += direct_turn(srv, chunks, gap).values()
                bare.bring_to_front()  # a page in front gets its frames at the display's rate
                bd, bp = bare_turn(bare, srv, chunks, gap)
                bare_dom += bd.values()
                bare_painted += bp.values()
                browser.page.bring_to_front()
                c, w, d, p = moka_turn(browser, srv, chunks, gap, stamps)
                emitted += c.values()
                arrived += w.values()
                dom += d.values()
                painted += p.values()
        finally:
            if browser is not None:
                browser.close()
            core.stop()
    ref = "the provider's own stream: a bare HTTP client, chunk left the socket → arrived"
    bare_ref = "a bare page on the provider's origin painting the same stream (fetch, text appended)"
    return [Result("streaming.painted", "Chat streaming: chunk leaves the provider's socket → its text painted (browser mode)",
                   "ms", painted, reference=bare_painted, reference_title=bare_ref, target=TARGET, target_on="difference",
                   notes=f"{chunks} chunks {gap * 1000:.0f} ms apart per turn; painted = a task posted from the first "
                         "frame that shows the token, run after that frame's paint, in both pages; frames come at the "
                         "display's rate (frame interval in extra); Playwright's Chromium",
                   extra={"median_ms": {"core_emitted": _median(emitted), "in_page_js": _median(arrived),
                                        "in_dom": _median(dom), "bare_page_in_dom": _median(bare_dom),
                                        "bare_client": _median(direct)},
                          "page_frame_interval_median_ms": _median(frames)}),
            Result("streaming.dom", "Chat streaming: chunk leaves the provider's socket → its text in the DOM",
                   "ms", dom, reference=bare_dom, reference_title=bare_ref),
            Result("streaming.page", "Chat streaming: chunk leaves the provider's socket → its WebSocket message in the page",
                   "ms", arrived, reference=direct, reference_title=ref,
                   notes="a first message listener on the page's WebSocket, before Moka's own"),
            Result("streaming.core", "Chat streaming: chunk leaves the provider's socket → the core emits chat.delta",
                   "ms", emitted, reference=direct, reference_title=ref,
                   notes="the model SDK's stream parsing and the chat engine, before the WebSocket push")]


def _median(xs: list[float]) -> float | None:
    return round(statistics.median(xs), 2) if xs else None
