"""The benchmark's surroundings: throwaway config and data dirs, the servers it uses, the machine."""

from __future__ import annotations

import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from moka_shell.paths import Paths

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
NPM_BIN = ROOT / "tests" / "npm" / "node_modules" / ".bin"
PYTHON = sys.executable
MOKA = str(Path(sys.executable).with_name("moka"))  # the console script of this venv
QT_ENV = {"QT_QPA_PLATFORM": "offscreen", "QTWEBENGINE_CHROMIUM_FLAGS": "--no-sandbox"}
CHROMIUM = os.environ.get("MOKA_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]


def bench_stdio() -> dict[str, Any]:
    """The bench server over stdio."""
    return {"command": PYTHON, "args": [str(BENCH / "bench_server.py")]}


def demo() -> dict[str, Any]:
    """The bundled demo server, started the way a new install starts it."""
    return {"command": "moka", "args": ["demo-server"]}


def npm(bin_name: str) -> dict[str, Any]:
    """An official example server over stdio, with Moka's default CSP (no eval)."""
    path = NPM_BIN / bin_name
    if not path.exists():
        raise RuntimeError(f"{path} is missing (install the npm example servers: MOKA_SETUP_TEST=1 scripts/setup.sh)")
    return {"command": "node", "args": [str(path), "--stdio"]}


def free_port() -> int:
    """A free loopback port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Workspace:
    """A config file and data dir of the benchmark's own, removed afterwards."""

    def __init__(self, servers: dict[str, dict[str, Any]], *, backend: str | None = None) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="moka-bench-"))
        config: dict[str, Any] = {"mcpServers": servers}
        if backend:
            config["agent"] = {"backend": backend}
        (self.dir / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
        self.paths = Paths(self.dir / "config.json", self.dir / "data")

    def env(self, **extra: str) -> dict[str, str]:
        """Environment for a Moka subprocess that uses this workspace."""
        return {**os.environ, "MOKA_CONFIG": str(self.paths.config_file), "MOKA_DATA_DIR": str(self.paths.data_dir),
                "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring", **extra}

    def remove(self) -> None:
        """Delete everything."""
        shutil.rmtree(self.dir, ignore_errors=True)


@contextmanager
def workspace(servers: dict[str, dict[str, Any]], **kw: Any) -> Iterator[Workspace]:
    """A Workspace for the duration of a with block."""
    ws = Workspace(servers, **kw)
    try:
        yield ws
    finally:
        ws.remove()


@contextmanager
def http_bench_server() -> Iterator[str]:
    """The bench server over streamable HTTP on a free port; yields its URL."""
    port = free_port()
    proc = subprocess.Popen([PYTHON, str(BENCH / "bench_server.py"), "--http", str(port), "--ttl", "900"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_http(f"http://127.0.0.1:{port}/", 30, proc)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()


def wait_http(url: str, timeout: float, proc: subprocess.Popen[Any] | None = None) -> None:
    """Wait until something answers HTTP at url (any status)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            urllib.request.urlopen(url, timeout=1).close()
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing answered at {url}")


def _version(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "?"


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    from PyQt6.QtCore import QLibraryInfo
    from PyQt6.QtWebEngineCore import qWebEngineChromiumVersion

    mem_kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                  if line.startswith("MemTotal"))
    os_name = next((line.split("=", 1)[1].strip('"') for line in Path("/etc/os-release").read_text().splitlines()
                    if line.startswith("PRETTY_NAME=")), platform.platform())
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    return {"os": os_name, "kernel": platform.release(), "cpu": cpu, "cores": os.cpu_count(),
            "ram_gib": round(mem_kb / 1024 / 1024, 1), "python": platform.python_version(),
            "mcp": _pkg_version("mcp"), "pywebview": _pkg_version("pywebview"), "pyqt6": _pkg_version("PyQt6"),
            "qt": QLibraryInfo.version().toString(), "qtwebengine_chromium": qWebEngineChromiumVersion(),
            "playwright": _pkg_version("playwright"), "chromium": _version([CHROMIUM, "--version"]),
            "node": _version(["node", "--version"]), "load_avg_at_start": [round(x, 2) for x in os.getloadavg()]}


def _pkg_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "?"
