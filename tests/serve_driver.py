"""Drive a real `moka serve` child: start it, read its URL and token, call /api/rpc, stop it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any


class Serve:
    """One `moka serve` process (or another long-running command: `moka dev`) on its own config and data dir."""

    def __init__(self, config: Path, data: Path, *, env: dict[str, str] | None = None,
                 extra_args: list[str] | None = None, command: str = "serve") -> None:
        cmd = [sys.executable, "-m", "moka_shell", "--config", str(config), "--data-dir", str(data), command,
               *(extra_args or [])]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, **(env or {})})
        self.lines: list[str] = []
        self.errors: list[str] = []
        self.url: str | None = None
        self._seen = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            if line.startswith("Moka is running at "):
                self.url = line.split(" at ", 1)[1].strip()
                self._seen.set()
        self._seen.set()

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.errors.append(line.rstrip("\n"))

    def wait_url(self, timeout: float = 60.0) -> str:
        """The UI's URL, once printed (AssertionError with the output if the process ended first)."""
        self._seen.wait(timeout)
        assert self.url is not None, (self.lines, self.errors, self.proc.poll())
        return self.url

    def rpc(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30.0) -> dict[str, Any]:
        """One bridge frame over /api/rpc; the whole JSON-RPC reply."""
        url = urllib.parse.urlsplit(self.wait_url())
        token = urllib.parse.parse_qs(url.query)["token"][0]
        req = urllib.request.Request(f"{url.scheme}://{url.netloc}/api/rpc", method="POST",
                                     data=json.dumps({"id": 1, "method": method, "params": params or {}}).encode(),
                                     headers={"X-Moka-Token": token, "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return dict(json.loads(resp.read()))

    def terminate(self, timeout: float = 30.0) -> int:
        """SIGTERM, then the exit code (SIGKILL and AssertionError if it does not stop)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            raise AssertionError("moka serve did not stop on SIGTERM") from None

    def wait_exit(self, timeout: float = 60.0) -> int:
        """The exit code of a process expected to end on its own."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if self.proc.poll() is None:
            self.proc.kill()
            raise AssertionError("moka serve did not exit")
        time.sleep(0.1)  # let the reader threads take the last lines
        return self.proc.returncode
