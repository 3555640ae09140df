"""What the model reads: stored messages as backend history, tool results as text, views' context."""

from __future__ import annotations

import json
from typing import Any

from moka_shell.core.chat.backends import ChatMessage, ToolCallRecord

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


def context_preamble(context: dict[str, Any]) -> str:
    """The views' model context, as the text that goes before the person's message."""
    parts = []
    for item in context.values():
        body = "\n".join(b.get("text", "") for b in item.get("content", []) if b.get("type") == "text")
        if "structuredContent" in item:
            body += ("\n" if body else "") + json.dumps(item["structuredContent"], default=str)
        parts.append(f"[Context from the {item['server']}/{item['tool']} app view]\n{body}")
    return "\n\n".join(parts)


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


def app_message_for_model(text: str, app: dict[str, Any]) -> str:
    """An app's message as the model reads it: marked as the app's, so it is never taken for the person's."""
    return (f"[Message from the {app.get('tool')} app of server {app.get('server')}, not from the person]\n"
            f"{text}\n[End of the app's message]")


def build_history(messages: list[dict[str, Any]]) -> list[ChatMessage]:
    """A stored conversation as the messages a backend is sent."""
    out: list[ChatMessage] = []
    for msg in messages:
        if msg["role"] == "user":
            text = msg["content"]
            app = (msg.get("data") or {}).get("app")
            if msg.get("source") == "app":
                text = app_message_for_model(text, app or {"tool": "unknown", "server": "unknown"})
            context = (msg.get("data") or {}).get("context")
            if context:
                text = context_preamble(context) + "\n\n" + text
            out.append(ChatMessage(role="user", content=text))
        elif msg["role"] == "assistant":
            calls = [c for c in msg["toolCalls"] if c["status"] in ("done", "error", "cancelled", "denied")]
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
