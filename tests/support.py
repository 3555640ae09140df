"""Helpers shared by the tests: where the test servers and npm example servers are, a server manager, until()
(and until_sync() for a test without an event loop)."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

if TYPE_CHECKING:
    from moka_shell.config import ServerConfig
    from moka_shell.core.chat.backends import AgentBackend, AgentEvent, AgentRequest
    from moka_shell.core.mcp.servers import ServerManager
    from moka_shell.inspector import Inspector
    from moka_shell.testing._fake_base import FakeServerBase

    F = TypeVar("F", bound=FakeServerBase)

ROOT = Path(__file__).resolve().parent.parent
SERVERS = Path(__file__).resolve().parent / "servers"
NPM_BIN = ROOT / "tests" / "npm" / "node_modules" / ".bin"
T = TypeVar("T")


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


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (for a server child to take, or to find refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_listening(port: int, process: subprocess.Popen[bytes] | None = None, timeout: float = 60.0) -> None:
    """Wait until a server child listens on 127.0.0.1:``port``; fail at once if ``process`` ended first.

    A child importing the SDK takes seconds on a loaded machine: ``timeout`` bounds the wait generously.
    """
    deadline = time.monotonic() + timeout
    while True:
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the server on port {port} exited with {process.returncode} before it listened")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        if time.monotonic() > deadline:
            raise AssertionError(f"nothing listens on 127.0.0.1:{port} after {timeout:g} s")
        time.sleep(0.05)


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


def fake_provider(make: Callable[[], F]) -> Any:
    """A pytest fixture: the fake model server ``make()`` builds, running for one test (the backend tests' ``srv``)."""

    @pytest.fixture
    def srv() -> Iterator[F]:
        with make() as server:
            yield server

    return srv


def ask(server: FakeServerBase, model: str, text: str = "hi", **fields: Any) -> AgentRequest:
    """A request to the fake provider ``server`` with the key it expects: ``text`` as the one user message
    unless ``messages`` is given."""
    from moka_shell.core.chat.backends import AgentRequest, ChatMessage

    fields.setdefault("messages", [ChatMessage(role="user", content=text)])
    return AgentRequest(model=model, api_key=server.api_key, base_url=server.base_url, **fields)


async def streamed(backend: AgentBackend, request: AgentRequest) -> list[AgentEvent]:
    """Every event ``backend`` streams for ``request``."""
    return [event async for event in backend.stream(request)]


async def until(check: Callable[[], T], what: str = "the condition", timeout: float = 30.0) -> T:
    """Wait until ``check()`` is truthy and return what it returned; AssertionError naming ``what`` if it never is.

    ``timeout`` bounds the wait on a loaded machine; it is not an assertion about time.
    """
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened within {timeout:g} s: {what}")
        await asyncio.sleep(0.01)
    return value


def until_sync(check: Callable[[], T], what: str = "the condition", timeout: float = 30.0) -> T:
    """``until`` for a test that runs no event loop (it drives a ``moka serve`` process from threads):
    the same wait, with ``time.sleep`` between looks."""
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened within {timeout:g} s: {what}")
        time.sleep(0.02)
    return value
