"""Bridge methods for chat and conversations (see docs/bridge-api.md)."""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING, Any

from moka_shell.bridge.params import Params, opt_dict, opt_str, req_str
from moka_shell.core.chat.engine import ChatEngine
from moka_shell.errors import BridgeError, InvalidParamsError

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


class ChatMethods:
    """``chat.*`` and ``conversations.*`` (they need the app's ChatEngine)."""

    def __init__(self, app: MokaApp) -> None:
        self.app = app

    def methods(self) -> dict[str, Any]:
        """Method name → coroutine function."""
        return {"chat.send": self.send, "chat.stop": self.stop, "chat.approve": self.approve,
                "chat.approvals": self.approvals, "conversations.list": self.list_,
                "conversations.get": self.get, "conversations.rename": self.rename,
                "conversations.delete": self.delete, "conversations.export": self.export}

    def _engine(self) -> ChatEngine:
        if self.app.chat is None:
            raise BridgeError(BridgeError.DENIED, "conversations are not available in this mode")
        return self.app.chat

    async def send(self, p: Params) -> dict[str, Any]:
        """The person's message: starts a turn."""
        text = str(p.get("text") or "").strip()
        if not text:
            raise InvalidParamsError("the message is empty")
        return {"conversationId": self._engine().start_turn(opt_str(p, "conversationId"), text)}

    async def stop(self, p: Params) -> dict[str, Any]:
        """Stop the running turn."""
        self._engine().stop(req_str(p, "conversationId"))
        return {}

    async def approve(self, p: Params) -> dict[str, Any]:
        """The person's answer to a tool call waiting for approval: once, always, or deny."""
        decision = req_str(p, "decision")
        arguments = opt_dict(p, "arguments") if p.get("arguments") is not None else None
        self._engine().approvals.answer(req_str(p, "callId"), decision, arguments)  # type: ignore[arg-type]
        return {}

    async def approvals(self, p: Params) -> list[dict[str, Any]]:
        """Tool calls waiting for the person now (a page that reconnects shows their cards again)."""
        return self._engine().approvals.pending()

    async def list_(self, p: Params) -> list[dict[str, Any]]:
        """Conversations, newest first, optionally searched."""
        return self._engine().store.list_conversations(opt_str(p, "query"))

    async def get(self, p: Params) -> dict[str, Any]:
        """One conversation with its messages, and whether a turn is running."""
        engine, cid = self._engine(), req_str(p, "id")
        if not engine.store.has_conversation(cid):
            raise InvalidParamsError(f"no conversation {cid!r}")
        return {"id": cid, "title": engine.store.title(cid), "messages": engine.store.messages(cid),
                "running": engine.running(cid)}

    async def rename(self, p: Params) -> dict[str, Any]:
        """Rename a conversation."""
        self._engine().store.rename(req_str(p, "id"), req_str(p, "title"))
        return {}

    async def delete(self, p: Params) -> dict[str, Any]:
        """Stop and delete a conversation."""
        engine, cid = self._engine(), req_str(p, "id")
        engine.stop(cid)
        engine.store.delete(cid)
        return {}

    async def export(self, p: Params) -> dict[str, Any]:
        """A conversation as a JSON or Markdown file."""
        engine, cid = self._engine(), req_str(p, "id")
        title, messages = engine.store.title(cid), engine.store.messages(cid)
        slug = re.sub(r"[^A-Za-z0-9]+", "-", title).strip("-")[:40] or "conversation"
        if p.get("format") == "markdown":
            return {"filename": f"{slug}.md", "content": export_markdown(title, messages)}
        doc = {"id": cid, "title": title, "exportedAt": time.time(), "messages": messages}
        return {"filename": f"{slug}.json", "content": json.dumps(doc, indent=2, default=str)}
