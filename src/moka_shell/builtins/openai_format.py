"""Moka's provider-neutral messages as OpenAI chat-completions messages, images included.

Images go as ``image_url`` content parts with a ``data:`` URL. Chat completions allows only
text in a ``tool`` message, so the images of the tool results of one assistant turn follow
those tool messages in one user message that says whose they are (the tool messages must
come straight after the assistant's ``tool_calls``, so it can't go between them).
"""

from __future__ import annotations

import json
from typing import Any

from moka_shell.core.chat.backends import ChatMessage, MediaPart, ModelTool


def image_part(media: MediaPart) -> dict[str, Any]:
    """One image as a chat-completions content part."""
    return {"type": "image_url", "image_url": {"url": f"data:{media.mime_type};base64,{media.data}"}}


def audio_part(media: MediaPart) -> dict[str, Any]:
    """One audio clip as an ``input_audio`` part (wav and mp3 are the formats the API names)."""
    fmt = "mp3" if "mpeg" in media.mime_type or "mp3" in media.mime_type else "wav"
    return {"type": "input_audio", "input_audio": {"data": media.data, "format": fmt}}


def media_parts(items: list[MediaPart]) -> list[dict[str, Any]]:
    """Content parts for a message's media."""
    return [image_part(m) if m.kind == "image" else audio_part(m) for m in items]


def user_content(m: ChatMessage) -> str | list[dict[str, Any]]:
    """A user message's content: a plain string, or text and image parts."""
    if not m.media:
        return m.content
    parts: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
    return parts + media_parts(m.media)


def tool_result_text(m: ChatMessage) -> str:
    """A tool message as text; chat completions has no error flag, so errors say so."""
    text = m.content
    if not text and m.structured_content is not None:
        text = json.dumps(m.structured_content, ensure_ascii=False)
    return f"Error: {text}" if m.is_error and not text.lower().startswith("error") else text


def to_openai_messages(messages: list[ChatMessage], system: str | None) -> list[dict[str, Any]]:
    """Convert the conversation to chat-completions messages, system prompt first."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    pending: list[tuple[str, list[MediaPart]]] = []  # (tool name, images) waiting for the tool run to end

    def flush() -> None:
        if not pending:
            return
        names = ", ".join(dict.fromkeys(name for name, _ in pending))
        parts: list[dict[str, Any]] = [{"type": "text", "text": f"[Images returned by the tool call(s) above: {names}]"}]
        for _name, media in pending:
            parts += media_parts(media)
        out.append({"role": "user", "content": parts})
        pending.clear()

    for m in messages:
        if m.role != "tool":
            flush()
        if m.role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": m.content}
            if m.tool_calls:
                msg["content"] = m.content or None  # OpenAI wants null, not "", beside tool calls
                msg["tool_calls"] = [
                    {"id": c.id, "type": "function",
                     "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)}}
                    for c in m.tool_calls
                ]
            out.append(msg)
        elif m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id or "", "content": tool_result_text(m)})
            if m.media:
                pending.append((m.name or "tool", m.media))
        elif m.role == "user":
            out.append({"role": "user", "content": user_content(m)})
        else:
            out.append({"role": m.role, "content": m.content})
    flush()
    return out


def to_openai_tools(tools: list[ModelTool]) -> list[dict[str, Any]]:
    """Convert tools to the `tools=[{"type": "function", ...}]` shape."""
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}
        for t in tools
    ]
