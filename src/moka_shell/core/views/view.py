"""A view: one rendering of a tool's UI resource, and the ordering rules of what it receives.

Nothing goes to a view before it says ``ui/notifications/initialized`` (except the answer
to ``ui/initialize``). Then it gets ``tool-input`` once, before ``tool-result`` or
``tool-cancelled``; a repeated handshake replays both.

``View`` is the one writer of its lifecycle (state, handshake, input, result, cancellation,
failure, parking, release): those fields are read-only from outside, and each step checks the
rules. A repeat or a late end (a second input, a cancellation after the result) is ignored and
answered ``False``; a step out of order (a result before any input, a closed view made ready)
raises ``ViewOrderError``, because only a caller's bug asks for one.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from moka_shell.core.mcp.catalog import ToolEntry, UiResource
from moka_shell.core.views.csp import ViewPolicy
from moka_shell.core.views.redelivery import SentLog
from moka_shell.errors import ViewOrderError

ViewState = Literal["loading", "ready", "failed", "parked", "closed"]

# Where each state may go: a parked view comes back loading, an ended one stays ended.
NEXT_STATES: dict[ViewState, frozenset[ViewState]] = {
    "loading": frozenset({"ready", "failed", "parked", "closed"}),
    "ready": frozenset({"ready", "failed", "parked", "closed"}),  # ready again: a repeated handshake
    "parked": frozenset({"loading", "failed"}),
    "failed": frozenset(),
    "closed": frozenset(),
}
NO_DATA = "This view's data is no longer stored."


@dataclass
class View:
    """Everything Moka knows about one view."""

    id: str
    server: str
    tool: ToolEntry
    call_id: str
    resource: UiResource
    policy: ViewPolicy
    display_mode: str = "inline"
    conversation_id: str | None = None
    message_id: str | None = None
    record_id: str | None = None
    key: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    app_info: dict[str, Any] = field(default_factory=dict)
    app_capabilities: dict[str, Any] = field(default_factory=dict)
    model_context: dict[str, Any] | None = None
    app_tools: list[dict[str, Any]] = field(default_factory=list)  # tools the view offers (moka check reports them)
    context_extras: list[Any] = field(default_factory=list)  # plugins' hostContext additions, asked once
    viewport: dict[str, Any] = field(default_factory=dict)
    height: int | None = None
    queue: list[dict[str, Any]] = field(default_factory=list)
    sent: SentLog = field(default_factory=SentLog)  # numbered messages, kept for a page that missed them
    pending: dict[int, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    inflight: dict[Any, asyncio.Task[Any]] = field(default_factory=dict)
    next_id: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # The lifecycle: written only by the methods below (read through the properties).
    _state: ViewState = field(default="loading", init=False)
    _initialized: bool = field(default=False, init=False)
    _arguments: dict[str, Any] | None = field(default=None, init=False)
    _partial: dict[str, Any] | None = field(default=None, init=False)  # the newest streamed arguments
    _result: dict[str, Any] | None = field(default=None, init=False)
    _cancelled: str | None = field(default=None, init=False)
    _ended: bool = field(default=False, init=False)  # a result or a cancellation came (kept after a release)
    _failure: str | None = field(default=None, init=False)
    _parking: bool = field(default=False, init=False)
    _released: bool = field(default=False, init=False)

    # ---- reading the lifecycle -------------------------------------------------------------

    @property
    def state(self) -> ViewState:
        """Where the view is in its life."""
        return self._state

    @property
    def live(self) -> bool:
        """True while a frame for this view may exist."""
        return self._state in ("loading", "ready")

    @property
    def initialized(self) -> bool:
        """The view said ``ui/notifications/initialized`` to its current frame."""
        return self._initialized

    @property
    def arguments(self) -> dict[str, Any] | None:
        """The tool's complete input (None before it came, or after a release)."""
        return self._arguments

    @property
    def partial(self) -> dict[str, Any] | None:
        """The newest repaired arguments streamed before the complete input (None once that came)."""
        return self._partial if self._arguments is None else None

    @property
    def result(self) -> dict[str, Any] | None:
        """The tool's result (None before it came, or after a release)."""
        return self._result

    @property
    def cancelled(self) -> str | None:
        """Why the call ended without a result."""
        return self._cancelled

    @property
    def ended(self) -> bool:
        """A result or a cancellation came: the call is over for this view."""
        return self._ended

    @property
    def failure(self) -> str | None:
        """Why the view shows an error card."""
        return self._failure

    @property
    def parking(self) -> bool:
        """A teardown for parking is under way."""
        return self._parking

    @property
    def released(self) -> bool:
        """Ended or parked, its input and result dropped (core/views/retention.py)."""
        return self._released

    # ---- the steps of its life ---------------------------------------------------------------

    def _move(self, to: ViewState) -> None:
        if to not in NEXT_STATES[self._state]:
            raise ViewOrderError(f"view {self.id} cannot go from {self._state} to {to}")
        self._state = to

    def handshake_done(self) -> None:
        """``ui/notifications/initialized``: the view may be sent everything now."""
        self._move("ready")
        self._initialized = True

    def give_partial(self, arguments: dict[str, Any]) -> bool:
        """Streamed arguments, kept until the complete input; False when that came, the call ended or nothing changed."""
        if self._arguments is not None or self._ended or arguments == self._partial:
            return False
        self._partial = arguments
        return True

    def give_input(self, arguments: dict[str, Any]) -> bool:
        """The complete input, once and before the end; False when it is a repeat or too late."""
        if self._arguments is not None or self._ended:
            return False
        self._arguments, self._partial = arguments, None
        return True

    def give_result(self, result: dict[str, Any]) -> bool:
        """The tool's result, after its input; False when the call already ended."""
        if self._ended:
            return False
        if self._arguments is None:
            raise ViewOrderError(f"view {self.id} was given a tool-result before its tool-input")
        self._result, self._ended = result, True
        return True

    def give_cancelled(self, reason: str) -> bool:
        """The call failed or was stopped (with or without its input); False when it already ended."""
        if self._ended:
            return False
        self._cancelled, self._ended = reason, True
        return True

    def fail(self, reason: str) -> bool:
        """The view shows an error card instead; False when it already failed or closed."""
        if self._state in ("failed", "closed"):
            return False
        self._move("failed")
        self._failure = reason
        return True

    def begin_parking(self) -> None:
        """Its teardown for parking starts (the many-views policy picked it)."""
        self._parking = True

    def end(self, *, park: bool) -> None:
        """Its frame is gone: parked (it may come back) or closed (for good); the old document key stops working."""
        self._move("parked" if park else "closed")
        self._parking = False
        self._initialized = False
        self.key = secrets.token_urlsafe(18)
        self.app_tools = []
        self.sent.forget()

    def frame_lost(self) -> None:
        """Its frame went to another window (or with one): the next frame handshakes again and is fed again.

        It stays ready (its call, input, result, storage and model context are the view's, not the frame's);
        only what the old frame's app had registered goes with it.
        """
        self._initialized = False
        self.app_tools = []
        self.timings.pop("app_tools", None)

    def remount(self) -> None:
        """A parked view gets a new frame: loading again, its handshake still to come."""
        self._move("loading")

    def reload(self, resource: UiResource, policy: ViewPolicy, tool: ToolEntry) -> None:
        """``moka dev``: its server was restarted with new code; the next frame shows ``resource``.

        Its call, input and result stay (the new frame is fed them again). A live view gets a new
        key (its old frame's document stops loading) and is loading again; so is a failed one, the
        one way out of ``failed``, so that a broken edit's error card comes back with the next good
        edit. A parked view only takes the new resource, for when it is mounted again.
        """
        if self._state not in ("loading", "ready", "failed", "parked"):
            raise ViewOrderError(f"view {self.id} is {self._state}: there is nothing to reload")
        self.resource, self.policy, self.tool = resource, policy, tool
        self.problems = list(policy.rejected + policy.denied)
        self.warnings = []
        if self._state == "parked":
            return
        self._state, self._failure, self._initialized = "loading", None, False
        self.key = secrets.token_urlsafe(18)
        self.queue = []  # what waited was for the old frame; input and result are replayed from the view
        self.app_tools = []
        self.timings = {}

    def release(self) -> None:
        """Let go of input, result and queue (ended, or parked with its data stored elsewhere)."""
        self._arguments = None
        self._partial = None
        self._result = None
        self.queue = []
        self.app_tools = []
        self.sent.forget()
        self._released = True

    def restore(self, record: dict[str, Any] | None) -> None:
        """A released view is mounted again: its input and result read back (``record``, the stored view)."""
        if not self._released:
            return
        self._released = False
        if record is None:
            self._cancelled = self._cancelled or NO_DATA
            self._ended = True
            return
        self._arguments = record.get("arguments")
        self._result = record.get("result")
        self._cancelled = record.get("cancelled") or self._cancelled

    def handshake_missed(self, timeout: float) -> tuple[str, dict[str, Any] | None]:
        """Why the view failed when its handshake did not finish within ``timeout`` s, and the card's detail."""
        got_init = "initialize" in self.timings
        reason = (f"the view did not finish the MCP Apps handshake within {timeout:g} s "
                  + ("(ui/initialize was answered, but ui/notifications/initialized never came)" if got_init
                     else "(no ui/initialize arrived: the app's script did not start or could not reach Moka)"))
        if self.problems:
            reason += "; before that, " + "; ".join(self.problems[:3])
        # An app that needs eval() fails exactly like this; the card offers the server's opt-in.
        tried_eval = any("eval()" in w for w in self.warnings)
        if tried_eval:
            reason += "; it tried eval(), which Moka's view policy blocks unless the server allows it"
        return reason, ({"needsEval": True, "server": self.server} if tried_eval else None)

    # ---- what it is sent -------------------------------------------------------------------

    def mark(self, what: str) -> None:
        """Record when a lifecycle step happened (perf_counter seconds)."""
        self.timings.setdefault(what, time.perf_counter())

    def new_request_id(self) -> int:
        """Ids for host → view requests (the view's own ids are a separate space)."""
        self.next_id += 1
        return self.next_id

    def data_messages(self) -> list[dict[str, Any]]:
        """What a freshly initialized view must get: input, then result or cancellation.

        A view whose handshake ends while the model is still writing the arguments gets the
        newest partial arguments instead, so it shows what came before it was listening.
        """
        out: list[dict[str, Any]] = []
        if self._arguments is None and self._partial is not None and not self._ended:
            out.append(notification("ui/notifications/tool-input-partial", {"arguments": self._partial}))
        elif self._arguments is not None:
            out.append(notification("ui/notifications/tool-input", {"arguments": self._arguments}))
            if self._result is not None:
                out.append(notification("ui/notifications/tool-result", self._result))
            elif self._cancelled is not None:
                out.append(notification("ui/notifications/tool-cancelled", {"reason": self._cancelled}))
        elif self._cancelled is not None:
            # A call that failed before its arguments were complete still ends visibly.
            out.append(notification("ui/notifications/tool-input", {"arguments": {}}))
            out.append(notification("ui/notifications/tool-cancelled", {"reason": self._cancelled}))
        return out


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A JSON-RPC notification object (params omitted when None)."""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg
