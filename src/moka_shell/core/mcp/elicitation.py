"""Elicitation: a server asks the person something, in the middle of a call.

Form mode shows a form built from the server's ``requestedSchema``; URL mode shows the server's
message and the address, and opens it only when the person says so. Both arrive here through the
SDK's one elicitation callback, whether the server sent a legacy ``elicitation/create`` request
or a 2026-07-28 ``input_required`` result (the SDK drives those rounds). The question goes to the
UI as an ``elicitation.request`` event, placed on the card of the call it belongs to; the answer
comes back through ``elicitation.answer``. Where nobody can answer (``moka call``, ``moka chat``,
``moka check``) the answers given up front answer it (``core/mcp/answers.py``); with none that fits,
the request is refused at once, with a reason, instead of waiting.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from moka_shell.core.links import WebLink, web_link
from moka_shell.core.mcp.forms import check_content, check_schema
from moka_shell.core.mcp.progress import CallScope, CallTracker
from moka_shell.core.shell import Emit
from moka_shell.errors import ElicitationRefusedError, InvalidParamsError, UnsafeLinkError, to_jsonrpc
from moka_shell.inspector import Inspector

if TYPE_CHECKING:
    import mcp_types as types

    from moka_shell.core.mcp.answers import ScriptedAnswers

Action = Literal["accept", "decline", "cancel"]
ACTIONS = ("accept", "decline", "cancel")
ELICITATION_TIMEOUT = 600.0  # a question nobody answers in ten minutes is cancelled
MAX_PENDING = 16  # open questions at once, across servers
MAX_MESSAGE = 4000
Elicitor = Callable[[str, Any], Awaitable["types.ElicitResult | types.ErrorData"]]


@dataclass
class _Pending:
    future: asyncio.Future[tuple[Action, dict[str, Any] | None]]
    event: dict[str, Any]
    scope: CallScope | None


def _refusal(exc: ElicitationRefusedError) -> types.ErrorData:
    import mcp_types as types  # the SDK loads with the first server, not with the core (performance.md §13)

    return types.ErrorData(**to_jsonrpc(exc))


def check_url(url: str) -> WebLink:
    """The address a server wants opened, as browsers read it (core/links.py); refused unless plain http(s)."""
    try:
        return web_link(url)
    except UnsafeLinkError as exc:
        raise ElicitationRefusedError(f"the server asked to open {exc.url!r}, which Moka does not open: {exc.why}")\
            from None


class Elicitations:
    """Takes servers' questions to the person and their answers back."""

    def __init__(self, emit: Emit, calls: CallTracker, inspector: Inspector, *, can_ask: Callable[[], bool],
                 open_link: Callable[[str], None], scripted: ScriptedAnswers | None = None) -> None:
        self._emit = emit
        self.scripted = scripted  # answers given up front (the CLI's --answer…), for when nobody can answer
        self._calls = calls
        self._inspector = inspector
        self._can_ask = can_ask
        self._open_link = open_link
        self._pending: dict[str, _Pending] = {}
        self._seq = 0
        self.unanswered: list[str] = []  # refused because nobody could answer (the CLI reports them)
        calls.on_end.append(self._call_ended)

    async def __call__(self, server: str, params: Any) -> types.ElicitResult | types.ErrorData:
        """The SDK's elicitation callback for ``server`` (a form or a URL), answered by the person."""
        data = params.model_dump(by_alias=True, exclude_none=True) if hasattr(params, "model_dump") else dict(params)
        mode = data.get("mode") or "form"
        message = str(data.get("message") or "")[:MAX_MESSAGE]
        scope = self._calls.current(server)
        self._inspector.record("server", {"event": "elicitation-request", "mode": mode,
                                          "call": scope.call_id if scope else None},
                               server=server, method="elicitation/create")
        try:
            event = self._event(server, mode, message, data, scope)
        except ElicitationRefusedError as exc:
            return _refusal(exc)
        if not self._can_ask() and self.scripted is not None:
            return self._answer_from_script(server, mode, message, event)
        if not self._can_ask():
            refusal = ElicitationRefusedError(
                f"{server!r} asked you a question ({mode} elicitation: {message[:160]!r}), and nobody can answer it "
                "here. Run the tool in the Moka app or `moka serve` to answer it.")
            self.unanswered.append(refusal.message)
            return _refusal(refusal)
        if len(self._pending) >= MAX_PENDING:
            return _refusal(ElicitationRefusedError(f"{len(self._pending)} questions are already waiting for an answer"))
        action, content = await self._ask(event, scope)
        self._inspector.record("server", {"event": "elicitation-answer", "mode": mode, "action": action},
                               server=server, method="elicitation/answer")
        if action == "accept" and mode == "url":
            self._open_link(event["url"])
        import mcp_types as types

        return types.ElicitResult(action=action, content=content if action == "accept" and mode == "form" else None)

    def _answer_from_script(self, server: str, mode: str, message: str,
                            event: dict[str, Any]) -> types.ElicitResult | types.ErrorData:
        assert self.scripted is not None
        try:
            action, content = self.scripted.reply(server, mode, message, event.get("requestedSchema"))
        except ElicitationRefusedError as exc:
            self.unanswered.append(exc.message)
            return _refusal(exc)
        self._inspector.record("server", {"event": "elicitation-answer", "mode": mode, "action": action,
                                          "answeredBy": "answers given up front"},
                               server=server, method="elicitation/answer")
        # An accepted URL question is not opened: nobody is here to use the page.
        import mcp_types as types

        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    def _event(self, server: str, mode: str, message: str, data: dict[str, Any],
               scope: CallScope | None) -> dict[str, Any]:
        self._seq += 1
        event: dict[str, Any] = {"requestId": f"e{self._seq}", "server": server, "mode": mode, "message": message,
                                 **(scope.to_json() if scope else {"server": server})}
        if mode == "url":
            link = check_url(str(data.get("url") or ""))  # shown and opened: the normalised address
            event.update(url=link.url, domain=link.host, international=link.international)
        elif mode == "form":
            event["requestedSchema"] = check_schema(data.get("requestedSchema") or {"type": "object"})
        else:
            raise ElicitationRefusedError(f"Moka does not know the elicitation mode {mode!r} (only form and url)")
        return event

    async def _ask(self, event: dict[str, Any], scope: CallScope | None) -> tuple[Action, dict[str, Any] | None]:
        rid = event["requestId"]
        fut: asyncio.Future[tuple[Action, dict[str, Any] | None]] = asyncio.get_running_loop().create_future()
        self._pending[rid] = _Pending(fut, event, scope)
        self._emit("elicitation.request", event)
        action: Action = "cancel"
        try:
            action, content = await asyncio.wait_for(asyncio.shield(fut), timeout=ELICITATION_TIMEOUT)
            return action, content
        except asyncio.TimeoutError:
            return "cancel", None
        finally:
            self._pending.pop(rid, None)
            self._emit("elicitation.done", {"requestId": rid, "action": action, **({"callId": scope.call_id} if scope else {})})

    def answer(self, request_id: str, action: str, content: Any = None) -> None:
        """The person's answer: accept (with the form's content), decline or cancel."""
        pending = self._pending.get(request_id)
        if pending is None:
            raise InvalidParamsError(f"no question {request_id!r} is waiting for an answer (it may have timed out)")
        if action not in ACTIONS:
            raise InvalidParamsError(f"'action' must be 'accept', 'decline' or 'cancel', not {action!r}")
        checked = None
        if action == "accept" and pending.event["mode"] == "form":
            checked = check_content(pending.event["requestedSchema"], content if content is not None else {})
        if not pending.future.done():
            pending.future.set_result((action, checked))  # type: ignore[arg-type]

    def pending(self) -> list[dict[str, Any]]:
        """Questions waiting now (a page that connects late shows them again)."""
        return [p.event for p in self._pending.values()]

    def _call_ended(self, scope: CallScope) -> None:
        # Stopped while a question was open: a legacy server's request is not tied to our task, so end it here.
        for p in list(self._pending.values()):
            if p.scope == scope and not p.future.done():
                p.future.set_result(("cancel", None))


def sdk_callback(elicitor: Elicitor | None, server: str) -> Any:
    """The SDK's ``elicitation_callback`` for ``server`` (None advertises no elicitation at all)."""
    if elicitor is None:
        return None

    async def on_elicit(context: Any, params: Any) -> types.ElicitResult | types.ErrorData:
        return await elicitor(server, params)

    return on_elicit
