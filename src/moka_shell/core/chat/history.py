"""What the model reads: stored messages as backend history, tool results, views' context, attachments.

Images and other media go beside the text when the backend takes them (core/chat/media.py).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from moka_shell.core.chat.backends import ChatMessage, MediaPart, ToolCallRecord
from moka_shell.core.chat.media import Delivery, cap_media, deliver_blocks

Files = Callable[[str], list[tuple[dict[str, Any], bytes]]]  # message id → its attachments and their bytes

MODEL_RESULT_CHARS = 60_000  # what one tool result may cost the model's context


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


def tool_result_for_model(result: dict[str, Any], accepts: frozenset[str]) -> tuple[str, list[MediaPart]]:
    """A tool result as the model gets it: its text, and its images when the backend takes them."""
    out = deliver_blocks(result.get("content") or [], accepts)
    text = out.text() or ("(the tool returned no text)" if not result.get("isError") else "(tool error)")
    if len(text) > MODEL_RESULT_CHARS:
        text = text[:MODEL_RESULT_CHARS] + "\n… [truncated by Moka]"
    return text, out.media


def context_preamble(context: dict[str, Any], accepts: frozenset[str] = frozenset()) -> tuple[str, list[MediaPart]]:
    """The views' model context: the text that goes before the person's message, and its media."""
    parts, media = [], []
    for item in context.values():
        out = deliver_blocks(item.get("content", []), accepts)
        body = out.text()
        if "structuredContent" in item:
            body += ("\n" if body else "") + json.dumps(item["structuredContent"], default=str)
        parts.append(quoted_block(f"Context from the app {_name(item['tool'])} of server {_name(item['server'])}",
                                  body, "End of the app's context"))
        media += out.media
    return "\n\n".join(parts), media


def app_message_text(blocks: list[dict[str, Any]]) -> str:
    """A ``ui/message``'s content blocks as readable text: every block shows, resources included."""
    parts = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "resource":
            raw = block.get("resource")
            res: dict[str, Any] = raw if isinstance(raw, dict) else {}
            body = res.get("text") if isinstance(res.get("text"), str) else "(binary content)"
            parts.append(f"[resource {res.get('uri', '')}]\n{body}")
        else:
            parts.append(json.dumps(block, default=str)[:4000])
    return "\n\n".join(p for p in parts if p) or "(an empty message)"


def _name(value: Any) -> str:
    # A tool's name is the server's to choose: quoted as JSON, so no line break or bracket of it ends the marker.
    return json.dumps(str(value), ensure_ascii=False)


def quoted_block(head: str, text: str, end: str) -> str:
    """``text`` from an app between markers it cannot forge: every one of its lines starts with ``> ``.

    An app that writes the end marker and then "the person says …" only writes more quoted lines, so
    the block ends at the first line without the prefix, which Moka alone writes (finding G6).
    ``splitlines`` breaks at every line boundary a model may read as one (CR, U+2028, form feed…).
    """
    lines = text.splitlines() or [""]
    quoted = "\n".join("> " + line for line in lines)
    return f"[{head}, not from the person; each of its lines starts with \"> \"]\n{quoted}\n[{end}]"


def app_message_for_model(text: str, app: dict[str, Any]) -> str:
    """An app's message as the model reads it: marked as the app's, so it is never taken for the person's."""
    return quoted_block(f"Message from the app {_name(app.get('tool'))} of server {_name(app.get('server'))}",
                        text, "End of the app's message")


def _user_message(msg: dict[str, Any], accepts: frozenset[str], files: Files | None) -> ChatMessage:
    data = msg.get("data") or {}
    text, media = msg["content"], []
    if msg.get("source") == "app":
        if isinstance(data.get("blocks"), list):  # the ui/message blocks themselves: images reach the model
            out = deliver_blocks(data["blocks"], accepts)
            text, media = out.text() or text, out.media
        text = app_message_for_model(text, data.get("app") or {"tool": "unknown", "server": "unknown"})
    if data.get("attachments") and files is not None:
        attached = Delivery(accepts)
        for meta, blob in files(msg["id"]):
            attached.add_file(str(meta["name"]), str(meta["mimeType"]), blob)
        text = (text + "\n\n" if text else "") + attached.text()
        media += attached.media
    if data.get("context"):
        preamble, context_media = context_preamble(data["context"], accepts)
        text, media = preamble + "\n\n" + text, context_media + media
    return ChatMessage(role="user", content=text, media=media)


def wire_ids(calls: list[dict[str, Any]]) -> dict[str, str]:
    """The id each call of one reply is answered under: the model server's own where it tells the calls
    apart (what it sent, as it expects), else Moka's (an empty id, or one the reply gave two calls)."""
    given = Counter(c.get("providerId") or "" for c in calls)
    return {c["id"]: p if (p := c.get("providerId") or "") and given[p] == 1 else c["id"] for c in calls}


def build_history(messages: list[dict[str, Any]], accepts: frozenset[str] = frozenset(),
                  files: Files | None = None) -> list[ChatMessage]:
    """A stored conversation as the messages a backend is sent (media of the kinds in ``accepts``)."""
    out: list[ChatMessage] = []
    for msg in messages:
        if msg["role"] == "user":
            out.append(_user_message(msg, accepts, files))
        elif msg["role"] == "assistant":
            calls = [c for c in msg["toolCalls"] if c["status"] in ("done", "error", "cancelled", "denied")]
            if not msg["content"] and not calls:
                continue
            wire = wire_ids(calls)
            out.append(ChatMessage(role="assistant", content=msg["content"], tool_calls=[
                ToolCallRecord(id=wire[c["id"]], name=c["modelName"], arguments=c["arguments"]) for c in calls]))
            for c in calls:
                result = c.get("result") or {}
                text, media = tool_result_for_model(result, accepts) if result else \
                    (f"Error: {c.get('error') or 'the call failed'}", [])
                out.append(ChatMessage(role="tool", content=text, media=media, tool_call_id=wire[c["id"]],
                                       name=c["modelName"], is_error=bool(result.get("isError")) or not result,
                                       structured_content=result.get("structuredContent")))
    cap_media(out)
    return out
