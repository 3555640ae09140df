"""The real desktop app (``moka`` with no arguments), run offscreen with a benchmark driver inside.

    python -m bench.desktop_probe TASK OUT.json [SPEC-JSON]

Moka's own code is not changed: the shell's CoreThread is replaced by a subclass that, once the
core is up, wraps the ``app.hello`` bridge method (the page calls it when it has booted) and
starts a driver thread for TASK. The driver writes OUT.json and closes the window.

Tasks: ``start`` (cold start: just the time of app.hello), ``render`` (fresh views, timed),
``bridge`` (the bench view's tools/call round trips), ``memory`` (PSS idle and with views; ``max_live`` in the spec raises the parking limit).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from moka_shell.shells.desktop import run as desktop
from moka_shell.shells.core_thread import CoreThread

# bench.harness (and the core modules it imports) load once the core is up, not before the
# window: the probe must not add to the start-up it measures.
HELLOS: list[float] = []
SERVER_READY: list[float] = []  # when the first server was ready (servers.changed with one "ready")


def window() -> Any:
    """The main pywebview window."""
    import webview

    return webview.windows[0]


def js(script: str) -> Any:
    """Run a script in the main window's page; returns its value.

    ``run_js``, not ``evaluate_js``: pywebview's evaluate_js wraps the script in eval(), which
    Moka's page CSP (script-src 'self') refuses.
    """
    return window().run_js(script)


def wait_hello(count: int = 1, timeout: float = 60) -> None:
    """Wait until the page has booted."""
    deadline = time.monotonic() + timeout
    while len(HELLOS) < count:
        if time.monotonic() > deadline:
            raise TimeoutError("the page never said app.hello")
        time.sleep(0.005)


def drive(core: Any, task: str, spec: dict[str, Any]) -> dict[str, Any]:
    """Run one task; returns what goes into OUT.json."""
    wait_hello()
    if task == "start":
        deadline = time.monotonic() + 60
        while not SERVER_READY and time.monotonic() < deadline:
            time.sleep(0.005)
        return {"hello": HELLOS[0], "server": SERVER_READY[0] if SERVER_READY else None}
    core.wait_servers()
    if task == "render":
        from bench.render import render_series

        js("location.hash = '#runner'")
        time.sleep(0.3)
        return {"views": render_series(core, [tuple(v) for v in spec["views"]], spec["repeat"], browser=None)}
    if task == "bridge":
        from bench.view_roundtrip import interleaved

        js("location.hash = '#runner'")
        time.sleep(0.3)
        rtt, own = interleaved(core, spec["kinds"], spec["calls"], spec["warmup"], spec["blocks"])
        return {"rtt": rtt, "core": own}
    if task == "memory":
        from bench.memory import chat_memory, wait_server_ready

        wait_server_ready(js)
        if spec.get("max_live"):  # from outside: how many views stay live off screen (bench/memory_floor.py)
            core.app.view_host.parking.max_live = int(spec["max_live"])
        out = {"memory": chat_memory(js, [os.getpid()], spec["steps"])}
        if spec.get("after_gc"):  # what of the renderer is garbage V8 has not collected yet
            from bench.memory import measure

            js("typeof gc === 'function' && gc()")
            out["after_gc"] = measure([os.getpid()], settle=2.5)
        if spec.get("after_trim"):  # what of the app process is freed heap glibc has kept
            import ctypes

            from bench.memory import measure

            ctypes.CDLL("libc.so.6").malloc_trim(0)
            out["after_trim"] = measure([os.getpid()], settle=2.5)
        if spec.get("modules"):
            out["modules"] = sorted({m.split(".")[0] for m in sys.modules})
        return out
    raise ValueError(f"unknown task {task!r}")


def note_ready(event: str, data: Any) -> None:
    """Note when a server first reports ready (the core's servers.changed events)."""
    if not SERVER_READY and event == "servers.changed" and any(s.get("status") == "ready" for s in data or ()):
        SERVER_READY.append(time.time())


class ProbeCore(CoreThread):
    """The shell's core thread, plus the benchmark's hook and driver."""

    task = "start"
    out = Path("probe.json")
    spec: dict[str, Any] = {}

    def _on_serving(self, web: Any) -> None:
        # The page may say hello as soon as the core is attached, before start() returns: the hook
        # goes in at attach (no bench.harness import here: it would load the core on this loop).
        real_attach = web.attach

        def attach(app: Any) -> None:
            real_attach(app)
            original = web.bridge.methods["app.hello"]

            async def hello(params: dict[str, Any]) -> Any:
                HELLOS.append(time.time())
                return await original(params)

            web.bridge.methods["app.hello"] = hello
            web._probe_hooked = ("app.hello",)
            app.subscribe(note_ready)

        web.attach = attach
        super()._on_serving(web)

    def start(self, timeout: float = 30.0) -> None:
        super().start(timeout)
        assert self.web is not None
        if "app.hello" not in getattr(self.web, "_probe_hooked", ()):  # a core without the early page
            from bench.harness import hook_hello

            hook_hello(self.web, HELLOS)
            self.web._probe_hooked = ("app.hello",)  # type: ignore[attr-defined]
            self.web.app.subscribe(note_ready)
        threading.Thread(target=self._drive, name="bench-driver", daemon=True).start()

    def _drive(self) -> None:
        from bench.harness import Core

        result: dict[str, Any] = {}
        try:
            result.update(drive(Core(self), self.task, self.spec))
        except BaseException:  # reported to the benchmark, which decides
            result["error"] = traceback.format_exc()
        self.out.write_text(json.dumps(result), encoding="utf-8")
        if self.task == "start":
            os._exit(0)  # only the start-up was measured: skip the orderly shutdown
        window().destroy()


def main() -> int:
    """Run the desktop app with the probe."""
    ProbeCore.task, ProbeCore.out = sys.argv[1], Path(sys.argv[2])
    ProbeCore.spec = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    desktop.CoreThread = ProbeCore  # type: ignore[misc]
    from moka_shell.cli.main import main as moka_main

    return moka_main([])


if __name__ == "__main__":
    sys.exit(main())
