"""The agent loop, once: user message + model context → backend stream → tools → repeat.

Text deltas reach the UI as they arrive; a UI tool's view is mounted as soon as the
model starts the call and receives repaired partial arguments while they stream.
Everything shown is in the store first.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import TYPE_CHECKING, Any

from moka_shell.core.agents import (
    AgentRequest,
    ChatMessage,
    Done,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallRecord,
    ToolCallStart,
)
from moka_shell.core.naming import ToolNames
from moka_shell.core.partial_json import repair_partial_json
from moka_shell.core.secrets import get_key
from moka_shell.core.store import new_id
from moka_shell.core.views import View
from moka_shell.errors import AgentError, MokaError, NeedsKeyError, ProviderError, UnknownBackendError

if TYPE_CHECKING:
    from moka_shell.core.app import MokaApp

log = logging.getLogger("moka.chat")
MODEL_RESULT_CHARS = 60_000  # what one tool result may cost the model's context
PARTIAL_INTERVAL = 0.05


def content_text(result: dict[str, Any]) -> str:
    """The text a model gets for a tool result (structuredContent is the view's)."""
    parts = []
    for item in result.get("content") or []:
        kind = item.get("type")
        if kind == "text":
            parts.append(item.get("text", ""))
        elif kind == "resource":
            res = item.get("resource") or {}
            parts.append(res.get("text") or f"[resource {res.get('uri', '')}]")
        elif kind == "resource_link":
            parts.append(f"[resource link {item.get('uri', '')}]")
        else:
            parts.append(f"[{kind} content]")
    text = "\n".join(parts) or ("(the tool returned no text)" if not result.get("isError") else "(tool error)")
    return text if len(text) <= MODEL_RESULT_CHARS else text[:MODEL_RESULT_CHARS] + "\n… [truncated by Moka]"


def _valid_json(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


class Turn:
    """One running turn of one conversation."""

    def __init__(self, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        self.task: asyncio.Task[None] | None = None


class ChatEngine:
    """Runs chat turns against the configured backend and keeps them in the store."""

    def __init__(self, app: MokaApp) -> None:
        self.app = app
        self.store = app.store
        self.turns: dict[str, Turn] = {}
        self.contexts: dict[str, dict[str, Any]] = {}  # conversation → view id → last model context

    # ---- backend -----------------------------------------------------------------------------

    def backend_configured(self) -> bool:
        """Is a backend selected (keys are checked when a turn runs)?"""
        return bool(self.app.config.agent.backend and self.app.config.agent.backend in self.app.backends)

    def backend(self, backend_id: str | None = None) -> Any:
        """The selected backend object."""
        bid = backend_id or self.app.config.agent.backend
        if not bid:
            raise AgentError(self.no_backend_help())
        reg = self.app.backends.get(bid)
        if reg is None:
            raise UnknownBackendError(bid, list(self.app.backends))
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
        found = []
        for bid in ("ollama", "lmstudio", "llamacpp", "vllm"):
            reg = self.app.backends.get(bid)
            probe = getattr(reg.obj, "probe", None) if reg else None
            if probe is not None:
                try:
                    if await probe(self.app.config.agent.base_urls.get(bid)):
                        found.append(bid)
                except Exception:  # a probe must never break settings
                    continue
        return found

    def _request(self, backend: Any, model: str | None, messages: list[ChatMessage],
                 tools: list[Any]) -> AgentRequest:
        cfg = self.app.config.agent
        key = get_key(backend.backend_id, backend.key_env_var)
        if backend.needs_key and not key:
            raise NeedsKeyError(f"the {backend.display_name} backend needs an API key",
                                hint=f"set {backend.key_env_var} or run `moka keys set {backend.backend_id}` "
                                     "(or add it in Settings → Model)")
        options = backend.Options.model_validate(cfg.options if cfg.backend == backend.backend_id else {})
        return AgentRequest(model=model or cfg.model or backend.default_model, messages=messages, tools=tools,
                            system=cfg.system_prompt, options=options.model_dump(exclude_none=True), api_key=key,
                            base_url=cfg.base_urls.get(backend.backend_id) or backend.default_base_url)

    # ---- turns -------------------------------------------------------------------------------

    def start_turn(self, conversation_id: str | None, text: str, *, source: str | None = None,
                   backend: str | None = None, model: str | None = None) -> str:
        """Store the user's message and run the turn in the background; returns the conversation id."""
        cid = conversation_id if conversation_id and self.store.has_conversation(conversation_id) else \
            self.store.create_conversation(text.strip().splitlines()[0][:60] if text.strip() else "New chat")
        running = self.turns.get(cid)
        if running is not None and running.task is not None and not running.task.done():
            raise AgentError("a turn is already running in this conversation; stop it first")
        context = self._take_context(cid)
        msg = self.store.add_message(cid, "user", text, source=source, data={"context": context} if context else None)
        self.app.emit("chat.message", {"conversationId": cid, "message": msg})
        self.app.inspector.record("agent", {"event": "user-message", "source": source or "person", "chars": len(text)},
                                  method="agent/user")
        turn = Turn(cid)
        turn.task = asyncio.get_running_loop().create_task(self._run(turn, backend, model))
        self.turns[cid] = turn
        return cid

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
        try:
            backend = self.backend(backend_id)
            names = ToolNames(self.app.servers.all_tools())
            for step in range(self.app.config.agent.max_steps):
                history = self._history(cid, names)
                request = self._request(backend, model, history, names.model_tools() if backend.supports_tools else [])
                reply = self.store.add_message(cid, "assistant", "")
                self.app.emit("chat.message", {"conversationId": cid, "message": reply})
                calls = await self._stream(cid, reply["id"], backend, request, names)
                if not calls:
                    break
                for call in calls:
                    await self._run_call(cid, call)
            else:
                self._error(cid, reply, f"stopped after {self.app.config.agent.max_steps} steps (the step limit)",
                            "step_limit")
        except asyncio.CancelledError:
            if reply is not None:
                self.store.set_error(reply["id"], "stopped")
            self.app.emit("chat.error", {"conversationId": cid, "message": "Stopped.", "kind": "stopped"})
        except (ProviderError, NeedsKeyError) as exc:
            self._error(cid, reply, str(exc), getattr(exc, "kind", "needs_key"))
        except MokaError as exc:
            self._error(cid, reply, str(exc), "error")
        except Exception as exc:  # a backend bug must not lose the conversation
            log.exception("chat turn failed")
            self._error(cid, reply, f"the model backend failed: {type(exc).__name__}: {exc}", "error")
        finally:
            self.app.emit("chat.done", {"conversationId": cid})
            self.app.inspector.record("agent", {"event": "turn-done"}, method="agent/done")

    def _error(self, cid: str, reply: dict[str, Any] | None, message: str, kind: str) -> None:
        if reply is None:
            reply = self.store.add_message(cid, "assistant", "")
            self.app.emit("chat.message", {"conversationId": cid, "message": reply})
        self.store.set_error(reply["id"], message)
        self.app.inspector.record("agent", {"event": "error", "kind": kind, "message": message}, method="agent/error")
        self.app.emit("chat.error", {"conversationId": cid, "messageId": reply["id"], "message": message, "kind": kind})

    async def _stream(self, cid: str, mid: str, backend: Any, request: AgentRequest,
                      names: ToolNames) -> list[dict[str, Any]]:
        self.app.inspector.record("agent", {"event": "request", "backend": backend.backend_id, "model": request.model,
                                            "messages": len(request.messages), "tools": [t.name for t in request.tools]},
                                  method="agent/request")
        calls: dict[str, dict[str, Any]] = {}
        buffers: dict[str, str] = {}
        last_partial: dict[str, float] = {}
        async for event in backend.stream(request):
            if isinstance(event, TextDelta) and event.text:
                self.store.append_text(mid, event.text)
                self.app.emit("chat.delta", {"conversationId": cid, "messageId": mid, "text": event.text})
            elif isinstance(event, ToolCallStart):
                calls[event.call_id] = await self._begin_call(cid, mid, event.call_id, event.name, names)
                buffers[event.call_id] = ""
            elif isinstance(event, ToolCallDelta) and event.call_id in calls:
                buffers[event.call_id] += event.arguments_delta
                view = calls[event.call_id].get("_view")
                now = time.monotonic()
                if view is not None and now - last_partial.get(event.call_id, 0) >= PARTIAL_INTERVAL:
                    partial = repair_partial_json(buffers[event.call_id])
                    if partial is not None:
                        last_partial[event.call_id] = now
                        self.app.apphost.set_partial(view, partial)
            elif isinstance(event, ToolCallEnd):
                call = calls.get(event.call_id) or await self._begin_call(cid, mid, event.call_id, event.name, names)
                calls[event.call_id] = call
                raw = buffers.get(event.call_id, "")
                if raw.strip() and not event.arguments and not _valid_json(raw):
                    # Cut-off or broken arguments must not run the tool with its defaults.
                    call.update(status="error", error=f"the model sent arguments that are not valid JSON: {raw[:200]}")
                    self.store.update_call(call["id"], status="error", error=call["error"])
                    if call.get("_view") is not None:
                        self.app.apphost.cancel(call["_view"], call["error"])
                    self._emit_call(cid, mid, call)
                    continue
                call["arguments"], call["status"] = event.arguments, "running"
                self.store.update_call(call["id"], arguments=event.arguments, status="running")
                if call.get("_view") is not None:
                    self.app.apphost.set_input(call["_view"], event.arguments)
                self._emit_call(cid, mid, call)
            elif isinstance(event, Done):
                self.app.inspector.record("agent", {"event": "done", "stopReason": event.stop_reason},
                                          method="agent/stream-done")
        # Calls that failed before running still get an answer in the history (as errors).
        return [c for c in calls.values() if c["status"] in ("running", "error")]

    async def _begin_call(self, cid: str, mid: str, call_id: str, model_name: str, names: ToolNames) -> dict[str, Any]:
        entry = names.resolve(model_name)
        call: dict[str, Any] = {"id": call_id or new_id("t"), "server": entry.server if entry else "?",
                                "tool": entry.name if entry else model_name, "modelName": model_name,
                                "arguments": {}, "status": "streaming", "_mid": mid}
        view: View | None = None
        if entry is not None and entry.resource_uri:
            try:
                view = await self.app.apphost.open_view(entry.server, entry.name, call_id=call["id"],
                                                        conversation_id=cid, message_id=mid)
            except MokaError as exc:
                log.info("no view for %s: %s", model_name, exc)
        if view is not None:
            view.record_id = view.id
            call["_view"], call["viewId"], call["recordId"] = view, view.id, view.id
            self.store.add_view(view.id, cid, call["id"], entry.server, entry.name,  # type: ignore[union-attr]
                                view.resource.uri)
        self.store.add_call(cid, mid, call)
        self._emit_call(cid, mid, call)
        return call

    def _emit_call(self, cid: str, mid: str, call: dict[str, Any]) -> None:
        public = {k: v for k, v in call.items() if not k.startswith("_")}
        self.app.emit("chat.tool", {"conversationId": cid, "messageId": mid, "call": public})

    async def _run_call(self, cid: str, call: dict[str, Any]) -> None:
        view = call.get("_view")
        mid = call["_mid"]
        if call["status"] == "error":
            return  # already answered (broken arguments)
        if call["server"] == "?":
            call.update(status="error", error=f"the model asked for an unknown tool {call['modelName']!r}")
        else:
            try:
                _cid, _view, result = await self.app.apphost.run_tool(
                    call["server"], call["tool"], call["arguments"], view=view, conversation_id=cid,
                    message_id=mid, with_view=view is not None)
                call.update(status="done", result=result)
            except asyncio.CancelledError:
                call.update(status="cancelled", error="stopped by the person")
                self._finish_call(cid, mid, call, view)
                raise
            except MokaError as exc:
                call.update(status="error", error=str(exc))
        self._finish_call(cid, mid, call, view)

    def _finish_call(self, cid: str, mid: str, call: dict[str, Any], view: View | None) -> None:
        self.store.update_call(call["id"], status=call["status"], result=call.get("result"), error=call.get("error"))
        if view is not None:
            self.store.update_view(view.record_id or view.id, arguments=view.arguments, result=view.result,
                                   cancelled=view.cancelled)
        self._emit_call(cid, mid, call)

    # ---- history and context -----------------------------------------------------------------

    def _history(self, cid: str, names: ToolNames) -> list[ChatMessage]:
        out: list[ChatMessage] = []
        for msg in self.store.messages(cid):
            if msg["role"] == "user":
                text = msg["content"]
                context = (msg.get("data") or {}).get("context")
                if context:
                    text = self._context_preamble(context) + "\n\n" + text
                out.append(ChatMessage(role="user", content=text))
            elif msg["role"] == "assistant":
                calls = [c for c in msg["toolCalls"] if c["status"] in ("done", "error", "cancelled")]
                if not msg["content"] and not calls:
                    continue
                out.append(ChatMessage(role="assistant", content=msg["content"], tool_calls=[
                    ToolCallRecord(id=c["id"], name=c["modelName"], arguments=c["arguments"]) for c in calls]))
                for c in calls:
                    result = c.get("result") or {}
                    text = content_text(result) if result else f"Error: {c.get('error') or 'the call failed'}"
                    out.append(ChatMessage(role="tool", content=text, tool_call_id=c["id"], name=c["modelName"],
                                           is_error=bool(result.get("isError")) or not result,
                                           structured_content=result.get("structuredContent")))
        return out

    @staticmethod
    def _context_preamble(context: dict[str, Any]) -> str:
        parts = []
        for item in context.values():
            body = "\n".join(b.get("text", "") for b in item.get("content", []) if b.get("type") == "text")
            if "structuredContent" in item:
                body += ("\n" if body else "") + json.dumps(item["structuredContent"], default=str)
            parts.append(f"[Context from the {item['server']}/{item['tool']} app view]\n{body}")
        return "\n\n".join(parts)

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
        self.app.emit("chat.context", {"conversationId": view.conversation_id, "viewId": view.id,
                                       "server": view.server, "summary": summary, "context": view.model_context})

    async def post_app_message(self, view: View, blocks: list[dict[str, Any]]) -> None:
        """``ui/message``: the view's message becomes the person's turn ("From app: …") and runs the agent."""
        text = "\n".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
        if not text:
            text = json.dumps(blocks, default=str)[:4000]
        cid = self.start_turn(view.conversation_id, text, source="app")
        if view.conversation_id is None:
            view.conversation_id = cid

    async def sample(self, params: dict[str, Any]) -> dict[str, Any]:
        """``sampling/createMessage`` for a view: one tool-less call to the current backend."""
        backend = self.backend()
        messages = []
        for m in params.get("messages") or []:
            content = m.get("content")
            blocks = content if isinstance(content, list) else [content]
            text = "\n".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
            messages.append(ChatMessage(role="assistant" if m.get("role") == "assistant" else "user", content=text))
        request = self._request(backend, None, messages, [])
        if params.get("systemPrompt"):
            request.system = str(params["systemPrompt"])
        text = ""
        async for event in backend.stream(request):
            if isinstance(event, TextDelta):
                text += event.text
        return {"role": "assistant", "content": {"type": "text", "text": text}, "model": request.model,
                "stopReason": "endTurn"}

    async def reopen_view(self, record_id: str) -> View | None:
        """Render a stored view again, with its input and result replayed."""
        rec = self.store.view(record_id)
        if rec is None:
            raise AgentError(f"no stored view {record_id!r}")
        view = await self.app.apphost.open_view(rec["server"], rec["tool"], call_id=rec["toolCallId"],
                                                conversation_id=rec["conversationId"], record_id=record_id)
        if view is None:
            return None
        if rec["arguments"] is not None:
            self.app.apphost.set_input(view, rec["arguments"])
        if rec["result"] is not None:
            self.app.apphost.set_result(view, rec["result"])
        elif rec["cancelled"]:
            self.app.apphost.cancel(view, rec["cancelled"])
        elif rec["arguments"] is not None:
            self.app.apphost.cancel(view, "Moka stopped before this call finished.")
        return view

