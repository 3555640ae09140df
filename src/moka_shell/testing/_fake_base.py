"""What the fake model servers share: the script steps and the server thread.

A *turn* is the answer to one request: a list of steps. Steps are provider-neutral, so
the same script drives `FakeOpenAIServer` and `FakeAnthropicServer`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import re
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, ClassVar, Literal, Self, cast

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from moka_shell.web.prompt_server import PromptServer


class Step:
    """Base of every script step (Text, ToolCall, Error, Finish, Disconnect)."""

    __slots__ = ()


@dataclass(frozen=True)
class Text(Step):
    """One streamed piece of assistant text."""

    text: str
    delay: float = 0.0  # seconds to wait before sending it


@dataclass(frozen=True, eq=False)
class Hold:
    """Where a scripted tool call stops streaming until the test lets it go on.

    The fake sends ``after`` argument fragments, sets ``reached`` and waits for ``release``:
    a test can act while a call is half-written (its view mounted, its arguments incomplete).
    """

    after: int
    reached: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    async def wait(self) -> None:
        """Say the point was reached, then wait (off the server's loop) until released."""
        self.reached.set()
        await asyncio.to_thread(self.release.wait)


@dataclass(frozen=True)
class ToolCall(Step):
    """A tool call whose JSON arguments are streamed in `fragments` pieces."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    fragments: int = 1
    delay: float = 0.0  # seconds to wait before each fragment
    call_id: str | None = None  # generated in the provider's style when None
    raw_arguments: str | None = None  # sent verbatim instead of `arguments` (e.g. broken JSON)
    hold: Hold | None = None  # stop after `hold.after` fragments until the test releases it

    @property
    def arguments_json(self) -> str:
        """The argument text as sent (compact JSON, like the real providers)."""
        if self.raw_arguments is not None:
            return self.raw_arguments
        return json.dumps(self.arguments, separators=(",", ":"), ensure_ascii=False)

    def pieces(self) -> list[str]:
        """The argument text split into (at most) `fragments` consecutive pieces."""
        return split_text(self.arguments_json, self.fragments)

    async def before_fragment(self, index: int) -> None:
        """Wait before sending fragment ``index``: the step's delay, and its hold if it is there."""
        if self.hold is not None and index == self.hold.after:
            await self.hold.wait()
        await pause(self.delay)


@dataclass(frozen=True)
class Error(Step):
    """A provider error: as the HTTP answer if it comes first in a turn, else mid-stream.

    `kind` is one of auth, permission, not_found, rate_limit, context_length,
    bad_request, server, overloaded; `status`, `message` or a whole `body` override the
    provider's usual answer for that kind.
    """

    kind: str
    status: int | None = None
    message: str | None = None
    body: dict[str, Any] | None = None


@dataclass(frozen=True)
class Finish(Step):
    """Overrides how the turn ends: reason (end_turn, tool_use, max_tokens or a raw
    provider value) and the reported token usage."""

    reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


class _Disconnected(Exception):
    """Raised inside a streaming response to drop the connection on purpose."""


@dataclass(frozen=True)
class Disconnect(Step):
    """Drop the connection mid-stream, as a flaky network or a crashed server would."""

    def abort(self) -> None:
        """Raise the exception that makes the server cut the connection."""
        raise _Disconnected("scripted disconnect")


def split_text(text: str, parts: int) -> list[str]:
    """Split `text` into at most `parts` non-empty consecutive pieces of similar length."""
    parts = max(1, min(parts, len(text)))
    if not text:
        return [""]
    bounds = [round(i * len(text) / parts) for i in range(parts + 1)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


def text_steps(text: str, chunks: int | None = None, delay: float = 0.0) -> list[Text]:
    """`text` as Text steps: word by word, or in `chunks` similar pieces."""
    pieces = re.findall(r"\s*\S+\s*|\s+", text) if chunks is None else split_text(text, chunks)
    return [Text(p, delay) for p in pieces] or [Text("")]


async def pause(delay: float) -> None:
    """Sleep `delay` seconds inside the server (lets a test watch streaming happen)."""
    if delay > 0:
        await asyncio.sleep(delay)


@dataclass
class TurnPlan:
    """A turn made ready to send: ids filled in, ending and usage decided."""

    steps: list[Step]
    leading_error: Error | None
    stop_reason: str
    input_tokens: int
    output_tokens: int


class _DropScriptedDisconnects(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not _is_disconnect(record.exc_info[1] if record.exc_info else None)


def _is_disconnect(exc: BaseException | None) -> bool:
    if exc is None:
        return False
    if isinstance(exc, _Disconnected):
        return True
    if isinstance(exc, BaseExceptionGroup):  # starlette runs streaming in a task group
        return any(_is_disconnect(e) for e in exc.exceptions)
    return _is_disconnect(exc.__cause__ or exc.__context__)


logging.getLogger("uvicorn.error").addFilter(_DropScriptedDisconnects())


#: How a fake names the tool calls it did not get an id for: ``fresh`` as the real providers do (unique);
#: ``reused`` as some OpenAI-compatible servers do (``call_0``, ``call_1``… again in every response);
#: ``empty`` (an empty string); ``missing`` (no id field at all, where the wire format allows it).
CallIds = Literal["fresh", "reused", "empty", "missing"]


class FakeServerBase:
    """A scripted HTTP server in a background thread; use it as a context manager."""

    api_prefix: ClassVar[str] = ""
    call_id_prefix: ClassVar[str] = "call_"

    def __init__(self, *, api_key: str | None = None, models: Sequence[str] = ("fake-model",),
                 call_ids: CallIds = "fresh") -> None:
        self.api_key = api_key  # when set, requests without it get the provider's 401
        self.models = list(models)
        self.call_ids: CallIds = call_ids
        self.requests: list[dict[str, Any]] = []  # every POSTed JSON body, in order
        self.headers: list[dict[str, str]] = []  # the headers of those requests
        self._turns: deque[list[Step]] = deque()
        self._lock = threading.Lock()
        self._server: PromptServer | None = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None
        self.port = 0

    # ---- scripting --------------------------------------------------------------------------

    def enqueue(self, *turns: Sequence[Step] | Sequence[Sequence[Step]]) -> None:
        """Queue turns (each a list of steps; or one list of turns), answered one per request."""
        if len(turns) == 1 and turns[0] and all(isinstance(t, (list, tuple)) for t in turns[0]):
            turns = tuple(cast(Sequence[Sequence[Step]], turns[0]))  # one list of turns was passed
        with self._lock:
            self._turns.extend([cast(Step, step) for step in turn] for turn in turns)

    def tool_then_reply(
        self, name: str, arguments: dict[str, Any], reply: str, *,
        fragments: int = 4, delay: float = 0.0, preface: str | None = None,
    ) -> None:
        """Script "call tool `name` with `arguments`, then, after the tool result, say `reply`"."""
        first: list[Step] = [Text(preface)] if preface else []
        first.append(ToolCall(name, arguments, fragments=fragments, delay=delay))
        self.enqueue(first, text_steps(reply))

    @property
    def pending(self) -> int:
        """How many queued turns have not been used yet."""
        with self._lock:
            return len(self._turns)

    def next_turn(self) -> list[Step]:
        """The next queued turn, or a plain "ok" when none is queued."""
        with self._lock:
            return self._turns.popleft() if self._turns else [Text("ok")]

    async def record(self, request: Request) -> dict[str, Any]:
        """Read, remember and return a request's JSON body."""
        body = json.loads(await request.body() or b"{}")
        with self._lock:
            self.requests.append(body)
            self.headers.append(dict(request.headers))
        return body

    def plan(self, turn: list[Step], messages: Any) -> TurnPlan:
        """Fill in call ids, find a leading error and decide stop reason and usage."""
        steps: list[Step] = []
        finish = Finish()
        for step in turn:
            if isinstance(step, Finish):
                finish = step
            elif isinstance(step, ToolCall) and step.call_id is None:
                steps.append(dataclasses.replace(step, call_id=self.new_call_id(sum(isinstance(s, ToolCall) for s in steps))))
            else:
                steps.append(step)
        leading = steps[0] if steps and isinstance(steps[0], Error) else None
        has_tools = any(isinstance(s, ToolCall) for s in steps)
        output = sum(1 if isinstance(s, Text) else len(s.pieces()) for s in steps if isinstance(s, (Text, ToolCall)))
        return TurnPlan(
            steps=steps,
            leading_error=leading,
            stop_reason=finish.reason or ("tool_use" if has_tools else "end_turn"),
            input_tokens=finish.input_tokens if finish.input_tokens is not None else len(json.dumps(messages)) // 4 + 1,
            output_tokens=finish.output_tokens if finish.output_tokens is not None else max(output, 1),
        )

    def new_call_id(self, index: int) -> str:
        """The id of the ``index``-th tool call of a response, in this fake's ``call_ids`` style."""
        if self.call_ids == "reused":
            return f"{self.call_id_prefix}{index}"
        if self.call_ids in ("empty", "missing"):
            return ""
        return self.call_id_prefix + uuid.uuid4().hex[:24]

    def call_id_field(self, step: ToolCall) -> dict[str, str]:
        """``{"id": …}`` for a call on the wire, or nothing when this fake sends no ids."""
        return {} if self.call_ids == "missing" and not step.call_id else {"id": step.call_id or ""}

    # ---- serving ----------------------------------------------------------------------------

    def routes(self) -> list[Route]:
        """The HTTP routes (each provider's fake defines them)."""
        raise NotImplementedError

    @property
    def url(self) -> str:
        """The server's root URL, e.g. http://127.0.0.1:54321."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The base URL to give the provider's SDK."""
        return self.url + self.api_prefix

    def start(self) -> Self:
        """Start serving on a free port of 127.0.0.1; returns once it accepts connections."""
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        config = uvicorn.Config(
            Starlette(routes=self.routes()), log_level="warning", lifespan="off",
            access_log=False, timeout_graceful_shutdown=1,
        )
        self._server = PromptServer(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, name=type(self).__name__, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"{type(self).__name__} did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Stop serving and wait for the thread to end."""
        if self._server is None or self._thread is None:
            return
        self._server.request_exit()
        self._thread.join(5)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(5)
        if self._sock is not None:
            self._sock.close()
        self._server = self._thread = self._sock = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
