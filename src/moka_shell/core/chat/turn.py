"""A turn and its tool calls: begun as the model streams them, reviewed, run on their server, ended.

Every call gets Moka's own id; the model server's id is kept as data (``ToolCall.provider_id``).
A turn that ends early (stopped, or failed for any reason) ends every call it started that has
no answer yet, so no card or view is left "running".
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from moka_shell.core.chat.approval import Approvals, TurnOrigin
from moka_shell.core.chat.partial_json import is_valid_json
from moka_shell.core.chat.store import Store, new_id
from moka_shell.core.chat.tool_call import OPEN_STATUSES, CallStatus, ToolCall
from moka_shell.core.chat.tool_names import ToolNames
from moka_shell.core.mcp.progress import CallScope
from moka_shell.core.mcp.servers import ServerManager
from moka_shell.core.shell import Emit
from moka_shell.core.views import app_tools
from moka_shell.core.views.app_tools import AppTool
from moka_shell.core.views.host import ViewHost
from moka_shell.errors import MokaError, StoreError

log = logging.getLogger("moka.chat")


class Turn:
    """One running turn of one conversation."""

    def __init__(self, conversation_id: str, origin: TurnOrigin) -> None:
        self.conversation_id = conversation_id
        self.origin = origin  # who started it decides which calls may run unasked
        self.task: asyncio.Task[None] | None = None
        self.calls: list[ToolCall] = []  # every call it started, so none is left running when it ends


class TurnCalls:
    """Runs the tool calls of the engine's turns and keeps each one's card and view up to date."""

    def __init__(self, *, store: Store, servers: ServerManager, views: ViewHost, approvals: Approvals,
                 emit: Emit) -> None:
        self.store = store
        self.servers = servers
        self.views = views
        self.approvals = approvals
        self.emit = emit

    async def begin(self, turn: Turn, mid: str, provider_id: str, model_name: str, names: ToolNames) -> ToolCall:
        """A call the model started: recorded, its view (for a UI tool) mounted at once."""
        cid = turn.conversation_id
        entry = names.resolve(model_name)
        call = ToolCall(id=new_id("t"), provider_id=provider_id, server=entry.server if entry else "?",
                        tool=entry.name if entry else model_name, model_name=model_name, message_id=mid,
                        app=entry.describe() if isinstance(entry, AppTool) else None)
        turn.calls.append(call)
        if entry is not None and entry.resource_uri:
            try:
                call.view = await self.views.open_view(entry.server, entry.name, call_id=call.id,
                                                       conversation_id=cid, message_id=mid)
            except MokaError as exc:
                log.info("no view for %s: %s", model_name, exc)
        if call.view is not None:
            call.view.record_id = call.view.id
            self.store.add_view(call.view.id, cid, call.id, call.server, call.tool, call.view.resource.uri)
        self.store.add_call(cid, mid, call.to_json())
        self._emit(cid, call)
        return call

    def end_arguments(self, cid: str, call: ToolCall, raw: str, arguments: dict[str, Any]) -> None:
        """The model finished writing the call's arguments: it will run, or fail if they are broken."""
        if raw.strip() and not arguments and not is_valid_json(raw):
            # Cut-off or broken arguments must not run the tool with its defaults.
            call.status, call.error = "error", f"the model sent arguments that are not valid JSON: {raw[:200]}"
            self.store.update_call(call.id, status="error", error=call.error)
            if call.view is not None:
                self.views.cancel(call.view, call.error)
        else:
            # The view gets tool-input when the call runs: after approval, with the arguments allowed.
            # Until then it shows them whole as the newest partial (the stream's last ones are throttled).
            call.arguments, call.status = arguments, "running"
            if call.view is not None:
                self.views.set_partial(call.view, arguments)
            self.store.update_call(call.id, arguments=arguments, status="running")
        self._emit(cid, call)

    def _emit(self, cid: str, call: ToolCall) -> None:
        self.emit("chat.tool", {"conversationId": cid, "messageId": call.message_id, "call": call.to_json()})

    def _save_and_emit(self, cid: str, call: ToolCall) -> None:
        self.store.update_call(call.id, status=call.status, arguments=call.arguments)
        self._emit(cid, call)

    async def run(self, turn: Turn, call: ToolCall, names: ToolNames) -> None:
        """Review the call (approval), run it on its server and record the answer."""
        cid = turn.conversation_id
        if call.status == "error":
            return  # already answered (broken arguments)
        entry = names.resolve(call.model_name)
        refusal = None
        if entry is not None:
            try:
                refusal = await self.approvals.review(cid, call, entry.annotations, entry.title, turn.origin,
                                                      lambda c: self._save_and_emit(cid, c))
            except asyncio.CancelledError:  # stopped while the card waited for an answer
                call.status, call.error = "cancelled", "stopped by the person"
                if call.view is not None:
                    self.views.cancel(call.view, "The person stopped this tool call.")
                self._finish(cid, call)
                raise
        if not call.known or entry is None:
            call.status, call.error = "error", f"the model asked for an unknown tool {call.model_name!r}"
        elif refusal is not None:
            call.status, call.error = "denied", refusal
            if call.view is not None:
                self.views.cancel(call.view, refusal)
        else:
            self._save_and_emit(cid, call)  # running, with the arguments the person allowed
            try:
                call.status, call.result = "done", await self._execute(cid, call)
            except asyncio.CancelledError:
                call.status, call.error = "cancelled", "stopped by the person"
                self._finish(cid, call)
                raise
            except MokaError as exc:
                call.status, call.error = "error", str(exc)
        self._finish(cid, call)

    async def _execute(self, cid: str, call: ToolCall) -> dict[str, Any]:
        """Run the call: on the view that offered it (an app's own tool), or on its server."""
        if call.app is not None:
            return await app_tools.call(self.views.views, self.views.request, call.app["viewId"], call.tool,
                                        call.arguments)
        # The scope sends the server's progress and questions to this call's card.
        with self.servers.calls.scope(CallScope(call.id, call.server, call.tool, "chat", cid)):
            _cid, _view, result = await self.views.run_tool(
                call.server, call.tool, call.arguments, view=call.view, conversation_id=cid,
                message_id=call.message_id, with_view=call.view is not None)
        return result

    def _finish(self, cid: str, call: ToolCall) -> None:
        self.store.update_call(call.id, status=call.status, result=call.result, error=call.error)
        view = call.view
        if view is not None:
            self.store.update_view(view.record_id or view.id, arguments=view.arguments, result=view.result,
                                   cancelled=view.cancelled)
        self._emit(cid, call)

    def end_open(self, turn: Turn, status: CallStatus, reason: str) -> None:
        """A turn that ends early ends every call it started with no answer yet: no card stays "running"."""
        for call in turn.calls:
            if call.status not in OPEN_STATUSES:
                continue
            call.status, call.error = status, reason
            if call.view is not None and call.view.result is None:
                self.views.cancel(call.view, reason)
            try:
                self._finish(turn.conversation_id, call)
            except StoreError:  # a full disk: the card is still told
                self._emit(turn.conversation_id, call)
