"""Bounds: Moka's memory and disk under the floods of findings R1.8, R5.3 and R1.7, each against its cap.

Each scenario runs a fresh ``moka serve`` (so its peak RSS, VmHWM, is the scenario's own) on a
throwaway workspace with tests/servers/bounds_server.py, and drives it over /api/rpc:

- stderr without a newline: the server prints N MB as one endless line (full: 1 GB);
- UI runs: N ``tools.run`` of a UI tool with a 3 MB result whose views nobody mounts (full: 120),
  then the wait for the handshake deadline (20 s) and the release grace (10 s);
- stderr in lines: N MB of 1 KB lines (full: 2 GB), then the inspector log's size on disk.

Quick mode runs the first and the last at 16 and 24 MB (about 10 s) and skips the UI runs (they wait 30 s).
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from bench.context import Context
from bench.env import MOKA, PYTHON, ROOT, workspace
from bench.stats import Result, Target

SERVER = {"command": PYTHON, "args": [str(ROOT / "tests" / "servers" / "bounds_server.py")]}
MB = 1 << 20


def status_kb(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak) of one process, in kB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0])
    return out


class Serve:
    """``moka serve`` on a workspace, called over /api/rpc with its token."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([MOKA, "serve"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True)
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("Moka is running at "):
                url = urllib.parse.urlsplit(line.split(" at ", 1)[1].strip())
                self.base = f"{url.scheme}://{url.netloc}"
                self.token = urllib.parse.parse_qs(url.query)["token"][0]
                break
        else:
            raise RuntimeError("moka serve ended before printing its URL")

    def rpc(self, method: str, params: dict[str, Any] | None = None, timeout: float = 600) -> tuple[Any, int]:
        """The result and the reply's size in bytes (RuntimeError on an error reply)."""
        req = urllib.request.Request(f"{self.base}/api/rpc", method="POST",
                                     data=json.dumps({"id": 1, "method": method, "params": params or {}}).encode(),
                                     headers={"X-Moka-Token": self.token, "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = resp.read()
        reply = json.loads(body)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"], len(body)

    def wait_ready(self, timeout: float = 60) -> None:
        """Until the bounds server is ready."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            infos, _size = self.rpc("servers.list")
            if all(i["status"] == "ready" for i in infos):
                return
            time.sleep(0.1)
        raise TimeoutError("the bounds server did not connect")

    def mem_mib(self) -> dict[str, float]:
        """RSS now and at its peak, MiB."""
        kb = status_kb(self.proc.pid)
        return {"rss": kb["VmRSS"] / 1024, "peak": kb["VmHWM"] / 1024}

    def stop(self) -> None:
        """SIGTERM and wait."""
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def folder_mib(folder: Path) -> float:
    """Bytes of the files under ``folder``, MiB."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / MB


def no_newline(ctx: Context, mb: int) -> list[Result]:
    """R1.8: a server prints ``mb`` MB without a newline."""
    with workspace({"bounds": SERVER}) as ws:
        moka = Serve(ws.env())
        try:
            moka.wait_ready()
            before = moka.mem_mib()
            ctx.log(f"bounds: {mb} MB of stderr without a newline")
            for _ in range(max(1, mb // 256)):
                moka.rpc("tools.run", {"server": "bounds", "tool": "stderr",
                                       "arguments": {"mb": min(mb, 256), "newline": False}})
            after = moka.mem_mib()
            _infos, list_bytes = moka.rpc("servers.list")
        finally:
            moka.stop()
    grew = after["peak"] - before["rss"]
    return [Result("bounds_stderr_no_newline", f"RSS peak growth, {mb} MB of stderr with no newline", "MiB", [grew],
                   target=Target(64, "peak RSS within 64 MiB of the start (lines cut at 2,000 chars, 64 KiB tail)"),
                   notes=f"RSS {before['rss']:.0f} → {after['rss']:.0f} MiB, peak {after['peak']:.0f}; "
                         f"servers.list reply {list_bytes} bytes",
                   extra={"before": before, "after": after, "servers_list_bytes": list_bytes})]


def ui_runs(ctx: Context, runs: int) -> list[Result]:
    """R5.3: ``runs`` UI tool runs with 3 MB results whose views are never mounted."""
    with workspace({"bounds": SERVER}) as ws:
        moka = Serve(ws.env())
        try:
            moka.wait_ready()
            moka.rpc("tools.run", {"server": "bounds", "tool": "big_view", "arguments": {"mb": 3}})
            time.sleep(32)  # that first view fails its handshake and lets go, so the start is a plateau
            before = moka.mem_mib()
            ctx.log(f"bounds: {runs} UI runs with 3 MB results")
            for _ in range(runs):
                moka.rpc("tools.run", {"server": "bounds", "tool": "big_view", "arguments": {"mb": 3}})
            during = moka.mem_mib()
            time.sleep(20 + 10 + 3)  # the handshake deadline, the release grace, a margin
            after = moka.mem_mib()
        finally:
            moka.stop()
    kept = after["rss"] - before["rss"]
    return [Result("bounds_ui_runs", f"RSS kept after {runs} UI runs of 3 MB (views released)", "MiB", [kept],
                   target=Target(64, "back within 64 MiB of the start once the views ended"),
                   notes=f"RSS {before['rss']:.0f} → {during['rss']:.0f} right after the runs → "
                         f"{after['rss']:.0f} MiB 33 s later; peak {after['peak']:.0f}",
                   extra={"before": before, "during": during, "after": after})]


def stderr_lines(ctx: Context, mb: int, cap_mb: int) -> list[Result]:
    """R1.7: ``mb`` MB of stderr in 1 KB lines; the inspector's log on disk against ``inspector.maxLogMB``."""
    with workspace({"bounds": SERVER}) as ws:
        config = json.loads(ws.paths.config_file.read_text())
        config["inspector"] = {"maxLogMB": cap_mb}
        ws.paths.config_file.write_text(json.dumps(config))
        moka = Serve(ws.env())
        try:
            moka.wait_ready()
            before = moka.mem_mib()
            ctx.log(f"bounds: {mb} MB of stderr in 1 KB lines, log cap {cap_mb} MB")
            started = time.monotonic()
            for _ in range(max(1, mb // 256)):
                moka.rpc("tools.run", {"server": "bounds", "tool": "stderr", "arguments": {"mb": min(mb, 256)}})
            seconds = time.monotonic() - started
            after = moka.mem_mib()
        finally:
            moka.stop()
        log_mib = folder_mib(ws.paths.inspector_dir)
    part = cap_mb / 10  # the writer may hold one part beyond the others while it fills
    return [Result("bounds_inspector_log", f"inspector log on disk after {mb} MB of stderr lines (cap {cap_mb} MB)",
                   "MiB", [log_mib], target=Target(cap_mb + part, f"at most the cap plus one part ({cap_mb + part:g} MiB)"),
                   notes=f"{seconds:.0f} s to drain; Moka RSS {before['rss']:.0f} → {after['rss']:.0f} MiB, "
                         f"peak {after['peak']:.0f}",
                   extra={"before": before, "after": after, "seconds": round(seconds, 1)})]


def run(ctx: Context) -> list[Result]:
    """The bounds suite: small in quick mode, the findings' sizes in full mode."""
    results = no_newline(ctx, ctx.pick(16, 1024))
    if ctx.full:
        results += ui_runs(ctx, 120)
    results += stderr_lines(ctx, ctx.pick(24, 2048), ctx.pick(10, 200))
    return results
