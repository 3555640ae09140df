"""Edit a message and resend, regenerate the last answer, continue a reply a crash cut off.

An edit *replaces* what came after the edited message; it does not keep it as a branch. The later
turns ran tools on real servers (files written, messages sent) that an edit can't undo, and a
branch switcher would suggest it can; one line of history is also what the model reads, what
the export shows and what a second window sees. The person is asked before anything is removed
(the page's confirm names how many messages go).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from moka_shell.core.chat.approval import TurnOrigin
from moka_shell.errors import InvalidParamsError

if TYPE_CHECKING:
    from moka_shell.core.chat.engine import ChatEngine


_CLOSING: set[asyncio.Task[None]] = set()


def _origin(msg: dict[str, Any]) -> TurnOrigin:
    """Who the turn runs for: an app's message keeps its app (its calls are approved as the app's)."""
    app = (msg.get("data") or {}).get("app") or {}
    return TurnOrigin(server=app.get("server"), tool=app.get("tool")) if msg.get("source") == "app" else TurnOrigin()


def _truncate(engine: ChatEngine, cid: str, mid: str) -> int:
    messages = engine.store.messages(cid)
    at = next((i for i, m in enumerate(messages) if m["id"] == mid), len(messages))
    gone = {c["id"] for m in messages[at + 1:] for c in m.get("toolCalls", [])}
    removed = engine.store.remove_from(cid, mid, keep=True)
    # The removed turns' live views are torn down properly, not left running without a card.
    for view in list(engine.views.views.values()):
        if view.conversation_id == cid and view.call_id in gone:
            task = asyncio.get_running_loop().create_task(engine.views.close(view, "the turn was replaced"))
            _CLOSING.add(task)  # held until done, so it is not collected half-way
            task.add_done_callback(_CLOSING.discard)
    engine.emit("chat.truncated", {"conversationId": cid, "afterMessageId": mid})
    return removed


def interrupted(engine: ChatEngine, cid: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mark replies still "streaming" in the store while no turn runs here: a crash or kill cut them off."""
    if engine.running(cid):
        return messages
    for msg in messages:
        if msg.get("state") == "streaming":
            msg["interrupted"] = True
    return messages


def edit_and_resend(engine: ChatEngine, cid: str, mid: str, text: str) -> int:
    """Give the person's message new text, drop what came after it, and run the turn again."""
    engine.check_idle(cid)
    msg = engine.store.message(mid)
    if msg is None or msg["conversationId"] != cid:
        raise InvalidParamsError(f"no message {mid!r} in conversation {cid!r}")
    if msg["role"] != "user" or msg.get("source") == "app":
        raise InvalidParamsError("only your own messages can be edited (not the model's, not an app's)")
    if not text.strip() and not msg["data"].get("attachments"):
        raise InvalidParamsError("the message is empty")
    engine.store.set_content(mid, text)
    removed = _truncate(engine, cid, mid)
    engine.emit("chat.message", {"conversationId": cid, "message": {**msg, "content": text, "toolCalls": [],
                                                                    "edited": True}})
    engine.launch(cid, _origin(msg))
    return removed


def regenerate(engine: ChatEngine, cid: str) -> int:
    """Drop the answer to the last message and ask the model again."""
    engine.check_idle(cid)
    users = [m for m in engine.store.messages(cid) if m["role"] == "user"]
    if not users:
        raise InvalidParamsError("there is no message to answer again in this conversation")
    removed = _truncate(engine, cid, users[-1]["id"])
    engine.launch(cid, _origin(users[-1]))
    return removed


def continue_reply(engine: ChatEngine, cid: str) -> None:
    """A reply cut off by a crash: mark it interrupted (its open calls failed) and let the model go on."""
    engine.check_idle(cid)
    messages = engine.store.messages(cid)
    if not any(m["role"] == "user" for m in messages):
        raise InvalidParamsError("there is nothing to continue in this conversation")
    engine.store.cut_off(cid)
    users = [m for m in messages if m["role"] == "user"]
    engine.launch(cid, _origin(users[-1]))
