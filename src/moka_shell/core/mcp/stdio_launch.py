"""Starting a stdio server's process, without the MCP SDK: so it can start while the SDK loads.

A stdio server takes about as long to start (its interpreter, its imports) as Moka takes to import
the MCP SDK, and the two need nothing from each other. ``ServerManager.launch_early`` starts the
configured stdio servers' processes first; each connection's first attempt then adopts its
process (``EarlyProcess.streams``) instead of starting one (docs/performance.md §19).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, suppress
from dataclasses import dataclass, field
from typing import Any, TextIO

import anyio
from anyio.abc import Process

from moka_shell.core.mcp.stderr import StderrPipe, StderrTail

# What a server inherits of Moka's environment, besides its config's own ``env`` (the MCP SDK's
# choice on POSIX, kept equal to it by tests/test_stdio_launch.py): nothing that may hold a secret.
INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
DISCARD_WAIT = 2.0  # seconds a process that no connection adopted has to end after SIGTERM


@dataclass
class StdioLaunch:
    """What to start: the program, its arguments, extra environment and working directory."""

    command: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] | None = None
    cwd: str | None = None


def inherited_environment() -> dict[str, str]:
    """The variables of ``INHERITED_ENV`` that are set (shell functions, ``()…``, are left out)."""
    return {k: v for k in INHERITED_ENV if (v := os.environ.get(k)) is not None and not v.startswith("()")}


async def spawn(launch: StdioLaunch, errlog: TextIO) -> Process:
    """Start the server's process in a session of its own (so its whole tree can be ended); stderr to ``errlog``."""
    return await anyio.open_process([launch.command, *launch.args], env=inherited_environment() | (launch.env or {}),
                                    stderr=errlog, cwd=launch.cwd, start_new_session=True)


class EarlyProcess:
    """A server's process started before its connection; adopted once, or discarded (POSIX).

    ``open_streams(errlog)`` gives the transport's streams over this process: its transport's own
    reader, so a connection that adopts it reads it exactly as one it started itself.
    """

    def __init__(self, process: Process,
                 open_streams: Callable[[TextIO], AbstractAsyncContextManager[tuple[Any, Any]]]) -> None:
        self.process = process
        self._open_streams = open_streams

    def streams(self, errlog: TextIO) -> AbstractAsyncContextManager[tuple[Any, Any]]:
        """The transport's streams over this process (what the transport's ``open`` gives for a new one)."""
        return self._open_streams(errlog)

    async def discard(self) -> None:
        """End the process and its children (no connection took it: Moka stopped, or its SDK did not load)."""
        pid = self.process.pid
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGTERM)
        with anyio.move_on_after(DISCARD_WAIT):
            await self.process.wait()
        if self.process.returncode is None:
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            await self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await stream.aclose()


@dataclass
class EarlyStart:
    """A server's process started before the MCP SDK loaded, with its stderr log (``ServerManager.launch_early``)."""

    tail: StderrTail
    pipe: StderrPipe
    process: EarlyProcess

    async def discard(self) -> None:
        """End the process: no connection will adopt it."""
        await self.process.discard()
        self.pipe.close()
