"""Bridge methods for chat and conversations (see docs/bridge-api.md)."""

from __future__ import annotations

import base64
import json
import re
import time
from typing import TYPE_CHECKING, Any

from moka_shell.bridge.attachments import read_attachments
from moka_shell.bridge.params import Params, opt_dict, opt_int, opt_str, req_str
from moka_shell.core.chat.rewind import continue_reply, edit_and_resend, interrupted, regenerate
from moka_shell.errors import InvalidParamsError

if TYPE_CHECKING:
    from moka_shell.core.app import MokaApp


def export_markdown(title: str, messages: list[dict[str, Any]]) -> str:
    """A conversation as readable Markdown."""
    lines = [f"# {title}", ""]
    for m in messages:
        who = "From app" if m.get("source") == "app" else {"user": "You", "assistant": "Assistant"}.get(m["role"], m["role"])
        lines.append(f"**{who}:** {m['content']}".rstrip())
        for c in m.get("toolCalls", []):
            lines.append(f"\n- tool `{c['server']}/{c['tool']}` ({c['status']}) with `{json.dumps(c['arguments'])}`")
        if m.get("error"):
            lines.append(f"\n> error: {m['error']}")
        lines.append("")
    return "\n".join(lines)


def _page_limit(p: Params, default: int) -> int:
    """How many messages a page may hold: 1 to 1,000."""
    limit = opt_int(p, "limit", default)
    if limit is None or not 1 <= limit <= 1000:
        raise InvalidParamsError(f"'limit' must be 1 to 1000, not {limit}")
    return limit


class ChatMethods:
    """``chat.*`` and ``conversations.*`` (a run that keeps no conversations answers NoConversationsError)."""

    def __init__(self, app: MokaApp) -> None:
        self.app = app

    def methods(self) -> dict[str, Any]:
        """Method name → coroutine function."""
        return {"chat.send": self.send, "chat.stop": self.stop, "chat.approve": self.approve,
                "chat.approvals": self.approvals, "chat.edit": self.edit, "chat.regenerate": self.regenerate,
                "chat.continue": self.continue_, "chat.attachment": self.attachment,
                "conversations.configure": self.configure, "conversations.list": self.list_,
                "conversations.get": self.get, "conversations.messages": self.messages,
                "conversations.rename": self.rename,
                "conversations.delete": self.delete, "conversations.export": self.export}

    async def send(self, p: Params) -> dict[str, Any]:
        """The person's message (with files, and optionally a backend and model for this conversation)."""
        text = str(p.get("text") or "").strip()
        attachments = read_attachments(p.get("attachments"))
        if not text and not attachments:
            raise InvalidParamsError("the message is empty")
        engine, system = self.app.chat, opt_str(p, "systemPrompt")
        if system is not None and len(system) > 20_000:
            raise InvalidParamsError("the system prompt may be at most 20,000 characters")
        cid = engine.start_turn(opt_str(p, "conversationId"), text, attachments=attachments,
                                backend=opt_str(p, "backend"), model=opt_str(p, "model"), system_prompt=system)
        return {"conversationId": cid}

    async def edit(self, p: Params) -> dict[str, Any]:
        """Give one of the person's messages new text; what came after it is replaced by a new answer."""
        removed = edit_and_resend(self.app.chat, req_str(p, "conversationId"), req_str(p, "messageId"),
                                  str(p.get("text") or "").strip())
        return {"removed": removed}

    async def regenerate(self, p: Params) -> dict[str, Any]:
        """Drop the last answer and ask the model again."""
        return {"removed": regenerate(self.app.chat, req_str(p, "conversationId"))}

    async def continue_(self, p: Params) -> dict[str, Any]:
        """Go on after a reply that a crash cut off (it is kept, marked interrupted)."""
        continue_reply(self.app.chat, req_str(p, "conversationId"))
        return {}

    async def attachment(self, p: Params) -> dict[str, Any]:
        """One stored attachment with its contents in base64 (the page shows images from it)."""
        found = self.app.chat.store.attachment(req_str(p, "id"))
        if found is None:
            raise InvalidParamsError(f"no attachment {p.get('id')!r}")
        meta, data = found
        return {**meta, "data": base64.b64encode(data).decode("ascii")}

    async def configure(self, p: Params) -> dict[str, Any]:
        """The conversation's own backend, model and system prompt (null or "" follows Settings again)."""
        engine, cid = self.app.chat, req_str(p, "id")
        if not engine.store.has_conversation(cid):
            raise InvalidParamsError(f"no conversation {cid!r}")
        values = {k: opt_str(p, k) for k in ("backend", "model", "systemPrompt") if k in p}
        if values.get("backend") and values["backend"] not in engine.backends:
            raise InvalidParamsError(f"unknown backend {values['backend']!r} (known: {', '.join(sorted(engine.backends))})")
        if "systemPrompt" in values and len(values["systemPrompt"] or "") > 20_000:
            raise InvalidParamsError("the system prompt may be at most 20,000 characters")
        engine.store.set_settings(cid, **values)
        return {"settings": engine.store.settings(cid)}

    async def stop(self, p: Params) -> dict[str, Any]:
        """Stop the running turn."""
        self.app.chat.stop(req_str(p, "conversationId"))
        return {}

    async def approve(self, p: Params) -> dict[str, Any]:
        """The person's answer to a tool call waiting for approval: once, always, deny, or trust.

        ``trust`` (offered on the card when it would let this call run) trusts the server's tool
        annotations from now on (``trustAnnotations`` in its config entry) and allows this call once.
        """
        decision, call_id = req_str(p, "decision"), req_str(p, "callId")
        arguments = opt_dict(p, "arguments") if p.get("arguments") is not None else None
        approvals = self.app.chat.approvals
        if decision == "trust":
            call = approvals.waiting(call_id)
            if call is None or not (call.approval or {}).get("offerTrust"):
                raise InvalidParamsError("'trust' answers only a call whose card offers it (a read-only tool of a "
                                         "server whose hints you do not trust yet, in a turn you started)")
            entry = self.app.server_configs.change(call.server, trustAnnotations=True)
            if call.server in self.app.servers.connections:
                self.app.servers.apply_settings(call.server, entry)
            decision = "once"
        approvals.answer(call_id, decision, arguments)  # type: ignore[arg-type]
        return {}

    async def approvals(self, p: Params) -> list[dict[str, Any]]:
        """Tool calls waiting for the person now (a page that reconnects shows their cards again)."""
        return self.app.chat.approvals.pending()

    async def list_(self, p: Params) -> list[dict[str, Any]]:
        """One page of conversations, newest first, optionally searched; ``before`` continues a listing."""
        before = opt_dict(p, "before")
        cursor = None
        if before:
            if not isinstance(before.get("updatedAt"), (int, float)) or not isinstance(before.get("id"), str):
                raise InvalidParamsError("'before' must be {updatedAt, id} of the last conversation listed")
            cursor = (float(before["updatedAt"]), before["id"])
        limit = opt_int(p, "limit", 200) or 200
        if not 1 <= limit <= 500:
            raise InvalidParamsError(f"'limit' must be 1 to 500, not {limit}")
        return self.app.chat.store.list_conversations(opt_str(p, "query"), limit=limit, before=cursor)

    async def get(self, p: Params) -> dict[str, Any]:
        """One conversation with its newest messages (``limit``, 200 by default), and whether a turn is running."""
        engine, cid = self.app.chat, req_str(p, "id")
        if not engine.store.has_conversation(cid):
            raise InvalidParamsError(f"no conversation {cid!r}")
        messages, older = engine.store.messages_page(cid, limit=_page_limit(p, 200))
        return {"id": cid, "title": engine.store.title(cid), "messages": interrupted(engine, cid, messages),
                "hasOlder": older, "running": engine.running(cid), "settings": engine.store.settings(cid)}

    async def messages(self, p: Params) -> dict[str, Any]:
        """A page of a conversation's messages before or after a sequence number; ``more`` if it goes on."""
        engine, cid = self.app.chat, req_str(p, "id")
        if not engine.store.has_conversation(cid):
            raise InvalidParamsError(f"no conversation {cid!r}")
        before, after = opt_int(p, "before"), opt_int(p, "after")
        if (before is None) == (after is None):
            raise InvalidParamsError("give one of 'before' or 'after': the seq of the first or last message shown")
        page, more = engine.store.messages_page(cid, before=before, after=after, limit=_page_limit(p, 100))
        return {"messages": interrupted(engine, cid, page), "more": more}

    async def rename(self, p: Params) -> dict[str, Any]:
        """Rename a conversation."""
        self.app.chat.store.rename(req_str(p, "id"), req_str(p, "title"))
        return {}

    async def delete(self, p: Params) -> dict[str, Any]:
        """Stop and delete a conversation."""
        engine, cid = self.app.chat, req_str(p, "id")
        engine.stop(cid)
        engine.store.delete(cid)
        return {}

    async def export(self, p: Params) -> dict[str, Any]:
        """A conversation as a JSON or Markdown file."""
        engine, cid = self.app.chat, req_str(p, "id")
        title, messages = engine.store.title(cid), engine.store.messages(cid)
        slug = re.sub(r"[^A-Za-z0-9]+", "-", title).strip("-")[:40] or "conversation"
        if p.get("format") == "markdown":
            return {"filename": f"{slug}.md", "content": export_markdown(title, messages)}
        doc = {"id": cid, "title": title, "exportedAt": time.time(), "messages": messages}
        return {"filename": f"{slug}.json", "content": json.dumps(doc, indent=2, default=str)}
