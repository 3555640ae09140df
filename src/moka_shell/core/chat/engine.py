"""The agent loop, once: user message + model context → backend stream → tools → repeat.

Text deltas reach the UI as they arrive; a UI tool's view is mounted as soon as the
model starts the call and receives repaired partial arguments while they stream.
Everything shown is in the store first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from typing import Any

from moka_shell.config import MokaConfig
from moka_shell.core.redact import SECRETS
from moka_shell.core.chat.approval import Approvals, TurnOrigin
from moka_shell.core.chat.backends import (
    AgentBackend,
    AgentRequest,
    ChatMessage,
    Done,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from moka_shell.core.chat.history import app_message_text, build_history
from moka_shell.core.chat.media import Attachment
from moka_shell.core.chat.instructions import with_instructions
from moka_shell.core.chat.request import Choice, build_request, choose, detect_local
from moka_shell.core.chat.partial_feed import PartialFeed
from moka_shell.core.chat.sampling import sample_once, sampling_messages
from moka_shell.core.chat.store import Store
from moka_shell.core.chat.tool_call import ToolCall
from moka_shell.core.chat.turn import Turn, TurnCalls
from moka_shell.core.chat.tool_names import ToolNames
from moka_shell.core.mcp.servers import ServerManager
from moka_shell.core.shell import Emit
from moka_shell.core.views import app_tools
from moka_shell.core.views.host import ViewHost
from moka_shell.core.views.view import View
from moka_shell.errors import AgentError, MokaError, NeedsKeyError, ProviderError, StoreError, UnknownBackendError
from moka_shell.inspector import Inspector
from moka_shell.registered import Registered

log = logging.getLogger("moka.chat")
APP_TOOLS_WAIT = 3.0  # at most, before a step, for views a page is loading to list their tools


class ChatEngine:
    """Runs chat turns against the configured backend and keeps them in the store."""

    def __init__(self, *, store: Store, servers: ServerManager, views: ViewHost,
                 backends: dict[str, Registered[AgentBackend]], config: MokaConfig, emit: Emit,
                 inspector: Inspector, approvals: Approvals) -> None:
        self.store = store
        self.servers = servers
        self.views = views
        self.backends = backends
        self.config = config
        self.emit = emit
        self.inspector = inspector
        self.approvals = approvals
        self.calls = TurnCalls(store=store, servers=servers, views=views, approvals=approvals, emit=emit)
        self.turns: dict[str, Turn] = {}
        self.contexts: dict[str, dict[str, Any]] = {}  # conversation → view id → last model context

    # ---- backend -----------------------------------------------------------------------------

    def backend_configured(self) -> bool:
        """Is a backend selected (keys are checked when a turn runs)?"""
        return bool(self.config.agent.backend and self.config.agent.backend in self.backends)

    def accepts_media(self) -> frozenset[str]:
        """The media kinds the selected backend takes (what views are told they may send)."""
        return frozenset(getattr(self.backend(), "accepts_media", ())) if self.backend_configured() else frozenset()

    def backend(self, backend_id: str | None = None) -> AgentBackend:
        """The selected backend object."""
        bid = backend_id or self.config.agent.backend
        if not bid:
            raise AgentError(self.no_backend_help())
        reg = self.backends.get(bid)
        if reg is None:
            raise UnknownBackendError(bid, list(self.backends))
        return reg.obj

    def no_backend_help(self) -> str:
        """Exactly how to add a model backend."""
        return ("No model backend is set up yet, so Moka can't chat. The Tool runner works without one.\n"
                "To add one: open Settings → Model and pick a backend, or run "
                "`moka chat --backend openai \"hello\"` with OPENAI_API_KEY set. "
                "Local models work too: start Ollama (`ollama serve`) or LM Studio's server and pick "
                "'ollama' or 'lmstudio'. Keys go in the OS keyring (`moka keys set openai`) or an environment variable.")

    async def detect_local(self) -> list[str]:
        """Local backends that answer right now (Ollama, LM Studio, ...)."""
        return await detect_local(self.backends, self.config.agent)

    def _request(self, backend: AgentBackend, model: str | None, messages: list[ChatMessage],
                 tools: list[Any], system: str | None = None) -> AgentRequest:
        cfg = self.config.agent
        if model is None and backend.backend_id == cfg.backend:
            model = cfg.model  # the config's model goes with the config's backend only
        return build_request(backend, cfg, model, cfg.system_prompt if system is None else system, messages, tools)

    # ---- turns -------------------------------------------------------------------------------

    def start_turn(self, conversation_id: str | None, text: str, *, origin: TurnOrigin | None = None,
                   backend: str | None = None, model: str | None = None, blocks: list[dict[str, Any]] | None = None,
                   attachments: list[Attachment] | None = None, system_prompt: str | None = None) -> str:
        """Store the message (the person's, or an app's when ``origin`` names one) and run the turn.

        ``blocks`` are an app message's content blocks and ``attachments`` the person's files: both
        are kept with the message, so their images reach the model on this turn and every later one.
        A ``backend`` (and ``model``) or ``system_prompt`` named here becomes the conversation's own
        choice, stored before the turn's task exists.
        """
        origin = origin or TurnOrigin()
        title = text.strip().splitlines()[0][:60] if text.strip() else \
            (attachments[0].name if attachments else "New chat")
        cid = conversation_id if conversation_id and self.store.has_conversation(conversation_id) else \
            self.store.create_conversation(title)
        self.check_idle(cid)
        if backend:
            if backend not in self.backends:
                raise UnknownBackendError(backend, list(self.backends))
            self.store.set_settings(cid, backend=backend, model=model)
        if system_prompt is not None:
            self.store.set_settings(cid, systemPrompt=system_prompt)
        context = self._take_context(cid)
        data: dict[str, Any] = {"context": context} if context else {}
        if origin.from_app:
            data["app"] = {"server": origin.server, "tool": origin.tool}
            if blocks:
                data["blocks"] = blocks
        if attachments:
            data["attachments"] = [a.describe() for a in attachments]
        msg = self.store.add_message(cid, "user", text, source="app" if origin.from_app else None, data=data or None)
        if attachments:
            msg["data"]["attachments"] = [self.store.add_attachment(cid, msg["id"], a.name, a.mime_type, a.data)
                                          for a in attachments]
            self.store.set_data(msg["id"], msg["data"])
        self.emit("chat.message", {"conversationId": cid, "message": msg})
        self.inspector.record("agent", {"event": "user-message", "source": "app" if origin.from_app else "person", "chars": len(text)},
                                  method="agent/user")
        self.launch(cid, origin, backend, model)
        return cid

    def check_idle(self, cid: str) -> None:
        """AgentError when a turn of this conversation is running."""
        running = self.turns.get(cid)
        if running is not None and running.task is not None and not running.task.done():
            raise AgentError("a turn is already running in this conversation; stop it first")

    def launch(self, cid: str, origin: TurnOrigin, backend: str | None = None, model: str | None = None) -> None:
        """Run a turn on the conversation as it is stored (after a new message, an edit or a regenerate)."""
        self.check_idle(cid)
        turn = Turn(cid, origin)
        turn.task = asyncio.get_running_loop().create_task(self._run(turn, backend, model))
        self.turns[cid] = turn

    def running(self, cid: str) -> bool:
        """Is a turn of this conversation running now?"""
        turn = self.turns.get(cid)
        return turn is not None and turn.task is not None and not turn.task.done()

    async def wait(self, cid: str) -> None:
        """Wait for the conversation's running turn to end."""
        turn = self.turns.get(cid)
        if turn and turn.task:
            await asyncio.gather(turn.task, return_exceptions=True)

    def stop(self, cid: str) -> None:
        """Stop the running turn: the in-flight tool call is cancelled and its view told."""
        turn = self.turns.get(cid)
        if turn and turn.task and not turn.task.done():
            turn.task.cancel()

    async def _run(self, turn: Turn, backend_id: str | None, model: str | None) -> None:
        cid = turn.conversation_id
        reply: dict[str, Any] | None = None
        choice: Choice | None = None
        try:
            choice = choose(self.config.agent, self.store.settings(cid), backend_id, model)
            backend = self.backend(choice.backend)
            accepts = frozenset(getattr(backend, "accepts_media", frozenset()))
            for step in range(self.config.agent.max_steps):
                if step:  # an app the last step opened may be what the model uses next: let it list its tools
                    await app_tools.settle([c.view for c in turn.calls if c.view is not None], APP_TOOLS_WAIT)
                # Rebuilt every step: a live view's own tools are offered only while the view lives.
                names = ToolNames(self.servers.all_tools(), app_tools.offered(self.views.views.values(), cid))
                history = build_history(self.store.messages(cid), accepts, self.store.attachments_of)
                request = self._request(backend, choice.model, history,
                                        names.model_tools() if backend.supports_tools else [], choice.system)
                request.system = with_instructions(request.system, self.servers.connections.values())
                self.store.end_replies(cid)  # the step before is complete, its calls answered
                reply = self.store.add_message(cid, "assistant", "", state="streaming")
                self.emit("chat.message", {"conversationId": cid, "message": reply})
                calls = await self._stream(turn, reply["id"], backend, request, names)
                if not calls:
                    break
                for call in calls:
                    await self.calls.run(turn, call, names)
            else:
                self._error(cid, reply, f"stopped after {self.config.agent.max_steps} steps (the step limit)",
                            "step_limit")
        except asyncio.CancelledError:
            self.calls.end_open(turn, "cancelled", "stopped by the person")
            if reply is not None:
                self.store.set_error(reply["id"], "stopped")
            self.emit("chat.error", {"conversationId": cid, "message": "Stopped.", "kind": "stopped"})
        except (ProviderError, NeedsKeyError) as exc:
            self._fail(turn, reply, str(exc), getattr(exc, "kind", "needs_key"))
        except MokaError as exc:
            self._fail(turn, reply, str(exc), "error")
        except Exception as exc:  # a backend bug must not lose the conversation
            log.exception("chat turn failed")
            # The person gets words; the exception's type and text (a Python detail) go to the
            # Inspector and the log, where whoever debugs the backend looks.
            where = f" (model backend {choice.backend!r})" if choice is not None else ""
            self.inspector.record("agent", {"event": "fault", "error": SECRETS.mask(f"{type(exc).__name__}: {exc}"),
                                            "where": where.strip(" ()")}, method="agent/error")
            self._fail(turn, reply, f"the turn stopped on an unexpected fault{where}; the conversation is kept, "
                                    "and the Inspector has the details", "error")
        finally:
            with contextlib.suppress(StoreError):  # a full disk: marked at the next start instead
                self.store.end_replies(cid)  # what is still "streaming" after this was cut off by a crash
            self.emit("chat.done", {"conversationId": cid})
            self.inspector.record("agent", {"event": "turn-done"}, method="agent/done")

    def _fail(self, turn: Turn, reply: dict[str, Any] | None, message: str, kind: str) -> None:
        self.calls.end_open(turn, "error", f"not run: {SECRETS.mask(message)}")
        self._error(turn.conversation_id, reply, message, kind)

    def _error(self, cid: str, reply: dict[str, Any] | None, message: str, kind: str) -> None:
        message = SECRETS.mask(message)  # a provider may echo the key it was sent (S9)
        with contextlib.suppress(StoreError):  # the store can't be written (a full disk): still say why
            if reply is None:
                reply = self.store.add_message(cid, "assistant", "")
                self.emit("chat.message", {"conversationId": cid, "message": reply})
            self.store.set_error(reply["id"], message)
        self.inspector.record("agent", {"event": "error", "kind": kind, "message": message}, method="agent/error")
        self.emit("chat.error", {"conversationId": cid, "messageId": reply["id"] if reply else None,
                                 "message": message, "kind": kind})

    async def _stream(self, turn: Turn, mid: str, backend: AgentBackend, request: AgentRequest,
                      names: ToolNames) -> list[ToolCall]:
        cid = turn.conversation_id
        self.inspector.record("agent", {"event": "request", "backend": backend.backend_id, "model": request.model,
                                            "messages": len(request.messages), "tools": [t.name for t in request.tools]},
                                  method="agent/request")
        calls: list[ToolCall] = []
        # The stream names calls by the provider's id, which one response may give two calls: each id's
        # calls not yet ended, oldest first (deltas go to the newest, an end closes the oldest).
        open_calls: dict[str, deque[ToolCall]] = {}
        buffers: dict[str, str] = {}
        feed = PartialFeed(self.views)
        try:
            async for event in backend.stream(request):
                if isinstance(event, TextDelta) and event.text:
                    self.store.append_text(mid, event.text)
                    self.emit("chat.delta", {"conversationId": cid, "messageId": mid, "text": event.text})
                elif isinstance(event, ToolCallStart):
                    call = await self.calls.begin(turn, mid, event.call_id, event.name, names)
                    calls.append(call)
                    open_calls.setdefault(event.call_id, deque()).append(call)
                    buffers[call.id] = ""
                elif isinstance(event, ToolCallDelta) and open_calls.get(event.call_id):
                    call = open_calls[event.call_id][-1]
                    buffers[call.id] += event.arguments_delta
                    feed.update(call, buffers[call.id])
                elif isinstance(event, ToolCallEnd):
                    waiting = open_calls.get(event.call_id)
                    if waiting:
                        call = waiting.popleft()
                    else:  # a backend that sends only the end
                        call = await self.calls.begin(turn, mid, event.call_id, event.name, names)
                        calls.append(call)
                    feed.end(call)
                    self.calls.end_arguments(cid, call, buffers.get(call.id, ""), event.arguments)
                elif isinstance(event, Done):
                    self.inspector.record("agent", {"event": "done", "stopReason": event.stop_reason},
                                          method="agent/stream-done")
        finally:
            feed.close()
        # Calls that failed before running still get an answer in the history (as errors).
        return [c for c in calls if c.status in ("running", "error")]

    # ---- history and context -----------------------------------------------------------------

    def _take_context(self, cid: str) -> dict[str, Any] | None:
        # Views in the Tool runner belong to no conversation: their context goes with the next turn anywhere.
        ctx = {**self.contexts.pop("_runner", {}), **self.contexts.pop(cid, {})}
        return ctx or None

    def model_context_changed(self, view: View) -> None:
        """A view replaced its model context: it goes with the conversation's next turn."""
        cid = view.conversation_id or "_runner"
        bucket = self.contexts.setdefault(cid, {})
        if view.model_context is None:
            bucket.pop(view.id, None)
        else:
            bucket[view.id] = {"server": view.server, "tool": view.tool.name, **view.model_context}
        if view.record_id:
            self.store.update_view(view.record_id, model_context=view.model_context)
        summary = ""
        if view.model_context:
            summary = " ".join(b.get("text", "") for b in view.model_context.get("content", [])
                               if b.get("type") == "text")[:200] or "(structured data)"
        self.emit("chat.context", {"conversationId": view.conversation_id, "viewId": view.id,
                                       "server": view.server, "summary": summary, "context": view.model_context})

    async def post_app_message(self, view: View, blocks: list[dict[str, Any]]) -> None:
        """``ui/message``: the app's message starts a turn marked as the app's ("From app: …"), not the person's."""
        cid = self.start_turn(view.conversation_id, app_message_text(blocks),
                              origin=TurnOrigin(server=view.server, tool=view.tool.name), blocks=blocks)
        if view.conversation_id is None:
            view.conversation_id = cid

    async def sample(self, params: dict[str, Any]) -> dict[str, Any]:
        """``sampling/createMessage`` (a view's or a server's): one tool-less call to the current backend."""
        backend = self.backend()
        accepts = frozenset(getattr(backend, "accepts_media", frozenset()))
        request = self._request(backend, None, sampling_messages(params, accepts), [])
        if params.get("systemPrompt"):
            request.system = str(params["systemPrompt"])
        return await sample_once(backend, request, params)
