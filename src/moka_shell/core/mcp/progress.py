"""Which call a server is serving, and its progress.

Every tool call carries a progress token: the SDK sends one when ``call_tool`` gets a progress
callback, so a callback is always given. A call scope (a context variable, set by whoever
starts the call: the chat loop, the Tool runner) says which chat card or runner entry the
current task serves, so progress and a server's questions (elicitation) reach the right place.
"""

from __future__ import annotations

import asyncio
import contextvars
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from moka_shell.core.shell import Emit

Where = Literal["chat", "runner", "view"]


class ProgressCallback(Protocol):
    """What the SDK calls with a call's progress (its ``ProgressFnT``, restated so the core loads without the SDK)."""

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        """One progress notification."""
        ...


PROGRESS_INTERVAL = 0.1  # at most ten progress events a second per call reach the UI
MAX_MESSAGE = 500  # a progress message is a status line, not a document
MAX_RUNNING = 256  # calls remembered per server (a bound, far above what runs at once)


@dataclass(frozen=True)
class CallScope:
    """One tool call as the UI knows it: a chat card (``chat``), a runner entry or a view's call."""

    call_id: str
    server: str
    tool: str
    where: Where
    conversation_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The fields every progress and elicitation event carries."""
        out: dict[str, Any] = {"callId": self.call_id, "server": self.server, "tool": self.tool, "where": self.where}
        if self.conversation_id:
            out["conversationId"] = self.conversation_id
        return out


_current: contextvars.ContextVar[CallScope | None] = contextvars.ContextVar("moka_call_scope", default=None)


async def ignore_progress(progress: float, total: float | None, message: str | None) -> None:
    """A progress callback that drops everything (the token is still sent)."""


@dataclass
class _Reporter:
    """Progress of one call, coalesced so a chatty server cannot flood the UI."""

    emit: Emit
    scope: CallScope
    latest: dict[str, Any] | None = None
    last_sent: float = 0.0
    timer: asyncio.TimerHandle | None = field(default=None, repr=False)

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        if not _finite(progress):
            return
        data: dict[str, Any] = {**self.scope.to_json(), "progress": progress}
        if total is not None and _finite(total) and total > 0:
            data["total"] = total
        if message:
            data["message"] = str(message)[:MAX_MESSAGE]
        self.latest = data
        loop = asyncio.get_running_loop()
        wait = self.last_sent + PROGRESS_INTERVAL - loop.time()
        if wait <= 0:
            self.flush()
        elif self.timer is None:
            self.timer = loop.call_later(wait, self.flush)

    def flush(self) -> None:
        """Send the newest progress now."""
        self.timer = None
        if self.latest is not None:
            self.last_sent = asyncio.get_running_loop().time()
            self.emit("tool.progress", self.latest)
            self.latest = None

    def close(self) -> None:
        """The call ended: what is still waiting is sent, nothing after."""
        if self.timer is not None:
            self.timer.cancel()
        self.flush()


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class CallTracker:
    """The calls running on each server, and the progress callbacks for them."""

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self._running: dict[str, list[CallScope]] = {}
        self._reporters: dict[int, _Reporter] = {}
        self.on_end: list[Callable[[CallScope], None]] = []  # told when a call's scope ends (done or stopped)

    @contextmanager
    def scope(self, scope: CallScope) -> Iterator[CallScope]:
        """Mark the current task (and tasks it starts) as serving ``scope`` until the block ends."""
        token = _current.set(scope)
        running = self._running.setdefault(scope.server, [])
        running.append(scope)
        del running[:-MAX_RUNNING]
        try:
            yield scope
        finally:
            _current.reset(token)
            if scope in running:
                running.remove(scope)
            reporter = self._reporters.pop(id(scope), None)
            if reporter is not None:
                reporter.close()
            for listener in self.on_end:
                listener(scope)
            self._emit("tool.progress.done", scope.to_json())

    def current(self, server: str) -> CallScope | None:
        """The call a request from ``server`` belongs to.

        The task's own scope when it serves that server (a 2026-07-28 input-required round runs in
        the caller's task). A legacy server-to-client request arrives on the session's reader task
        instead, with no link to its call on stdio: then it is the newest call running on that server.
        """
        scope = _current.get()
        if scope is not None and scope.server == server:
            return scope
        running = self._running.get(server)
        return running[-1] if running else None

    def progress_callback(self, server: str) -> ProgressCallback:
        """A callback for one ``call_tool`` on ``server``: its progress goes to the current call's card."""
        scope = _current.get()
        if scope is None or scope.server != server:
            return ignore_progress  # a call nobody shows (moka call, a probe): the token still goes out
        reporter = self._reporters.get(id(scope))
        if reporter is None:
            reporter = self._reporters[id(scope)] = _Reporter(self._emit, scope)
        return reporter


def progress_for(calls: CallTracker | None, server: str) -> ProgressCallback:
    """The progress callback for a call on ``server`` (one is always given, so a token is always sent)."""
    return calls.progress_callback(server) if calls is not None else ignore_progress
