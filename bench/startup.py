"""Cold start to interactive.

Desktop: from spawning the desktop app (offscreen Qt) until its page has booted and called
``app.hello`` (bench/desktop_probe.py notes it). Reference: a bare pywebview window loading one
page (bench/bare_webview.py). Browser mode: from spawning ``moka serve`` until the UI page is
served, and until the demo server is ready. The page cache is warm: these are repeated starts.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench.context import Context
from bench.env import MOKA, QT_ENV, ROOT, demo, workspace
from bench.harness import run_desktop_probe
from bench.stats import Result, Target

TARGET = Target(1500, "under 1.5 s")


def bare_webview(env: dict[str, str]) -> float | None:
    """ms from spawning a bare pywebview window to its page's first js_api call (None: it hung)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        spawned = time.time()
        try:
            subprocess.run([sys.executable, "-m", "bench.bare_webview", str(out)], cwd=ROOT, env={**env, **QT_ENV},
                           timeout=20, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            pass  # seen once in many runs; the reference then has one sample less
        if not out.exists():
            return None
        return (json.loads(out.read_text())["hello"] - spawned) * 1000


def desktop(env: dict[str, str]) -> dict[str, float]:
    """ms from spawn to app.hello."""
    report = run_desktop_probe(env, "start", timeout=90)
    return {"spawn": (report["hello"] - report["spawned"]) * 1000}


def rpc(url: str, token: str, method: str) -> Any:
    """One Bridge call over browser mode's token-guarded HTTP endpoint."""
    req = urllib.request.Request(url + "/api/rpc", data=json.dumps({"id": 1, "method": method}).encode(),
                                 headers={"x-moka-token": token, "content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as resp:
        return json.loads(resp.read())["result"]


def browser(env: dict[str, str]) -> dict[str, float]:
    """ms from spawning ``moka serve`` to the page served, and to the demo server ready."""
    spawned = time.time()
    proc = subprocess.Popen([MOKA, "serve"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        found = None
        for line in proc.stdout:
            found = re.search(r"running at (http://[^/]+)/\?token=(\S+)", line)
            if found:
                break
        if found is None:
            raise RuntimeError("moka serve printed no URL")
        origin, token = found.group(1), found.group(2)
        with urllib.request.urlopen(f"{origin}/?token={token}", timeout=10) as resp:
            resp.read()
        page = time.time()
        deadline = time.monotonic() + 60
        while not all(s["status"] == "ready" for s in rpc(origin, token, "servers.list")):
            if time.monotonic() > deadline:
                raise TimeoutError("the demo server never got ready")
            time.sleep(0.01)
        ready = time.time()
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
    return {"page": (page - spawned) * 1000, "ready": (ready - spawned) * 1000}


def run(ctx: Context) -> list[Result]:
    """Repeated starts, interleaved so drift in the machine's load hits all of them alike."""
    repeat = ctx.pick(2, 7)
    runs: dict[str, list[dict[str, float]]] = {"desktop": [], "browser": []}
    bare: list[float] = []
    with workspace({"moka-demo": demo()}) as ws:
        env = ws.env()
        ctx.log(f"startup: {repeat} desktop, browser and bare-webview starts")
        browser(env)  # first run creates the data dir and compiles nothing new: not counted
        for _ in range(repeat):
            runs["desktop"].append(desktop(env))
            runs["browser"].append(browser(env))
            ms = bare_webview(env)
            if ms is not None:
                bare.append(ms)
    return [
        Result("startup.desktop", "Cold start to interactive, desktop shell (spawn → page booted)", "ms",
               [r["spawn"] for r in runs["desktop"]], reference=bare, reference_title="bare pywebview window, one page",
               target=TARGET, notes="offscreen Qt; warm page cache; readiness = the page's app.hello reaching the core"),
        Result("startup.browser.page", "Cold start, browser mode (spawn → UI page served)", "ms",
               [r["page"] for r in runs["browser"]]),
        Result("startup.browser.ready", "Cold start, browser mode (spawn → demo server ready)", "ms",
               [r["ready"] for r in runs["browser"]]),
    ]
