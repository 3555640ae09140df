"""Moka's core in this process (on its own thread, as the desktop shell runs it), a headless
Chromium showing Moka's real UI page, and one fresh view rendered and timed."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

from moka_shell.core.views.view import View
from moka_shell.paths import Paths
from moka_shell.shells.core_thread import CoreThread

from bench.env import CHROMIUM, CHROMIUM_ARGS

T = TypeVar("T")
VIEWPORT_SIZE = (1180, 820)  # the desktop window's default size

# Runs in every frame of the page. In a view's frame it notes (epoch ms) when tool-result arrived
# and the next frame painted, so "the view has it" is measured where the view lives.
IN_VIEW_PROBE = """(function () {
  if (window.top === window) return;
  var now = function () { return performance.timeOrigin + performance.now(); };
  window.__mokaBench = {};
  addEventListener("message", function (e) {
    var m = e.data, s = window.__mokaBench;
    if (m && m.method === "ui/notifications/tool-result" && !s.result) {
      s.result = now();
      requestAnimationFrame(function () { s.painted = now(); });
    }
  }, true);
})();"""


class Core:
    """A started CoreThread, with a hook that notes when the UI page said app.hello."""

    def __init__(self, thread: CoreThread) -> None:
        self.thread = thread
        assert self.thread.app is not None and self.thread.web is not None
        self.app = self.thread.app
        self.web = self.thread.web
        self.hellos: list[float] = []
        hook_hello(self.web, self.hellos)

    @classmethod
    def start(cls, paths: Paths, *, mode: str = "browser", store: bool = True) -> Core:
        """Start a core for these paths on a thread of its own."""
        thread = CoreThread(paths, mode=mode, store=store)
        thread.start()
        return cls(thread)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 120) -> T:
        """Run a coroutine on the core loop and wait for it."""
        return self.thread.submit(coro).result(timeout)

    def wait_servers(self, timeout: float = 60) -> None:
        """Wait until every configured server is ready; raise naming the ones that are not."""
        self.run(self.app.servers.wait_ready(timeout=timeout), timeout + 5)
        bad = {n: (c.status, c.error) for n, c in self.app.servers.connections.items() if c.status != "ready"}
        if bad:
            raise RuntimeError(f"servers not ready: {bad}")

    def wait_hello(self, count: int = 1, timeout: float = 30) -> None:
        """Wait until the UI page has booted (its app.hello reached the core)."""
        deadline = time.monotonic() + timeout
        while len(self.hellos) < count:
            if time.monotonic() > deadline:
                raise TimeoutError("the UI page never said app.hello")
            time.sleep(0.01)

    def stop(self) -> None:
        """Stop the core (views torn down, servers stopped)."""
        self.thread.stop()


def hook_hello(web: Any, stamps: list[float]) -> None:
    """Wrap the bridge's app.hello so each call notes time.time()."""
    original = web.bridge.methods["app.hello"]

    async def hello(params: dict[str, Any]) -> Any:
        stamps.append(time.time())
        return await original(params)

    web.bridge.methods["app.hello"] = hello


class Chromium:
    """Playwright's Chromium with one page, the size of the desktop window."""

    def __init__(self) -> None:
        from playwright.sync_api import sync_playwright

        self._pw = sync_playwright().start()
        self.browser = self._pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        width, height = VIEWPORT_SIZE
        self.page = self.browser.new_page(viewport={"width": width, "height": height})
        self.page.add_init_script(IN_VIEW_PROBE)

    def open(self, url: str) -> None:
        """Load a URL (Moka's UI, with its token)."""
        self.page.goto(url, wait_until="domcontentloaded")

    def view_probe(self, view_id: str) -> dict[str, float]:
        """What IN_VIEW_PROBE noted inside this view's frame."""
        self.page.wait_for_timeout(5)  # the sync API learns about new frames only while it runs
        for frame in self.page.frames:
            if f"/view/{view_id}" in frame.url:
                try:
                    return frame.evaluate("window.__mokaBench || {}") or {}
                except Exception:  # the frame went away meanwhile
                    return {}
        return {}

    def close(self) -> None:
        """Close the browser and the driver."""
        try:
            self.browser.close()
        finally:
            self._pw.stop()


class PlainChromium:
    """Chromium showing Moka's page with no automation attached, as a person's browser would.

    Playwright attaches to every new frame process and sets it up before it may run, which
    added 25–60 ms to each fresh view here; timings in this browser come from the core.
    """

    def __init__(self, url: str) -> None:
        width, height = VIEWPORT_SIZE
        # Its helpers may still write to the profile for a moment after the browser exits.
        self._profile = tempfile.TemporaryDirectory(prefix="moka-bench-chromium-", ignore_cleanup_errors=True)
        # A session of its own, so close() can stop the browser's helper processes too.
        self.proc = subprocess.Popen([CHROMIUM, "--headless=new", *CHROMIUM_ARGS, f"--user-data-dir={self._profile.name}",
                                      f"--window-size={width},{height}", url],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    def close(self) -> None:
        """Stop the browser and its helpers, and remove its profile."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        for _ in range(20):  # the helpers exit just after the browser; wait for the group to empty
            try:
                os.killpg(self.proc.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        self._profile.cleanup()


@contextlib.contextmanager
def core_with_page(ws_paths: Paths, *, playwright: bool = False) -> Iterator[tuple[Core, Chromium | None]]:
    """A core with its servers ready and Moka's page booted on the Tool runner.

    By default the page is in a plain Chromium (browser mode as people run it; timings come
    from the core); with ``playwright`` it is in Playwright's, which can look inside frames.
    """
    core = Core.start(ws_paths)
    browser: Chromium | PlainChromium | None = None
    try:
        core.wait_servers()
        url = core.web.url + "#runner"
        if playwright:
            browser = Chromium()
            browser.open(url)
        else:
            browser = PlainChromium(url)
        core.wait_hello()
        yield core, browser if isinstance(browser, Chromium) else None
    finally:
        if browser is not None:
            browser.close()
        core.stop()


def render_once(core: Core, server: str, tool: str, args: dict[str, Any], *, browser: Chromium | None = None,
                timeout: float = 30, keep: bool = False, premount: bool = False) -> dict[str, Any]:
    """Call a UI tool with a fresh view and time it until the initialized view got the result.

    With ``premount`` the view is opened and initialized first, as in a chat turn, and then the
    tool is called for it.

    Returns milliseconds from the tool call: ``initialized``, ``result_ready``, ``result_sent``,
    ``in_view`` (Chromium only: the view's own clock), and ``wait`` = result available → posted.
    """

    ready: View | None = None
    if premount:  # the chat's path: the view mounts while the model streams the call
        ready = core.run(core.app.view_host.open_view(server, tool))
        assert ready is not None, f"{server}/{tool} has no view"
        deadline = time.monotonic() + timeout
        while not ready.initialized and ready.state != "failed" and time.monotonic() < deadline:
            time.sleep(0.005)

    async def call() -> View:
        start, start_epoch = time.perf_counter(), time.time()
        _cid, view, _result = await core.app.view_host.run_tool(server, tool, args, view=ready)
        assert view is not None, f"{server}/{tool} has no view"
        view.timings["bench_t0"] = start
        view.timings["bench_epoch"] = start_epoch
        return view

    future = core.thread.submit(call())
    deadline = time.monotonic() + timeout
    view: View | None = None
    while time.monotonic() < deadline:
        if view is None and future.done():
            view = future.result()
        if view is not None and ("result_sent" in view.timings or view.state == "failed"):
            break
        time.sleep(0.002)
    if view is None or "result_sent" not in view.timings:
        state = view.state if view else "no view"
        raise RuntimeError(f"{server}/{tool}: the view did not get its result in {timeout:g} s ({state}; "
                           f"{view.failure if view else ''})")
    t = view.timings
    t0 = t["bench_t0"]
    out: dict[str, Any] = {k: (t[k] - t0) * 1000 for k in ("mounted", "proxy_ready", "document", "initialize", "initialized",
                                                          "result_ready", "result_sent") if k in t}
    out["wait"] = out["result_sent"] - out["result_ready"]
    if browser is not None:
        deadline = time.monotonic() + 3
        probe: dict[str, float] = {}
        while time.monotonic() < deadline and "painted" not in probe:
            probe = browser.view_probe(view.id)
        if probe.get("result"):
            out["in_view"] = probe["result"] - t["bench_epoch"] * 1000
            out["in_view_wait"] = out["in_view"] - out["result_ready"]
        if probe.get("painted"):
            out["painted"] = probe["painted"] - t["bench_epoch"] * 1000
    out["view"] = view.id
    if not keep:
        core.run(core.app.view_host.close(view, "benchmark done"), 15)
    return out


def run_desktop_probe(env: dict[str, str], task: str, spec: dict[str, Any] | None = None,
                      timeout: float = 120, flags: str = "") -> dict[str, Any]:
    """Start the desktop app offscreen with the probe (bench/desktop_probe.py); returns its report.

    ``flags`` are Chromium flags added to QtWebEngine's (A/B runs). ``spawned`` is time.time()
    just before the process was started.
    """
    import json
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    from bench.env import QT_ENV, ROOT

    with tempfile.TemporaryDirectory(prefix="moka-probe-") as tmp:
        out = Path(tmp) / "out.json"
        cmd = [sys.executable, "-m", "bench.desktop_probe", task, str(out), json.dumps(spec or {})]
        spawned = time.time()
        qt = {**QT_ENV, "QTWEBENGINE_CHROMIUM_FLAGS": f"{QT_ENV['QTWEBENGINE_CHROMIUM_FLAGS']} {flags}".strip()}
        proc = subprocess.run(cmd, cwd=ROOT, env={**env, **qt}, timeout=timeout,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        exited = time.time()
        if not out.exists():
            raise RuntimeError(f"the desktop probe wrote nothing (rc {proc.returncode}): {proc.stderr[-2000:]}")
        report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    if "error" in report:
        raise RuntimeError(f"the desktop probe failed: {report['error']}")
    report.update(spawned=spawned, exited=exited, returncode=proc.returncode)
    return report
