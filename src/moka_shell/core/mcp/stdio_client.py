"""Moka's stdio transport: a child process speaking newline-delimited JSON-RPC, read defensively.

The SDK's ``stdio_client`` rebuilds its buffer for every chunk (quadratic in a long line, so one
50 MB result held the loop for 20 s, finding R1.13), logs a traceback per unparsable line (R1.4)
and has no limit on a line's size. This reader finds newlines in bytes as they arrive (linear),
drops any message over ``MAX_MESSAGE_BYTES`` without building it (a reply is answered with a clear
error for its request id, so the caller does not wait out its timeout), replaces invalid UTF-8 and
reports it (R1.6), and, when the process ends, says how: a line ``EXIT_PREFIX`` + "the server process
exited with code 3" is written to the server's stderr log before that log ends, so the reason is
there when the connection notices the end (R1.9).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any, TextIO

import anyio
import mcp_types as types
from anyio.abc import Process
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared.message import SessionMessage

from moka_shell.core.mcp.stderr import EXIT_PREFIX
from moka_shell.core.mcp.stdio_launch import StdioLaunch, spawn

MAX_MESSAGE_BYTES = 32 * 1024 * 1024  # one JSON-RPC message from a server; bigger ones are dropped unread
HEAD_BYTES = 4096  # what is kept of a dropped message, to find its id
GRACE_SECONDS = 2.0  # after stdin closes, before the process tree is terminated
EXIT_WAIT_SECONDS = 2.0  # after stdout's EOF, for the exit status to be known
_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")')


class StdoutProblem(Exception):
    """Something on the server's stdout that was reported and skipped or repaired (not fatal)."""


def describe_returncode(code: int | None) -> str:
    """'exited with code 3', 'was killed by SIGKILL', or 'is still running'."""
    if code is None:
        return "the server process is still running"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the server process was killed by {name}"
    return f"the server process exited with code {code}"


class _LineReader:
    """Splits a byte stream into lines without copying what came before; caps each line."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._parts: list[bytes] = []
        self._size = 0
        self._head: bytes | None = None  # set while a line over the limit is being dropped

    def feed(self, chunk: bytes) -> list[bytes | tuple[bytes, int]]:
        """Complete lines in ``chunk``: bytes, or ``(head, size)`` for a line that was dropped."""
        out: list[bytes | tuple[bytes, int]] = []
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            piece = chunk[start:] if nl < 0 else chunk[start:nl]
            self._take(piece)
            if nl < 0:
                return out
            out.append(self._finish())
            start = nl + 1

    def _take(self, piece: bytes) -> None:
        self._size += len(piece)
        if self._head is None:
            self._parts.append(piece)
            if self._size > self.limit:
                self._head = b"".join(self._parts)[:HEAD_BYTES]
                self._parts = []
        # else: inside a dropped line, only its size is counted

    def _finish(self) -> bytes | tuple[bytes, int]:
        head, size = self._head, self._size
        line = b"".join(self._parts)
        self._parts, self._size, self._head = [], 0, None
        return (head, size) if head is not None else line


def over_the_cap(size: int | None, limit: int) -> str:
    """'50.0 MiB, over Moka's limit of 32 MiB for one message' (``size`` None: read no further than the cap)."""
    amount = f"{size / 1048576:.1f} MiB" if size is not None else f"more than {limit / 1048576:g} MiB"
    return f"{amount}, over Moka's limit of {limit / 1048576:g} MiB for one message"


def too_large(head: bytes, size: int, limit: int) -> SessionMessage | StdoutProblem:
    """For a dropped message: an error reply to its request, or a report when it was no reply."""
    what = over_the_cap(size, limit)
    found = _ID.search(head)
    if found is None or not (b'"result"' in head or b'"error"' in head):
        return StdoutProblem(f"a message from the server was {what}; it was dropped")
    raw_id: Any = json.loads(found.group(1))
    error = types.ErrorData(code=types.INTERNAL_ERROR,
                            message=f"the server's reply was {what}; Moka dropped it unread")
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=raw_id, error=error))


def parse_line(line: bytes) -> list[SessionMessage | Exception]:
    """One stdout line as the items the session reads: a message, and any problem with it."""
    out: list[SessionMessage | Exception] = []
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = line.decode("utf-8", "replace")
        out.append(StdoutProblem(f"invalid UTF-8 on the server's stdout (byte 0x{line[exc.start]:02x} at "
                                 f"offset {exc.start}); replaced with U+FFFD"))
    if not text.strip():
        return out
    try:
        out.append(SessionMessage(types.jsonrpc_message_adapter.validate_json(text, by_name=False)))
    except ValueError as exc:  # not JSON-RPC: reported (the inspector records it) and skipped
        out.append(StdoutProblem(f"a line on the server's stdout is not JSON-RPC and was skipped "
                                 f"({str(exc).splitlines()[0][:200]}): {text[:120]!r}"))
    return out


async def _wait_exit(process: Process, timeout: float) -> bool:
    with anyio.move_on_after(timeout):
        while process.returncode is None:
            await anyio.sleep(0.02)
    return process.returncode is not None


@asynccontextmanager
async def stdio_streams(launch: StdioLaunch, errlog: TextIO, limit: int = MAX_MESSAGE_BYTES, *,
                        started: Process | None = None) -> AsyncIterator[tuple[Any, Any]]:
    """Start the server (or take ``started``, its process started already) and yield the SDK's stream pair."""
    if sys.platform == "win32" and started is None:  # pragma: no cover - the SDK's Windows process handling (job objects)
        from mcp.client.stdio import StdioServerParameters, stdio_client
        params = StdioServerParameters(command=launch.command, args=launch.args, env=launch.env,
                                       cwd=launch.cwd, encoding_error_handler="replace")
        async with stdio_client(params, errlog=errlog) as pair:
            yield pair
        return
    process = started if started is not None else await spawn(launch, errlog)
    # Our own handle on the stderr log: the exit status is written there, then closed, so the log's
    # end (which tells the connection the server is gone) comes after the reason.
    report_fd: list[int] = [os.dup(errlog.fileno())]
    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](16)

    async def reader() -> None:
        assert process.stdout is not None
        lines = _LineReader(limit)
        async with to_session:
            with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                while True:
                    chunk = await process.stdout.receive()
                    for line in lines.feed(chunk):
                        items = [too_large(*line, limit)] if isinstance(line, tuple) else parse_line(line)
                        for item in items:
                            await to_session.send(item)
            if await _wait_exit(process, EXIT_WAIT_SECONDS):
                _report(report_fd, EXIT_PREFIX + describe_returncode(process.returncode))
            _report(report_fd, None)

    async def writer() -> None:
        assert process.stdin is not None
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async with from_session:
                async for item in from_session:
                    data = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(data.encode("utf-8"))

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process)
                _report(report_fd, None)
                for stream in (read_stream, write_stream):
                    await stream.aclose()
            tg.cancel_scope.cancel()


def _report(fd: list[int], line: str | None) -> None:
    """Write ``line`` to the stderr log; ``None`` closes Moka's handle on it (once)."""
    if not fd:
        return
    with suppress(OSError):
        if line is not None:
            os.write(fd[0], (line + "\n").encode("utf-8"))
            return
        os.close(fd[0])
    fd.clear()


async def _stop(process: Process) -> None:
    """Close stdin (the spec's polite stop), then terminate the process tree if it lingers."""
    assert process.stdin is not None and process.stdout is not None
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    if not await _wait_exit(process, GRACE_SECONDS):
        with suppress(OSError, ProcessLookupError):
            await terminate_posix_process_tree(process, GRACE_SECONDS)
        await _wait_exit(process, GRACE_SECONDS)
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdout.aclose()
