"""The test OAuth server (tests/servers/oauth_server.py) as a fixture, and a stand-in for the person's browser."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from support import free_port

SERVERS = Path(__file__).resolve().parent / "servers"


class OAuthServer:
    """A running protected MCP server with its authorization server."""

    def __init__(self, port: int, proc: subprocess.Popen[bytes]) -> None:
        self.port, self.proc = port, proc
        self.base = f"http://127.0.0.1:{port}"
        self.url = f"{self.base}/mcp"
        self.issuer = f"{self.base}/as"

    def state(self) -> dict[str, Any]:
        """What the server saw and issued."""
        return httpx2.get(f"{self.base}/test/state").json()  # type: ignore[no-any-return]

    def configure(self, **changes: Any) -> None:
        """Change token lifetime (``ttl``) or send a wrong ``iss`` (``bad_iss``)."""
        httpx2.post(f"{self.base}/test/config", json=changes).raise_for_status()

    def revoke_all(self) -> None:
        """Revoke every token it issued (as an administrator would)."""
        httpx2.post(f"{self.base}/test/revoke-all").raise_for_status()

    def secrets(self) -> list[str]:
        """Every access and refresh token it ever issued."""
        s = self.state()
        return sorted(set(s["access_tokens"]) | set(s["refresh_tokens"]) | set(s["revoked"]))


@pytest.fixture
def oauth_server() -> Iterator[OAuthServer]:
    """Start tests/servers/oauth_server.py on a free port; stop it after the test."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(SERVERS / "oauth_server.py"), str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = OAuthServer(port, proc)
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx2.get(f"{server.base}/test/state", timeout=1)
            break
        except httpx2.HTTPError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise RuntimeError("the test OAuth server did not start")
            time.sleep(0.1)
    try:
        yield server
    finally:
        proc.terminate()
        proc.wait(10)


def browse(url: str) -> httpx2.Response:
    """What the person's browser does with the authorization URL: follow the redirects back to Moka."""
    return httpx2.get(url, follow_redirects=True, timeout=30)
