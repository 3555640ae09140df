"""The soak (reliability finding N3): Moka's memory over minutes of steady use, and its slope.

``moka serve`` with two stdio servers: the bench server, whose view calls ``ping`` in a loop, and
a second one that exits by itself every minute (Moka's backoff brings it back). Moka's page is
in Playwright's Chromium; a fake OpenAI-compatible provider (moka_shell.testing) answers the chat
over real HTTP. Four chat turns open four bench views in one conversation, each calling
``tools/call ping`` through the view bridge until the end; then a chat turn goes every 10 s.

Moka's RSS (VmRSS of the ``moka serve`` process) is read every second, the Inspector's ring
(events and characters) every 5 s. The slope is the least-squares line through the second half
of the run (after warm-up), in MiB per minute. Next to it: the ring's own growth, so what grows
by design (the ring fills until its caps) is told apart from what should not grow at all.

Quick mode runs 24 s with a server that exits every 6 s; full mode 5 minutes, exiting every 62 s
(a session of 60 s counts as healthy, so the backoff starts over at 1 s).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from moka_shell.testing.fake_openai import FakeOpenAIServer, Text, ToolCall
from playwright.sync_api import Error as PlaywrightError

from bench.bounds import Serve, status_kb
from bench.context import Context
from bench.env import BENCH, PYTHON, workspace
from bench.harness import Chromium
from bench.memory import SEND, status
from bench.stats import Result, Target

VIEWS = 4
TURN_EVERY = 10.0  # seconds between chat turns
PAUSE_MS = 100  # between one view's calls: about 7 calls/s each on this machine, as in the finding
FLAT = Target(0.5, "under 0.5 MiB/min after warm-up (flat: 2.5 MiB over 5 minutes)")
# What each view counted (its calls and errors), read from inside its frame.
VIEW_COUNTS = "() => ({calls: (window.__bench || {}).calls || 0, errors: (window.__bench || {}).errors || 0, " \
              "lastError: (window.__bench || {}).lastError || null})"


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (x, y) points (0 with fewer than two)."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0


def second_half(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The points after the run's midpoint (the warm-up is the first half)."""
    if not points:
        return []
    mid = (points[0][0] + points[-1][0]) / 2
    return [p for p in points if p[0] >= mid]


# The Inspector's ring grows by design until it is full (5,600 events a minute here): with the
# default 100,000 it fills in ~18 minutes, which a 5-minute soak never reaches. A ring the soak's
# first minute fills leaves the second half to show whether anything else grows.
RING_EVENTS = 5_000


def soak_config(llm_url: str, exit_after: float) -> dict[str, Any]:
    """The workspace's config: the two servers, the fake provider, tool calls run unasked, a small ring."""
    server = str(BENCH / "bench_server.py")
    return {"mcpServers": {"bench": {"command": PYTHON, "args": [server]},
                           "flaky": {"command": PYTHON, "args": [server, "--exit-after", str(exit_after)]}},
            "agent": {"backend": "ollama", "model": "fake-model", "baseUrls": {"ollama": llm_url}},
            "approval": {"mode": "all"}, "inspector": {"ringEvents": RING_EVENTS}}


@dataclass
class Run:
    """What one soak recorded: samples (seconds since the load started) and counters."""

    rss: list[tuple[float, float]] = field(default_factory=list)  # (s, MiB)
    ring: list[tuple[float, int, int]] = field(default_factory=list)  # (s, events, characters)
    turns_sent: int = 0
    turns_failed: int = 0
    generations: list[int] = field(default_factory=list)  # the flaky server's connection generations seen
    views: list[dict[str, Any]] = field(default_factory=list)
    sockets: dict[str, Any] = field(default_factory=dict)


def assistant_messages(page: Any) -> int:
    """How many assistant messages the chat shows (counted in the page: no element handles kept here)."""
    return int(page.evaluate("document.querySelectorAll('.msg-assistant').length"))


def wait_turn(page: Any, before: int, timeout: float = 60) -> bool:
    """Until the chat turn is over; True if it ended with a new assistant message."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = status(page.evaluate)
        if not st["running"] and assistant_messages(page) > before:
            return True
        time.sleep(0.05)
    return False


def open_views(page: Any, llm: FakeOpenAIServer, count: int) -> None:
    """``count`` chat turns whose model calls bench_view in loop mode; each view must come up ready."""
    for i in range(count):
        llm.enqueue([ToolCall("bench_view", {"loop": True, "pause": PAUSE_MS})], [Text(f"view {i + 1} is open")])
        page.evaluate(SEND % json.dumps(f"open bench view {i + 1}"))
        deadline = time.monotonic() + 90
        while True:
            st = status(page.evaluate)
            if not st["running"] and len(st["states"]) > i and st["states"][i] in ("ready", "failed"):
                if st["states"][i] == "failed":
                    raise RuntimeError(f"bench view {i + 1} failed to mount")
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"bench view {i + 1} not ready after 90 s: {st}")
            time.sleep(0.05)


def view_counts(page: Any) -> list[dict[str, Any]]:
    """Each bench view's calls and errors, from its own frame."""
    out = []
    for frame in page.frames:
        if frame.parent_frame is not None and "/view/" in frame.url:
            try:
                out.append(frame.evaluate(VIEW_COUNTS))
            except PlaywrightError:  # the frame went away meanwhile
                continue
    return out


class Probe:
    """Called as the load starts, at its midpoint and at its end (the debug mode traces the heap)."""

    def start(self) -> None:
        """The views are open; the load begins."""

    def mid(self) -> None:
        """The warm-up is over."""

    def end(self) -> None:
        """The load is about to stop."""


class Moka(Protocol):
    """What the soak needs of Moka: its page's URL, its bridge, its process id."""

    pid: int
    url: str

    def rpc(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """A bridge method's result."""


class Served:
    """``moka serve`` in a process of its own (what the published figures measure)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.serve = Serve(env)
        self.pid = self.serve.proc.pid
        self.url = f"{self.serve.base}/?token={self.serve.token}"
        self.serve.wait_ready()

    def rpc(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """A bridge method's result, over /api/rpc."""
        return self.serve.rpc(method, params)[0]

    def stop(self) -> None:
        """SIGTERM and wait."""
        self.serve.stop()


def drive(ctx: Context, moka: Moka, llm: FakeOpenAIServer, seconds: float, probe: Probe | None = None) -> Run:
    """Open the views, then sample and chat until ``seconds`` have passed."""
    run = Run()
    probe = probe or Probe()
    browser = Chromium()
    try:
        page = browser.page
        browser.open(moka.url + "#chat")
        page.wait_for_selector("#composer", timeout=30_000)
        ctx.log(f"soak: opening {VIEWS} looping bench views")
        open_views(page, llm, VIEWS)
        ctx.log(f"soak: {seconds:g} s of load (a chat turn every {TURN_EVERY:g} s)")
        probe.start()
        start = time.monotonic()
        next_turn, next_ring, half = start + TURN_EVERY, start, False
        while (now := time.monotonic()) - start < seconds:
            t = now - start
            run.rss.append((t, status_kb(moka.pid)["VmRSS"] / 1024))
            if not half and t >= seconds / 2:
                probe.mid()
                half = True
            if now >= next_ring:
                ring = moka.rpc("inspector.page", {"limit": 1})
                run.ring.append((t, ring["total"], ring["size"]))
                run.generations += [i["generation"] for i in moka.rpc("servers.list")
                                    if i["name"] == "flaky" and i["status"] == "ready"]
                next_ring += 5
            if now >= next_turn:
                before = assistant_messages(page)
                page.evaluate(SEND % json.dumps(f"turn {run.turns_sent + 1}: how are the views doing?"))
                run.turns_sent += 1
                run.turns_failed += not wait_turn(page, before)
                next_turn += TURN_EVERY
            page.wait_for_timeout(1000 - ((time.monotonic() - start) % 1) * 1000)
        probe.end()
        run.views = view_counts(page)
        run.sockets = moka.rpc("app.sockets")
    finally:
        browser.close()
    return run


def soak_served(ctx: Context, seconds: float, exit_after: float) -> Run:
    """The soak against ``moka serve`` on a throwaway workspace."""
    with FakeOpenAIServer() as llm, workspace({}) as ws:
        ws.paths.config_file.write_text(json.dumps(soak_config(llm.base_url, exit_after)), encoding="utf-8")
        moka = Served(ws.env())
        try:
            return drive(ctx, moka, llm, seconds)
        finally:
            moka.stop()


def results(run: Run, seconds: float, exit_after: float) -> list[Result]:
    """The slope (with the ring's share beside it), the calls, the turns, the restarts and the outbox."""
    per_min = [(t / 60, v) for t, v in run.rss]
    mem = slope(second_half(per_min))
    ring_events = slope(second_half([(t / 60, float(e)) for t, e, _ in run.ring]))
    ring_mib = slope(second_half([(t / 60, c / 2**20) for t, _, c in run.ring]))
    calls = sum(v["calls"] for v in run.views)
    errors = sum(v["errors"] for v in run.views)
    restarts = max(0, len(set(run.generations)) - 1)
    first, last = run.rss[0][1], run.rss[-1][1]
    extra = {"rss_first_mib": round(first, 1), "rss_last_mib": round(last, 1), "rss_peak_mib": round(max(v for _, v in run.rss), 1),
             "ring_events_per_min": round(ring_events), "ring_chars_mib_per_min": round(ring_mib, 2),
             "ring_last": {"events": run.ring[-1][1], "chars": run.ring[-1][2]} if run.ring else {},
             "rss_series": [[round(t), round(v, 1)] for t, v in run.rss[:: max(1, len(run.rss) // 60)]],
             "views": run.views}
    out = [Result("soak.slope", f"Moka RSS slope after warm-up, {seconds:g} s soak", "MiB/min", [mem],
                  target=FLAT, extra=extra,
                  notes=f"RSS {first:.0f} → {last:.0f} MiB; the Inspector's ring (inspector.ringEvents "
                        f"{RING_EVENTS:,}) grew {ring_events:.0f} events/min ({ring_mib:.2f} MiB/min of its lines)"),
           Result("soak.view_calls", f"tools/call ping from {VIEWS} views through the view bridge, {seconds:g} s",
                  "calls", [calls], notes=f"{calls / seconds:.1f} calls/s in all"),
           Result("soak.view_errors", "of those calls, errors", "errors", [errors], target=Target(0.5, "none"),
                  notes="; ".join(sorted({str(v["lastError"]) for v in run.views if v["lastError"]}))[:300]),
           Result("soak.chat_turns", f"chat turns, one every {TURN_EVERY:g} s (fake OpenAI-compatible provider, HTTP)",
                  "turns", [run.turns_sent], notes=f"{run.turns_failed} did not finish in 60 s"),
           Result("soak.server_restarts", f"restarts of the server that exits every {exit_after:g} s", "restarts",
                  [restarts], notes=f"generations seen ready: {sorted(set(run.generations))}")]
    sockets = run.sockets
    out.append(Result("soak.outbox_peak", "the page's socket outbox: the most that waited, against its bound", "KiB",
                      [sockets.get("peak", 0) / 1024],
                      target=Target(sockets.get("limit", 0) / 1024, f"under the bound ({sockets.get('limit', 0) >> 20} Mi "
                                                                   f"characters; live Inspector pushes "
                                                                   f"{sockets.get('liveLimit', 0) >> 20} Mi)"),
                      notes=f"{sockets.get('open', 0)} socket(s) open at the end, {sockets.get('waiting', 0)} characters waiting",
                      extra=sockets))
    return out


def run(ctx: Context) -> list[Result]:
    """24 s in quick mode, 5 minutes in full mode."""
    seconds = ctx.pick(24.0, 300.0)
    exit_after = ctx.pick(6.0, 62.0)
    return results(soak_served(ctx, seconds, exit_after), seconds, exit_after)
