"""``moka chat``: one headless turn with the transcript collected from the core's events."""

from __future__ import annotations

import json
from typing import Any

from moka_shell.config import ApprovalMode
from moka_shell.core.app import MokaApp
from moka_shell.core.chat.history import content_text
from moka_shell.core.mcp.answers import ScriptedAnswers
from moka_shell.errors import UsageError
from moka_shell.paths import Paths
from moka_shell.terminal import line


async def run_chat_turn(paths: Paths, message: str, *, backend: str | None, model: str | None,
                        conversation: str | None, approve: ApprovalMode = "read-only",
                        answers: ScriptedAnswers | None = None) -> tuple[dict[str, Any], bool]:
    """Run one turn; returns (transcript, ok). Nothing waits for a person: a server's question is answered by
    ``answers`` (given up front) or refused, and a call that needs approval fails at once."""
    app = MokaApp(paths, mode="headless", interactive=False, approve=approve, answers=answers)
    events: list[tuple[str, Any]] = []
    app.subscribe(lambda ev, data: events.append((ev, data)))
    await app.start()
    try:
        await app.servers.wait_ready(timeout=30)
        if backend and backend not in app.backends:
            raise UsageError(f"unknown backend {backend!r} (available: {', '.join(sorted(app.backends))})")
        if backend:
            app.config.agent.backend = backend
        if conversation and not app.store.has_conversation(conversation):
            raise UsageError(f"no conversation {conversation!r}")
        cid = app.chat.start_turn(conversation, message, backend=backend, model=model)
        await app.chat.wait(cid)
        messages = app.store.messages(cid)
        # Tool approvals and servers' questions that nobody could answer (both refused at once).
        unanswered = list(app.approvals.unanswered) + list(app.elicitations.unanswered)
        answered = list(answers.answered) if answers is not None else []
    finally:
        await app.stop()
    errors = [d for e, d in events if e == "chat.error"]
    turn_start = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=0)
    lines = []
    for m in messages[turn_start:]:
        if m["role"] == "user":
            lines.append(f"you: {m['content']}")
        elif m["content"]:
            lines.append(f"assistant: {m['content']}")
        for c in m.get("toolCalls", []):
            lines.append(f"tool call: {c['server']}/{line(c['tool'])} {json.dumps(c['arguments'])} [{c['status']}]")
            if c.get("result"):
                lines.append("  result: " + content_text(c["result"]).replace("\n", "\n  "))
            if c.get("error"):
                lines.append(f"  error: {c['error']}")
        if m.get("error"):
            lines.append(f"error: {m['error']}")
    lines += [f"answered: {text}" for text in answered]
    lines += [f"not allowed: {text}" for text in unanswered]
    transcript = {"conversationId": cid, "messages": messages[turn_start:], "errors": errors, "lines": lines,
                  "unanswered": unanswered, "answered": answered}
    return transcript, not errors and not unanswered
