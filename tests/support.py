"""Helpers shared by the tests: where the test servers and npm example servers are, a server manager, until()."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from moka_shell.config import ServerConfig
    from moka_shell.core.mcp.servers import ServerManager
    from moka_shell.inspector import Inspector

ROOT = Path(__file__).resolve().parent.parent
SERVERS = Path(__file__).resolve().parent / "servers"
NPM_BIN = ROOT / "tests" / "npm" / "node_modules" / ".bin"


def server_script(name: str) -> list[str]:
    """Command to start one of the test servers in tests/servers."""
    return [sys.executable, str(SERVERS / name)]


def npm_server(bin_name: str) -> str:
    """Path of an npm example server's bin; skips when the npm packages are not installed."""
    path = NPM_BIN / bin_name
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing: scripts/setup.sh should have installed the npm example servers")
        pytest.skip(f"{bin_name} not installed (run MOKA_SETUP_TEST=1 scripts/setup.sh)")
    return str(path)


def node() -> str:
    """The node binary (the example servers need it)."""
    found = shutil.which("node")
    if not found:
        pytest.skip("node is not installed")
    return found


def stdio(script: str, *args: str, cwd: str | None = None) -> ServerConfig:
    """A stdio server config that starts one of the test servers in tests/servers."""
    from moka_shell.config import ServerConfig

    cmd = server_script(script)
    return ServerConfig(command=cmd[0], args=[*cmd[1:], *args], cwd=cwd)


def manager(inspector: Inspector, connect_timeout: float | None = None) -> ServerManager:
    """A ServerManager with the built-in transports and no installed plugins."""
    from moka_shell.core.mcp.servers import ServerManager
    from moka_shell.plugins import PluginHost

    host = PluginHost(load_entrypoints=False)
    return ServerManager(host.collect("register_transports", "transport_id"), inspector,
                         connect_timeout=connect_timeout)


async def until(check: Any, timeout: float = 30.0) -> None:
    """Wait until ``check()`` is true (a bound on waiting, not an assertion about time)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.02)
