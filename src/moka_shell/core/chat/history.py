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


def build_history(messages: list[dict[str, Any]]) -> list[ChatMessage]:
    """A stored conversation as the messages a backend is sent."""
    out: list[ChatMessage] = []
    for msg in messages:
        if msg["role"] == "user":
            text = msg["content"]
            context = (msg.get("data") or {}).get("context")
            if context:
                text = context_preamble(context) + "\n\n" + text
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
